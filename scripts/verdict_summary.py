#!/usr/bin/env python3
"""The project's answer across studies: docs/search/verdict.json and the README's headline table.

  python3 scripts/verdict_summary.py [DOCS_SEARCH_DIR] [--corpus PATH]

Reads what each study committed in DOCS_SEARCH_DIR (default docs/search) and writes
DOCS_SEARCH_DIR/verdict.json and verdict.md (the table the README shows). Nothing is typed in by
hand: every figure comes from a study's own file, and a study that has not been run yet is left
out (listed under "missing"):
  p0sink/verdict.json           the headline experiment (firstrecall; main against its controls)
  frlookup_control_convergence/verdict.json   firstrecall-lookup: main against its control, 4000 steps
  no_norm/verdict.json          the architecture change that lets a high norm pay off
  text_phase/results.csv        natural text, T = 16..1024 at 12.3 M tokens per run
  text_long/results.csv         natural text, T = 256..1024 at 123 M tokens per run
  text_controls/verdict.json    natural text at T = 256: BOS, document starts, RoPE, sigmoid
  text_prefix_control/verdict.json   natural text at T = 16: main against the prefix-bidirectional control
  backcopy_nobos/verdict.json   Bigram-Backcopy without BOS and positions, and its controls
  backcopy_long/verdict.json    the same, main and bos trained 4 times longer (4000 steps)
  guo_backcopy/effects.json     Guo et al.'s Bigram-Backcopy replication, with and without BOS

Claims (the seed paper's circuit, and the published setting as the positive control):
  identification  the causal mask alone lets a model find position 0
  high_norm       position 0 gets a high-norm state in a fixed direction (ratio >= 2, p0_cos >= 0.9)
  sink            later heads sink onto position 0 without a BOS token
  bos_sink        with a BOS token, heads sink onto it (where sinks are known to form)
A text setting counts as undecided, not as evidence against, while its held-out loss sits on the
corpus's byte-bigram plateau (within PLATEAU_MARGIN bits/byte of the in-sample bigram entropy,
computed here from the corpus): such a model has not yet learnt to use its context. For the sink
claim every setting also needs a positive control at its budget: a BOS variant that sank in most
runs (an experiment's own BOS variant; `T256-bos` in text_long; for text_phase, text_controls'
`bos`). Without one, no sink on position 0 says nothing about the mask.
"""
import csv
import json
import math
import os
import re
import sys
from collections import Counter, defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from interval import bootstrap, clopper_pearson, finite_or_null  # noqa: E402
from script_args import Parser, directory  # noqa: E402

PLATEAU_MARGIN = 0.15  # bits/byte
HIGH_NORM_RATIO, HIGH_NORM_COS, SINK_EPS = 2.0, 0.9, 0.3


def is_high_norm(ratio, cos):
    """The seed paper's high-norm fixed direction at one block: p0_norm_ratio and p0_cos of the same block."""
    return ratio >= HIGH_NORM_RATIO and cos >= HIGH_NORM_COS

# Experiments whose verdict.json tests claims (main against control; in a search, the main variant's
# emerged counts stand in), the variant with BOS (None: the study has none) and the config that makes it.
EXPERIMENTS = [
    ("p0sink", "firstrecall, T = 16, 4000 steps", ("identification", "high_norm", "sink"), "bos",
     "configs/p0sink.toml"),
    ("frlookup_control_convergence", "firstrecall-lookup, T = 32, 4000 steps", ("identification", "high_norm", "sink"),
     None, "configs/search/frlookup_control_convergence.toml"),
    ("no_norm", "firstrecall without norm layers (y = g x)", ("high_norm", "sink"), "none-bos", "configs/no_norm.toml"),
    ("text_controls", "natural text, T = 256, 12.3 M tokens", ("high_norm", "sink"), "bos", "configs/text_controls.toml"),
    ("text_prefix_control", "natural text, T = 16, 12.3 M tokens, against prefix-bidirectional", ("high_norm",), None,
     "configs/text_prefix_control.toml"),
    ("backcopy_nobos", "Guo et al.'s Bigram-Backcopy, 3 layers, NoPE", ("high_norm", "sink"), "bos",
     "configs/backcopy_nobos.toml"),
    ("backcopy_long", "Guo et al.'s Bigram-Backcopy, 3 layers, NoPE, 4000 steps", ("high_norm", "sink"), "bos",
     "configs/backcopy_long.toml"),
]
CLAIMS = {
    "identification": "the causal mask alone lets a model find position 0",
    "high_norm": "position 0 gets a high-norm state in a fixed direction (ratio >= 2 and p0_cos >= 0.9 at one layer)",
    "sink": "without BOS, later heads sink onto position 0",
    "bos_sink": "with a BOS token, heads sink onto it (the published setting: the positive control)",
}


