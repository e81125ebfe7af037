def summarize(rows):
    total = 0
    count = 0
    largest = None
    for row in rows:
        total += row.amount
        count += 1
        if largest is None or row.amount > largest.amount:
            largest = row
    mean = total / count if count else 0
    return {"total": total, "count": count, "mean": mean, "largest": largest}
