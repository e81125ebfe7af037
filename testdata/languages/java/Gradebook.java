package edu.example.school;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Grades of the students of one course.
 */
public class Gradebook {
    private final Map<String, List<Integer>> scores = new HashMap<>();
    private final String course;

    public Gradebook(String course) {
        this.course = course;
    }

    public void record(String student, int points) {
        if (points < 0 || points > 100) {
            throw new IllegalArgumentException("points out of range: " + points);
        }
        scores.computeIfAbsent(student, k -> new ArrayList<>()).add(points);
    }

    /** Letter grades of every student with enough results. */
    public Map<String, Character> letters(int minResults, double curve) {
        Map<String, Character> grades = new HashMap<>();
        for (Map.Entry<String, List<Integer>> entry : scores.entrySet()) {
            List<Integer> points = entry.getValue();
            if (points.size() < minResults) {
                continue;
            }
            double sum = 0;
            for (int p : points) {
                sum += p;
            }
            double average = sum / points.size() * curve;
            char letter = average >= 90.0 ? 'A' : average >= 75.0 ? 'B' : average >= 50.0 ? 'C' : 'F';
            grades.put(entry.getKey(), letter);
        }
        System.out.printf("%s: %d graded%n", course, grades.size());
        return grades;
    }

    public List<String> failing() {
        List<String> names = new ArrayList<>();
        for (String student : scores.keySet()) {
            if (best(student) < 50) {
                names.add(student);
            }
        }
        return names;
    }

    private int best(String student) {
        int top = 0;
        for (int p : scores.getOrDefault(student, List.of())) {
            top = Math.max(top, p);
        }
        return top;
    }
}