def interval(values):
    mean, lo, hi = bootstrap(values)
    return {"mean": mean, "lo": None if math.isnan(lo) else lo, "hi": None if math.isnan(hi) else hi,
            "seeds": len(values)}


def count(k, n):
    lo, hi = clopper_pearson(k, n)
    return {"k": k, "n": n, "lo": lo, "hi": hi}


def bigram_entropy(corpus):
    """In-sample conditional entropy of the next byte given the previous one, bits per byte, over
    every text file of the corpus (a directory: its files without the .dat/.u8 indexes)."""
    files = [corpus] if os.path.isfile(corpus) else [
        os.path.join(corpus, f) for f in sorted(os.listdir(corpus))
        if os.path.isfile(os.path.join(corpus, f)) and not f.endswith((".dat", ".u8"))]
    pairs, firsts = Counter(), Counter()
    for path in files:
        with open(path, "rb") as f:
            data = f.read()
        pairs.update(zip(data, data[1:]))
        firsts.update(data[:-1])
    total = sum(pairs.values())
    return -sum(c * math.log2(c / firsts[a]) for (a, _), c in pairs.items()) / total


# ---- the headline experiment and other experiment verdicts ----
def held_at_some_probe(verdict, variant, claim):
    """{"ever": k/n} where the verdict counts the variant's runs in which the claim held at some probe
    (verdicts written since the probe-share columns), else {}."""
    v = verdict["variants"].get(variant, {})
    return {"ever": count(v["ever"][claim], v["runs"])} if claim in v.get("ever", {}) else {}


def experiment_claim(verdict, claim, study, setting):
    c = next(x for x in verdict["claims"] if x["claim"] == claim)
    return {
        "study": study, "setting": setting, "measure": c["metric"],
        "main": {"variant": verdict["main"], "mean": c["main"]["mean"], "lo": c["main"]["lo"], "hi": c["main"]["hi"],
                 "emerged": count(c["main"]["emerged"], c["main"]["runs"]),
                 **held_at_some_probe(verdict, verdict["main"], claim)},
        "control": {"variant": verdict["control"], "mean": c["control"]["mean"], "lo": c["control"]["lo"],
                    "hi": c["control"]["hi"], "emerged": count(c["control"]["emerged"], c["control"]["runs"])},
        "difference": c["difference"], "cohens_d": c["cohens_d"], "p_value": c["p_value"], "test": c["test"],
        "supported": c["supported"],
    }


def sank_any_layer(row):
    """A results.csv row's last probe has a head with alpha_0 > eps in some layer (sink_rate_l* > 0)."""
    return any(float(x) > 0 for key, x in row.items() if key.startswith("sink_rate_l") and finite(x))


def bos_sinks(verdict, bos_variant, results):
    """(runs of the BOS variant with a sink, runs, how counted), or None without a BOS variant. A BOS
    token differs from every other token, so a head can sink onto it from layer 0 on (Guo et al.'s
    1-layer dormant head does); position 0 without BOS cannot be told apart in layer 0, so for it the
    claim is about later layers. So where the runs' results.csv is committed, a BOS run counts when
    its last probe has a sinking head (alpha_0 > eps) in any layer; otherwise the verdict's count of
    runs where a sink emerged (layers after the first)."""
    v = verdict["variants"].get(bos_variant)
    if not v:
        return None
    if results:
        with open(results, newline="") as f:
            runs = [r for r in csv.DictReader(f) if r["variant"] == bos_variant]
        return sum(sank_any_layer(r) for r in runs), len(runs), "any layer, last probe"
    return v["emerged"]["sink"], v["runs"], "emerged after layer 0"


