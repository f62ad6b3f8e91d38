#!/usr/bin/env python3
"""Every committed verdict before and after a re-run (scripts/rerun-results.sh): claims with their
means, Welch p and emergence counts; for searches, per cell the seeds in which each claim emerged.

    python3 scripts/compare_results.py OUT [REV]     (REV: the commit holding the old docs/search, default HEAD)
"""
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from script_args import Parser, directory  # noqa: E402


def old_verdict(rev, name):
    try:
        text = subprocess.run(["git", "show", f"{rev}:docs/search/{name}/verdict.json"], check=True,
                              capture_output=True, text=True).stdout
    except subprocess.CalledProcessError:
        return None
    return json.loads(text)


def fmt(x):
    return "-" if x is None else f"{x:.3g}"


def claims(before, after):
    print("| claim | supported | main mean | control mean | Welch p | emerged main | emerged control |")
    print("|---|---|---|---|---|---|---|")
    old = {c["claim"]: c for c in before["claims"]}
    for c in after["claims"]:
        o = old.get(c["claim"])
        def pair(get):
            return f"{get(o) if o else '-'} → {get(c)}"
        print(f"| {c['claim']} | {pair(lambda x: x['supported'])} | "
              f"{pair(lambda x: fmt(x['main']['mean']))} | {pair(lambda x: fmt(x['control']['mean']))} | "
              f"{pair(lambda x: fmt(x['p_value']))} | "
              f"{pair(lambda x: '%d/%d' % (x['main']['emerged'], x['main']['runs']))} | "
              f"{pair(lambda x: '%d/%d' % (x['control']['emerged'], x['control']['runs']))} |")
        if o and o["supported"] != c["supported"]:
            print(f"\n**{c['claim']}: the verdict flipped**\n")


def emerged(before, after):
    totals = {"before": [0, 0, 0], "after": [0, 0, 0]}
    rows = []
    for name in after["variant_order"]:
        a = after["variants"][name]["emerged"]
        b = before["variants"].get(name, {}).get("emerged") if before else None
        keys = ("identification", "high_norm", "sink")
        for i, k in enumerate(keys):
            totals["after"][i] += a[k]
            if b:
                totals["before"][i] += b[k]
        bs = "/".join(str(b[k]) for k in keys) if b else "-"
        as_ = "/".join(str(a[k]) for k in keys)
        rows.append((name, bs, as_))
    print("| cell | emerged id/norm/sink before | after |")
    print("|---|---|---|")
    for name, bs, as_ in rows:
        mark = "" if bs == as_ else " *"
        print(f"| {name} | {bs} | {as_}{mark} |")
    print(f"| **total** | {'/'.join(map(str, totals['before']))} | {'/'.join(map(str, totals['after']))} |")
    return totals


def main(out, rev="HEAD"):
    grand = {"before": [0, 0, 0], "after": [0, 0, 0]}
    for path in sorted(Path(out).glob("*/verdict.json")):
        name = path.parent.name
        after = json.loads(path.read_text())
        before = old_verdict(rev, name)
        print(f"\n### {name} (engine {before.get('engine_version', 1) if before else '-'} → "
              f"{after.get('engine_version')})\n")
        if after["claims"]:
            claims(before, after)
            print()
        t = emerged(before, after)
        if not after["claims"]:
            for k in grand:
                grand[k] = [x + y for x, y in zip(grand[k], t[k])]
    print(f"\nsearch stages, seeds in which each claim emerged (id/norm/sink): "
          f"{'/'.join(map(str, grand['before']))} → {'/'.join(map(str, grand['after']))}")


if __name__ == "__main__":
    parser = Parser(__doc__)
    parser.add_argument("OUT", type=directory, help="the directory of scripts/rerun-results.sh")
    parser.add_argument("REV", nargs="?", default="HEAD", help="the commit holding the old docs/search (default HEAD)")
    args = parser.parse_args()
    main(args.OUT, args.REV)
