def summarize(rows):
    totals = {}
    for row in rows:
        key = row["name"]
        if key not in totals:
            totals[key] = {"count": 0, "sum": 0}
        totals[key]["count"] += 1
        totals[key]["sum"] += row["value"]
    return sorted(totals.items(), key=lambda item: item[1]["sum"], reverse=True)


def header(title):
    return "# " + title