def bos_control(verdict, bos_variant, label, results):
    """Whether the experiment's BOS variant (named label in the note) sank in most of its runs (None:
    it has none), and a note saying so: the positive control of the sink claim at its budget."""
    counted = bos_sinks(verdict, bos_variant, results)
    if counted is None:
        return None, f"{label} does not exist" if bos_variant else "the study has no BOS variant"
    k, n, how = counted
    return k > n / 2, f"{label} sank in {k}/{n} runs" + (f" ({how})" if results else "")


def variant_emerged(verdict, variant, claim, study, setting):
    """The variant's runs where the claim emerged (held from some probe to the end) and, where the
    verdict counts them (verdicts written since the probe-share columns), the runs where it held at
    some probe: a state that came and went."""
    v = verdict["variants"][variant]
    main = {"variant": variant, "emerged": count(v["emerged"][claim], v["runs"]),
            **held_at_some_probe(verdict, variant, claim)}
    return {"study": study, "setting": setting, "measure": f"runs where {claim} emerged", "main": main}


# ---- natural text: one row per run of results.csv ----
def finite(text):
    try:
        return math.isfinite(float(text))
    except (TypeError, ValueError):
        return False


def text_runs(path, cells_path):
    """Final metrics per run from results.csv; the held-out loss per variant from cells.csv (the mean
    over seeds at the last token count: results.csv does not carry it)."""
    heldout, last_tokens = {}, {}
    with open(cells_path, newline="") as f:
        for c in csv.DictReader(f):
            if c["metric"] == "heldout_bpb" and int(c["tokens"]) >= last_tokens.get(c["variant"], -1):
                last_tokens[c["variant"]] = int(c["tokens"])
                heldout[c["variant"]] = float(c["mean"])
    runs = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            layers = sorted(int(k.rsplit("_l", 1)[1]) for k in r if k.startswith("p0_norm_ratio_l"))
            ratio = [float(r[f"p0_norm_ratio_l{l}"]) for l in layers]
            cos = [float(r[f"p0_cos_l{l}"]) for l in layers]
            best = max(range(len(layers)), key=lambda i: ratio[i])
            runs.append({
                "variant": r["variant"], "T": int(re.match(r"T(\d+)", r["variant"]).group(1)),
                "heldout_bpb": heldout.get(r["variant"], float("nan")),
                "max_ratio": ratio[best], "cos_there": cos[best],
                "high_norm": any(is_high_norm(x, y) for x, y in zip(ratio, cos)),
                # Gu et al.'s Sink_1 of the model: the share of all heads (every layer has H) with alpha_1 > eps
                "sink_1": sum(float(r[f"sink_1_l{l}"]) for l in layers) / len(layers),
                # the first step from which the sink held to the end; blank when it never did
                "emerged_sink": finite(r["emerged_sink"]),
                # a sinking head in any layer at the last probe (a BOS control's test: see bos_control)
                "sank_any_layer": sank_any_layer(r),
                # held at some probe, to the end or not (results written since the probe-share columns)
                "ever": {claim: float(r[f"{claim}_probes"]) > 0 for claim in ("high_norm", "sink")
                         if finite(r.get(f"{claim}_probes"))},
            })
    return runs


def is_bos_control(variant):
    return variant.endswith("-bos")


def text_positive_control(study, runs, docs):
    """Whether the setting's BOS control sank in most of its runs (None: no such control run yet), and
    where that was read. A text setting can only decide the sink claim against a control that sank:
    if BOS gets no sink at the budget, neither result says anything about position 0."""
    own = [r for r in runs if is_bos_control(r["variant"])]
    if own:
        k = sum(r["sank_any_layer"] for r in own)
        return k > len(own) / 2, f"{study} {own[0]['variant']} sank in {k}/{len(own)} runs (any layer, last probe)"
    controls = os.path.join(docs, "text_controls", "verdict.json")
    if study == "text_phase" and os.path.isfile(controls):  # the same budget (12.3 M tokens), at T = 256
        results = os.path.join(docs, "text_controls", "results.csv")
        sank, note = bos_control(json.load(open(controls)), "bos", "text_controls bos (T = 256)",
                                 results if os.path.isfile(results) else None)
        if sank is not None:
            return sank, note
    return None, "no BOS control at this budget yet"


