def summarize(rows, key, threshold=0):
    totals = {}
    counts = {}
    for row in rows:
        name = row.get(key)
        if name is None:
            continue
        value = row.get("value", 0)
        if value < threshold:
            continue
        totals[name] = totals.get(name, 0) + value
        counts[name] = counts.get(name, 0) + 1
    return {name: totals[name] / counts[name] for name in totals}
