"""Reading run records (trace.csv, heads.csv) and writing the numbers a gnuplot script draws, for the
study scripts in scripts/."""
import csv


def read_csv(path):
    """Every row of a CSV file as a dict by its header."""
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def number(text):
    """A CSV cell as a float: an empty or missing cell (an undefined number in p0sim's results) is NaN."""
    return float(text) if text not in ("", None) else float("nan")


def datablock(name, columns):
    """A gnuplot datablock $name holding the columns side by side, each number as Python prints it."""
    lines = [f"${name} << EOD"]
    for row in zip(*columns):
        lines.append(" ".join(repr(v) for v in row))
    lines.append("EOD")
    return "\n".join(lines)
