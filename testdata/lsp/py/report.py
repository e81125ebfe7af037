from stats import summarize


def render(rows):
    return "\n".join(f"{k}: {v}" for k, v in summarize(rows, "team").items())
