"""The rounds of a bench-*.sh run and their min / median / max, for the scripts' reports."""
import json
import statistics


class Rounds:
    """The result lines (JSON, one per round, each with its "tree") of one run, by tree."""

    def __init__(self, path, trees):
        self.rows = [json.loads(l) for l in open(path)]
        self.by = {t: [r for r in self.rows if r["tree"] == t] for t in trees}

    def mmm(self, t, key):
        """(min, median, max) of key over tree t's rounds, None when no round has it."""
        v = [r[key] for r in self.by[t] if r.get(key) is not None]
        return (min(v), statistics.median(v), max(v)) if v else None

    def cell(self, t, key, fmt):
        """mmm as "min / median / max", each value formatted with fmt."""
        m = self.mmm(t, key)
        return "n/a" if m is None else " / ".join(fmt.format(x) for x in m)


def print_table(table):
    """Prints rows of cells (the first row the header) as aligned columns, a rule under the header."""
    w = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    for i, r in enumerate(table):
        print("  " + "  ".join(c.ljust(w[j]) for j, c in enumerate(r)).rstrip())
        if i == 0:
            print("  " + "  ".join("-" * x for x in w))