def held_at_some_probe_runs(rs):
    """Per claim, the runs where it held at some probe, over the runs that record it (results written
    before the probe-share columns do not)."""
    counts = {}
    for claim in ("high_norm", "sink"):
        known = [r for r in rs if claim in r["ever"]]
        if known:
            counts[claim] = count(sum(r["ever"][claim] for r in known), len(known))
    return counts


def text_evidence(runs, study, tokens, plateau, control):
    """One row per no-BOS variant: its figures and whether it decides each claim (high_norm: past the
    bigram plateau; sink: that, and the BOS control sank)."""
    by_variant = defaultdict(list)
    for r in runs:
        if not is_bos_control(r["variant"]):
            by_variant[r["variant"]].append(r)
    control_sank, control_note = control
    rows = []
    for variant in sorted(by_variant, key=lambda v: by_variant[v][0]["T"]):
        rs = by_variant[variant]
        T = rs[0]["T"]
        bpb = {"mean": rs[0]["heldout_bpb"]}  # per variant, not per run
        known = math.isfinite(bpb["mean"]) and math.isfinite(plateau)
        learnt = known and bpb["mean"] < plateau - PLATEAU_MARGIN
        reason = "" if learnt else "on the bigram plateau" if known else "held-out loss or bigram entropy unknown"
        sink_reason = reason or ("" if control_sank else f"no sink with BOS either: {control_note}"
                                 if control_sank is False else control_note)
        rows.append({"study": study, "setting": f"T = {T}, {tokens} tokens per run", "T": T, "variant": variant,
                     "heldout_bits_per_byte": bpb, "past_bigram_plateau": learnt, "positive_control": control_note,
                     "max_p0_norm_ratio": interval([r["max_ratio"] for r in rs]),
                     "p0_cos_there": interval([r["cos_there"] for r in rs]),
                     # "<claim>_runs": status() and markdown() read them by the claim's name
                     "high_norm_runs": count(sum(r["high_norm"] for r in rs), len(rs)),
                     "sink_1": interval([r["sink_1"] for r in rs]),
                     "sink_runs": count(sum(r["emerged_sink"] for r in rs), len(rs)),
                     "ever_runs": held_at_some_probe_runs(rs),
                     "decides": {"high_norm": learnt, "sink": not sink_reason},
                     "undecided_because": {"high_norm": reason, "sink": sink_reason}})
    return rows


def guo_effect(effects, name, study, setting):
    e = next((x for x in effects["effects"] if x["effect"].startswith(name)), None)
    if e is None:
        return None
    return {"study": study, "setting": setting, "measure": e["quantity"], "comparison": e["comparison"],
            "difference": {"mean": e["mean"], "lo": e["lo"], "hi": e["hi"]}, "seeds": e["seeds"],
            "cohens_d": e["cohens_d"],
            # files written before one-arm effects had a test name their p "permutation_p"
            "p_value": e.get("p", e.get("permutation_p")), "test": e.get("test", "exact permutation"),
            "reproduced": e["reproduced"]}


