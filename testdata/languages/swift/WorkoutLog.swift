import Foundation

struct Workout: Codable {
    let kind: String
    let minutes: Int
    let distanceKm: Double?
    let date: Date
}

enum LogError: Error {
    case tooLong(Int)
    case unknownKind(String)
}

/// Keeps the workouts of one athlete and sums them up per week.
final class WorkoutLog {
    private(set) var workouts: [Workout] = []
    let athlete: String
    static let kinds: Set<String> = ["run", "ride", "swim"]

    init(athlete: String) {
        self.athlete = athlete
    }

    func add(_ workout: Workout) throws {
        guard Self.kinds.contains(workout.kind) else {
            throw LogError.unknownKind(workout.kind)
        }
        if workout.minutes > 600 {
            throw LogError.tooLong(workout.minutes)
        }
        workouts.append(workout)
    }

    /// Minutes and kilometres of one week, with the pace of the runs.
    func weeklySummary(from start: Date, calendar: Calendar = .current) -> String {
        let end = calendar.date(byAdding: .day, value: 7, to: start)!
        var minutes = 0
        var kilometres = 0.0
        var runMinutes = 0
        for workout in workouts where workout.date >= start && workout.date < end {
            minutes += workout.minutes
            kilometres += workout.distanceKm ?? 0
            if workout.kind == "run" {
                runMinutes += workout.minutes
            }
        }
        let pace = kilometres > 0 ? Double(runMinutes) / kilometres : 0
        let hours = minutes / 60
        return "\(athlete): \(hours)h \(minutes % 60)min, \(String(format: "%.1f", kilometres)) km, pace \(pace)"
    }

    func longest(of kind: String) -> Workout? {
        workouts
            .filter { $0.kind == kind }
            .max { $0.minutes < $1.minutes }
    }
}
