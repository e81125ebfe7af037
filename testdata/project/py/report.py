import sys


def describe(samples, digits=2):
    acc = 0
    n = 0
    lo = None
    hi = None
    for s in samples:
        acc += s
        n += 1
        if lo is None or s < lo:
            lo = s
        if hi is None or s > hi:
            hi = s
    mean = round(acc / n, digits) if n else None
    return {"mean": mean, "min": lo, "max": hi, "count": n}


if __name__ == "__main__":
    print(describe(float(x) for x in sys.argv[1:]))