def status(claim, evidence):
    """The claim's status from its evidence, by the rule stated in verdict.json."""
    if claim == "identification":  # the headline experiment's test
        return "supported" if any(e.get("supported") for e in evidence) else "not supported"
    if claim == "bos_sink":
        ok = [e for e in evidence if ("emerged" in e.get("main", {}) and e["main"]["emerged"]["lo"] > 0.5)
              or e.get("reproduced") == "yes"]
        return "supported" if ok else "not shown"
    positive = []
    undecided = []
    for e in evidence:
        if e.get("supported") or e.get("reproduced") == "yes" or (e.get("main", {}).get("emerged", {}).get(
                "k", 0) > e.get("main", {}).get("emerged", {}).get("n", 0) / 2):
            positive.append(e)
        if "decides" in e and not e["decides"][claim]:
            undecided.append(e)
        runs = e.get(f"{claim}_runs")
        if runs and "decides" in e and e["decides"][claim] and runs["k"] > runs["n"] / 2:
            positive.append(e)
    if positive:
        return "supported in " + ", ".join(sorted({e["study"] for e in positive}))
    # held at some probe in most runs, but not to the end: said beside whatever the status is
    def most(c):
        return c is not None and c["k"] > c["n"] / 2

    def ever(e):  # an experiment's main variant, or a text setting's runs
        return e.get("main", {}).get("ever") or e.get("ever_runs", {}).get(claim)

    def to_the_end(e):  # held from some probe to the end (a text setting: at the last probe)
        return e.get("main", {}).get("emerged") or e.get(f"{claim}_runs")
    came_and_went = sorted({e["study"] for e in evidence if most(ever(e)) and not most(to_the_end(e))})
    transient = f"; transient in {', '.join(came_and_went)} (held in most runs for part of training, not to its end)" \
        if came_and_went else ""
    return status_without_support(claim, evidence, undecided) + transient


def status_without_support(claim, evidence, undecided):
    if undecided:
        where = defaultdict(list)
        for e in undecided:  # text settings by context length, experiments by their setting
            where[(e["study"], e["undecided_because"][claim])].append(str(e["T"]) if "T" in e else e["setting"])
        decided = "" if len(undecided) == len(evidence) else "not supported where decidable; "
        return decided + "not decidable at " + "; ".join(
            f"{'T = ' if ts[0].isdigit() else ''}{', '.join(ts)} ({study}: {reason})"
            for (study, reason), ts in where.items())
    return "not supported"


