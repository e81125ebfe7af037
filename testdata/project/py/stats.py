"""Summary statistics."""


def summarize(values, precision=2):
    total = 0
    count = 0
    smallest = None
    largest = None
    for value in values:
        total += value
        count += 1
        if smallest is None or value < smallest:
            smallest = value
        if largest is None or value > largest:
            largest = value
    mean = round(total / count, precision) if count else None
    return {"mean": mean, "min": smallest, "max": largest, "count": count}