def main(argv):
    parser = Parser(__doc__)
    parser.add_argument("DOCS_SEARCH_DIR", nargs="?", default="docs/search", type=directory,
                        help="the studies' committed results (default docs/search)")
    parser.add_argument("--corpus", default="/usr/share/games/fortunes",
                        help="the text task's corpus (a file or a directory of files), for its byte-bigram "
                             "plateau (default: Debian's fortunes)")
    args = parser.parse_args(argv[1:])
    docs, corpus = args.DOCS_SEARCH_DIR, args.corpus

    def path(*parts):
        p = os.path.join(docs, *parts)
        return p if os.path.isfile(p) else None

    evidence = {c: [] for c in CLAIMS}
    missing, engines = [], set()
    for study, setting, claims, bos_variant, _config in EXPERIMENTS:
        if not path(study, "verdict.json"):
            missing.append(f"{study}/verdict.json")
            continue
        v = json.load(open(path(study, "verdict.json")))
        engines.add(v["engine_version"])
        tested = {c["claim"] for c in v["claims"]}
        for claim in claims:
            if claim in tested:
                evidence[claim].append(experiment_claim(v, claim, study, setting))
            elif "main" in v["variants"]:  # a search (no claim tested): its main variant's counts; the
                # other variants change more than the mask (positions, attention function, BOS)
                evidence[claim].append(variant_emerged(v, "main", claim, study, setting))
            else:
                continue
            if claim == "sink":  # a missing sink only counts where BOS sank at the same budget
                sank, note = bos_control(v, bos_variant, f"{study} {bos_variant}", path(study, "results.csv"))
                evidence[claim][-1].update({
                    "positive_control": note, "decides": {"sink": bool(sank)},
                    "undecided_because": {"sink": "" if sank else f"no sink with BOS either: {note}"
                                          if sank is False else note}})
        if bos_variant in v["variants"]:
            k, n, how = bos_sinks(v, bos_variant, path(study, "results.csv"))
            evidence["bos_sink"].append({"study": study, "setting": setting + ", + BOS",
                                         "measure": f"runs with a sink, {how}",
                                         "main": {"variant": bos_variant, "emerged": count(k, n)}})
    plateau = bigram_entropy(corpus) if os.path.exists(corpus) else float("nan")
    for study, tokens in (("text_phase", "12.3 M"), ("text_long", "123 M")):
        if path(study, "results.csv") and path(study, "cells.csv"):
            runs = text_runs(path(study, "results.csv"), path(study, "cells.csv"))
            rows = text_evidence(runs, study, tokens, plateau, text_positive_control(study, runs, docs))
            for claim in ("high_norm", "sink"):
                evidence[claim] += rows
            bos = defaultdict(list)
            for r in runs:
                if is_bos_control(r["variant"]):
                    bos[r["variant"]].append(r)
            for variant, rs in bos.items():
                evidence["bos_sink"].append({
                    "study": study, "setting": f"T = {rs[0]['T']} with BOS, {tokens} tokens per run",
                    "measure": "runs with a sink, any layer, last probe",  # as bos_sinks counts, and the control
                    "main": {"variant": variant, "emerged": count(sum(r["sank_any_layer"] for r in rs), len(rs))}})
        else:
            missing.append(f"{study}/results.csv")
    if path("guo_backcopy", "effects.json"):
        g = json.load(open(path("guo_backcopy", "effects.json")))
        # In 3 layers the head may form in any layer (seed 2's in the middle one): the largest over layers
        # where the effects file has it (files from before it have the last layer only).
        for names, claim, setting in (
                (["dormant head, 1 layer"], "bos_sink", "Guo et al.'s Bigram-Backcopy, 1 layer, BOS"),
                (["dormant head, 3 layers (largest", "dormant head, 3 layers"], "bos_sink",
                 "Guo et al.'s Bigram-Backcopy, 3 layers, BOS"),
                (["without BOS and positions, position 0 takes BOS's role (3 layers, largest", "without BOS"], "sink",
                 "Guo et al.'s Bigram-Backcopy, 3 layers, no BOS, NoPE")):
            e = next(filter(None, (guo_effect(g, name, "guo_backcopy", setting) for name in names)), None)
            if e:
                evidence[claim].append(e)
    else:
        missing.append("guo_backcopy/effects.json")

    claims = [{"claim": c, "statement": s, "status": status(c, evidence[c]), "evidence": evidence[c]}
              for c, s in CLAIMS.items()]
    out = {"engine_versions": sorted(engines), "bigram_entropy_bits_per_byte": plateau,
           "plateau_margin_bits_per_byte": PLATEAU_MARGIN, "missing": missing, "claims": claims,
           "rule": ("identification: the headline experiment's test (main against the prefix-bidirectional "
                    "control). high_norm and sink: supported in a study where the experiment's test supports it, "
                    "or where it emerged in most runs of a setting (a text setting only once its held-out loss is past "
                    "the bigram plateau; and for sink, in every study, only where a BOS variant at the same budget "
                    "sank in most runs, in any layer where the runs' results.csv shows it; otherwise not "
                    "decidable); \"emerged\" = held from some probe to the end, and a claim that held at some probe "
                    "in most runs of a study but not to the end is called transient there. bos_sink: "
                    "supported where the Clopper-Pearson interval of the BOS runs with a sink lies above 0.5. A Guo et al. "
                    "effect counts for its claim (the dormant head for bos_sink, position 0 without BOS for sink) "
                    "when it is reproduced at enough seeds for p < 0.05 (guo_backcopy/effects.md).")}
    with open(os.path.join(docs, "verdict.json"), "w") as f:
        json.dump(finite_or_null(out), f, indent=1, allow_nan=False)
        f.write("\n")
    with open(os.path.join(docs, "verdict.md"), "w") as f:
        f.write(markdown(out))
    print(f"wrote {docs}/verdict.json and verdict.md; the README's summary table:\n")
    print("\n".join(summary_table(out)))
    return 0


def fmt_number(x, spec):
    return "-" if x is None or x != x else format(x, spec)


def fmt_interval(m, digits=2):
    if m is None:
        return "-"
    lo, hi = m.get("lo"), m.get("hi")
    if lo is None or hi is None or lo != lo or hi != hi or lo == hi:
        return f"{m['mean']:.{digits}f}"
    return f"{m['mean']:.{digits}f} [{lo:.{digits}f}, {hi:.{digits}f}]"


def fmt_count(c):
    return f"{c['k']}/{c['n']} [{c['lo']:.2f}, {c['hi']:.2f}]"


def summary_table(v):
    lines = ["| claim | status | settings (studies) |", "|---|---|---|"]
    for c in v["claims"]:
        studies = sorted({e["study"] for e in c["evidence"]})
        lines.append(f"| **{c['claim']}**: {c['statement']} | {c['status']} | {len(c['evidence'])} "
                     f"({', '.join(studies) or 'none yet'}) |")
    return lines


def markdown(v):
    lines = ["# The answer across studies", "",
             "Written by `python3 scripts/verdict_summary.py` from each study's committed files (verdict.json "
             "beside this file holds every figure). Rule: " + v["rule"], "", "## Summary", ""]
    lines += summary_table(v)
    lines += ["", "## Evidence", "",
              "Means [95% bootstrap percentile interval over seeds]; counts k/n [Clopper-Pearson 95%].", "",
              "| claim | status | study and setting | evidence |", "|---|---|---|---|"]
    for c in v["claims"]:
        first = True
        for e in c["evidence"]:
            if "difference" in e and "main" in e:  # an experiment's test
                ev = (f"{e['measure']}: {e['main']['variant']} {fmt_interval(e['main'])} against {e['control']['variant']} "
                      f"{fmt_interval(e['control'])}; difference {fmt_interval(e['difference'])}, "
                      f"d = {fmt_number(e['cohens_d'], '.2f')}, p = {fmt_number(e['p_value'], '.2g')}; emerged {fmt_count(e['main']['emerged'])} against "
                      f"{fmt_count(e['control']['emerged'])}")
                if "ever" in e["main"]:
                    ev += f"; {e['main']['variant']} held at some probe, to the end or not: {fmt_count(e['main']['ever'])}"
            elif "emerged" in e.get("main", {}):
                ev = f"{e['measure']} ({e['main']['variant']}): {fmt_count(e['main']['emerged'])}"
                if "ever" in e["main"]:
                    ev += f"; held at some probe, to the end or not: {fmt_count(e['main']['ever'])}"
            elif "comparison" in e:
                p, d = e["p_value"], e["cohens_d"]
                tested = p is not None and p == p and min(e["seeds"]) >= 2
                ev = (f"{e['measure']}, {e['comparison']}: {fmt_interval(e['difference'], 3)}"
                      + (f", d = {fmt_number(d, '.2f')}, p = {p:.2g} ({e['test']})" if tested else "")
                      + f" over {'/'.join(map(str, e['seeds']))} seeds: {e['reproduced']}")
            else:  # a text setting
                key = "sink_1" if c["claim"] == "sink" else "max_p0_norm_ratio"
                runs = e[f"{c['claim']}_runs"]
                ev = (f"{'Sink_1' if key == 'sink_1' else 'max p0_norm_ratio'} {fmt_interval(e[key])}"
                      + ("" if key == "sink_1" else f" (p0_cos {fmt_interval(e['p0_cos_there'])})")
                      + f"; runs where it {'emerged' if key == 'sink_1' else 'held at the last probe'} {fmt_count(runs)}"
                      + (f"; held at some probe, to the end or not: {fmt_count(e['ever_runs'][c['claim']])}"
                         if c["claim"] in e.get("ever_runs", {}) else "")
                      + "; held-out "
                      f"{fmt_number(e['heldout_bits_per_byte']['mean'], '.2f')} bits/byte"
                      + ("" if e["decides"][c["claim"]] else f" ({e['undecided_because'][c['claim']]}: not decidable)"))
            if "decides" in e and "T" not in e:  # an experiment's row judged against its own BOS variant
                ev += (f"; positive control: {e['positive_control']}" if e["decides"][c["claim"]]
                       else f" ({e['undecided_because'][c['claim']]}: not decidable)")
            lines.append(f"| {c['claim'] if first else ''} | {c['status'] if first else ''} | {e['study']}: "
                         f"{e['setting']} | {ev} |")
            first = False
        if first:
            lines.append(f"| {c['claim']} | {c['status']} | (no study yet) | |")
    if v["missing"]:
        lines += ["", "Not run yet: " + ", ".join(v["missing"]) + "."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main(sys.argv))
