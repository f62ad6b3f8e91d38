"""The study scripts that turn run directories into docs/search tables: scripts/text_phase.py
(phase diagram of the text task), scripts/experiment_curves.py (an experiment's curves over training),
scripts/guo_figures.py (Guo et al.'s effects over seeds) and
scripts/interval.py (the interval and tests they print), on run directories written here with known
numbers."""
import csv
import itertools
import json
import math
import os
import random
import subprocess
import sys
from pathlib import Path

SCRIPTS = Path(os.environ["P0SIM_SOURCE_DIR"]) / "scripts"
sys.path.insert(0, str(SCRIPTS))
from interval import (bootstrap, bootstrap_difference, clopper_pearson, cohens_d, one_sample_test,  # noqa: E402
                      permutation_p, student_t_p)

TRACE_HEADER = ["step", "layer", "p0_norm_ratio", "p0_cos", "massive_ratio", "massive_ratio_rest", "sink_1", "loss"]


def write_run(root, variant, seed, T, B, layers_by_step):
    run = root / f"variant={variant}" / f"seed-{seed}"
    run.mkdir(parents=True)
    with open(run / "trace.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(TRACE_HEADER)
        for step, layers in layers_by_step.items():
            for layer, (ratio, cos, massive, rest, sink1, loss) in enumerate(layers):
                w.writerow([step, layer, ratio, cos, massive, rest, sink1, loss])
    summary = {"config": {"seq_len": T, "batch": B}, "steps": max(layers_by_step),
               "text": {"heldout_bits_per_byte": 2.5 + seed / 10, "unigram_bits_per_byte": 4.76}}
    (run / "summary.json").write_text(json.dumps(summary))


def test_the_phase_diagram_reads_gu_sink1_as_the_fraction_of_all_heads_and_the_largest_ratio(tmp_path):
    runs = tmp_path / "runs"
    # two layers; at step 10 layer 0 has Sink_1 0.5 and layer 1 0.0: Sink_1 of the model = 0.25.
    for seed, extra in ((0, 0.0), (1, 0.2)):
        write_run(runs, "T16", seed, 16, 8, {
            0: [(1.0, 0.1, 3.0, 4.0, 0.0, math.log(2) * 8), (1.0, 0.1, 3.0, 4.0, 0.0, math.log(2) * 8)],
            10: [(1.5 + extra, 0.3, 5.0, 6.0, 0.5, math.log(2) * 3), (2.5 + extra, 0.9, 7.0, 5.0, 0.0, math.log(2) * 3)],
        })
    write_run(runs, "T32", 0, 32, 4, {10: [(0.5, 0.2, 1.0, 2.0, 0.25, math.log(2))]})
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, str(SCRIPTS / "text_phase.py"), str(out), str(runs)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    cells = {(r["metric"], r["variant"], int(r["tokens"])): r for r in csv.DictReader(open(out / "cells.csv"))}
    # tokens = step x batch x T; means over the two seeds
    assert float(cells[("sink_1", "T16", 10 * 8 * 16)]["mean"]) == 0.25
    assert float(cells[("p0_norm_ratio", "T16", 1280)]["mean"]) == 2.6  # largest block, mean of 2.5 and 2.7
    assert float(cells[("p0_cos", "T16", 1280)]["mean"]) == 0.9  # at the block of that ratio
    assert float(cells[("massive_p0", "T16", 1280)]["mean"]) == 7.0
    assert float(cells[("heldout_bpb", "T16", 1280)]["mean"]) == 3.0
    assert cells[("sink_1", "T32", 10 * 4 * 32)]["seeds"] == "1"
    table = (out / "table.md").read_text()
    assert "| T16 | 16 | 2 |" in table and "| T32 | 32 | 1 |" in table
    assert table.index("| T16 |") < table.index("| T32 |")  # columns ordered by T
    for metric in ("sink_1", "p0_norm_ratio", "p0_cos", "massive_p0", "massive_rest", "heldout_bpb"):
        assert (out / f"heat_{metric}.png").stat().st_size > 1000
    # The curves: a panel per metric, a line per variant, drawn from the same cells as the heat maps.
    curves = (out / "curves.gp").read_text()
    assert curves.count("with linespoints") == 6 * 2 and '"T16"' in curves and '"T32"' in curves
    # p0_norm_ratio: at 0 tokens T16's mean and no T32 probe; at 1280 tokens both (means over seeds)
    assert "\n0 1 nan\n" in curves and "\n0.00128 2.6 0.5\n" in curves
    assert (out / "curves.png").stat().st_size > 1000
    # runs without sink_rate or heads.csv: those columns of the per-run table are blank, not zero
    seed_rows = [line for line in (out / "seeds.md").read_text().splitlines() if line.startswith("| T")]
    assert len(seed_rows) == 3 and all(r.split("|")[4:7] == [" – ", " – ", " – "] for r in seed_rows)


def test_the_per_seed_table_counts_sinking_heads_and_finds_the_head_and_probe_most_on_key_0(tmp_path):
    runs = tmp_path / "runs"
    # two layers of 4 heads
    write_run(runs, "T16", 0, 16, 8, {
        # the criterion holds at the smaller ratio's block (layer 1), not at the largest's
        0: [(2.2, 0.5, 3.0, 4.0, 0.0, 1.0), (2.05, 0.93, 3.0, 4.0, 0.0, 1.0)],
        10: [(2.4, 0.95, 5.0, 6.0, 0.25, 1.0), (2.1, 0.85, 7.0, 5.0, 0.0, 1.0)],  # criterion holds (layer 0)
        20: [(1.5, 0.5, 9.0, 8.0, 0.25, 1.0), (1.8, 0.97, 4.0, 6.5, 0.0, 1.0)],
    })
    run = runs / "variant=T16" / "seed-0"
    # sinking heads count by sink_rate (heads whose window-mean attention to key 0 exceeds eps), not by
    # Sink_1: at the last probe 2 of layer 0's 4 heads and 1 of layer 1's, so 3 of 8
    trace = list(csv.DictReader(open(run / "trace.csv")))
    sink_rate = {("20", "0"): 0.5, ("20", "1"): 0.25}
    with open(run / "trace.csv", "w", newline="") as f:
        w = csv.DictWriter(f, TRACE_HEADER + ["sink_rate"])
        w.writeheader()
        for r in trace:
            w.writerow(dict(r, sink_rate=sink_rate.get((r["step"], r["layer"]), 0.0)))
    summary = json.loads((run / "summary.json").read_text())
    summary["config"].update(heads=4, layers=2)
    (run / "summary.json").write_text(json.dumps(summary))
    with open(run / "heads.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["step", "layer", "head", "attn_to_0"])
        for step, best in ((0, (1, 2, 0.9)), (10, (0, 1, 0.6)), (20, (1, 3, 0.45))):
            for layer, head in itertools.product(range(2), range(4)):
                w.writerow([step, layer, head, best[2] if (layer, head) == best[:2] else 0.1])
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, str(SCRIPTS / "text_phase.py"), str(out), str(runs)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    row = [c.strip() for c in (out / "seeds.md").read_text().splitlines()[-1].split("|")[1:-1]]
    assert row[:4] == ["T16", "0", "2.500", "3 of 8"]
    assert row[4] == "0.450 (layer 1, head 3)"
    assert row[5] == "0.600 (step 10, layer 0)"  # the initialisation (step 0) is not a trained probe
    assert row[6] == "1.80 (0.97)"  # the largest block's ratio at the last probe and its cosine
    assert row[7] == "2.40 (step 10, 0.95)"
    assert row[8] == "2 of 3" and row[9] == "9.0 / 8.0"


def test_the_phase_diagram_refuses_a_directory_without_runs(tmp_path):
    proc = subprocess.run([sys.executable, str(SCRIPTS / "text_phase.py"), str(tmp_path / "o"), str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "RUNS_DIR" in proc.stderr


def test_the_bootstrap_interval_stays_within_the_values_and_repeats():
    values = [0.0, 1.0, 1.0, 1.0, 0.9]
    mean, lo, hi = bootstrap(values)
    assert mean == 0.78
    assert 0.0 <= lo <= mean <= hi <= 1.0
    assert bootstrap(values) == (mean, lo, hi)
    assert math.isnan(bootstrap([0.5])[1])


def scale_table_rows(stdout):
    return [line.split("|")[1:-1] for line in stdout.splitlines() if line.startswith("| ") and "variant" not in line]


def test_the_scale_table_runs_scale_p0_on_every_seed_of_an_experiment(tmp_path):
    p0sim = os.environ["P0SIM_BINARY"]
    golden = Path(os.environ["P0SIM_SOURCE_DIR"]) / "tests" / "golden" / "experiment.toml"
    exp = tmp_path / "exp"
    subprocess.run([p0sim, "experiment", "--config", str(golden), "--seeds", "2", "--variants",
                    "main,prefix-bidirectional", "--out", str(exp)], check=True, capture_output=True, timeout=300)
    proc = subprocess.run([sys.executable, str(SCRIPTS / "scale_p0_table.py"), p0sim, str(exp)], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "after block 0" in proc.stdout
    rows = scale_table_rows(proc.stdout)
    assert [r[0].strip() for r in rows] == ["main", "prefix-bidirectional"]
    for r in rows:
        assert r[1].strip() == "2"
        lo_hi = r[2].split("[")[1].rstrip("] ").split(",")
        mean = float(r[2].split("[")[0])
        assert float(lo_hi[0]) <= mean <= float(lo_hi[1])
        # block 1 reads position 0 after block 0 through its norm, but the scale moves the keys of
        # later positions too (their attention mixes position 0's state): some change, never negative
        assert float(r[6].split("[")[0]) >= 0
    # after the last block no layer is left to attend: the column is NaN, the loss still moves
    last = subprocess.run([sys.executable, str(SCRIPTS / "scale_p0_table.py"), "--layer", "1", p0sim, str(exp), "main"],
                          capture_output=True, text=True, timeout=300)
    assert last.returncode == 0, last.stderr
    (row,) = scale_table_rows(last.stdout)
    assert row[6].strip().startswith("nan")
    assert "after block 1" in last.stdout
    for args in (["--layer", "9"], ["--layer", "x"]):
        bad = subprocess.run([sys.executable, str(SCRIPTS / "scale_p0_table.py"), *args, p0sim, str(exp), "main"],
                             capture_output=True, text=True, timeout=60)
        assert bad.returncode == 2 and bad.stderr.count("\n") == 1, bad.stderr
    bad = subprocess.run([sys.executable, str(SCRIPTS / "scale_p0_table.py"), p0sim, str(tmp_path)],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "usage" in bad.stderr


def test_the_permutation_test_is_exact_for_five_against_five():
    # Completely separated samples: only the observed split and its mirror reach the difference.
    assert permutation_p([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]) == 2 / 252
    # [1, 3] against [2, 4]: observed |2 - 3| = 1; of the 6 splits of {1, 2, 3, 4} into pairs, those
    # with |difference| >= 1 are {1,2}, {1,3}, {2,4} and {3,4} (differences 2, 1, 1, 2), not {1,4}, {2,3}
    assert permutation_p([1.0, 3.0], [2.0, 4.0]) == 4 / 6
    # 3 against 3, every split enumerated here: only the observed split and its mirror reach the
    # observed |mean difference| of 3, so p = 2/20.
    a, b = [0.0, 1.0, 2.0], [3.0, 4.0, 5.0]
    pooled, count, hits = a + b, 0, 0
    for idx in itertools.combinations(range(6), 3):
        rest = [pooled[i] for i in range(6) if i not in idx]
        count += 1
        hits += abs(sum(pooled[i] for i in idx) / 3 - sum(rest) / 3) >= 3.0
    assert permutation_p(a, b) == hits / count == 0.1
    assert cohens_d([1.0, 2.0, 3.0], [2.0, 3.0, 4.0]) == -1.0
    assert math.isnan(cohens_d([1.0], [2.0, 3.0]))


def test_the_t_test_gives_the_tabled_critical_values_and_the_effect_size_of_a_change():
    # the two-sided 5% critical values of Student's t (any table): p = 0.05 at each
    for t, df in ((12.7062047, 1), (4.30265273, 2), (3.18244631, 3), (2.77644511, 4), (2.26215716, 9)):
        assert abs(student_t_p(t, df) - 0.05) < 1e-8
    assert student_t_p(1.0, 1) == 0.5  # Cauchy: P(|T| > 1) = 1/2
    assert student_t_p(0.0, 6) == 1.0
    # changes 1, 2, 3 against 0: mean 2, sd 1, d = 2, t = 2 sqrt(3) on 2 df
    d, p = one_sample_test([1.0, 2.0, 3.0])
    assert d == 2.0 and abs(p - (1 - 2 * math.sqrt(3) / math.sqrt(2 + 12))) < 1e-12
    assert one_sample_test([0.5, 0.5])[1] == 0.0 and math.isnan(one_sample_test([0.5, 0.5])[0])
    assert math.isnan(one_sample_test([0.5])[1])


def test_the_count_interval_and_the_difference_interval_have_their_known_bounds():
    # Clopper-Pearson at n = 10 (the verdict's C++ gives the same): 0/10 -> [0, 0.3085], 10/10 ->
    # [0.6915, 1], 2/10 -> [0.0252, 0.5561]
    assert clopper_pearson(0, 10) == (0.0, clopper_pearson(0, 10)[1])
    assert abs(clopper_pearson(0, 10)[1] - 0.30849710781876) < 1e-9
    assert abs(clopper_pearson(10, 10)[0] - 0.69150289218124) < 1e-9 and clopper_pearson(10, 10)[1] == 1.0
    lo, hi = clopper_pearson(2, 10)
    assert abs(lo - 0.02521072632683) < 1e-9 and abs(hi - 0.55609546230764) < 1e-9
    # a difference of two samples: its bounds are differences of resampled means, so inside
    # [min(a) - max(b), max(a) - min(b)], around the observed difference; undefined below two values
    a, b = [3.0, 4.0, 5.0, 6.0], [1.0, 1.5, 2.0]
    mean, lo, hi = bootstrap_difference(a, b)
    assert mean == 4.5 - 1.5
    assert 3.0 - 2.0 <= lo <= mean <= hi <= 6.0 - 1.0
    assert bootstrap_difference(a, b) == (mean, lo, hi)
    assert math.isnan(bootstrap_difference([1.0], b)[1])


def write_guo_run(root, name, seed, layers, attn, value, h0, ratio, attn_layer0=None):
    """A train directory (root/seed-<seed>/name) with probes at steps 0, 50, 100: head 0 of every layer
    gets attn and value (attention to 0 from non-trigger queries, |W_o v_0|), layer 0 attn_layer0
    instead where given; every layer gets h0 and ratio."""
    run = root / f"seed-{seed}" / name
    run.mkdir(parents=True)
    with open(run / "heads.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["step", "layer", "head", "attn_to_0_rest", "value_out_norm_0"])
        for i, step in enumerate((0, 50, 100)):
            for layer in range(layers):
                w.writerow([step, layer, 0, attn_layer0[i] if attn_layer0 and layer == 0 else attn[i], value[i]])
    with open(run / "trace.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["step", "layer", "p0_norm", "rest_norm", "p0_norm_ratio", "loss", "accuracy", "p0_cos", "sink_rate",
                    "attn_to_0"])
        for i, step in enumerate((0, 50, 100)):
            for layer in range(layers):
                w.writerow([step, layer, h0[i], 20.0, ratio[i], 2.0, 0.9, 0.5, 0.0, 0.05])
    config = {"layers": layers, "attn": "softmax", "optimizer": "adamw", "lr": 3e-4}
    (run / "summary.json").write_text(json.dumps({"config": config}))
    return run


def test_guo_effects_are_tested_over_seeds_and_undecided_at_one_seed(tmp_path):
    runs = {"adam_L3": [], "sgd_L3": [], "adam_L1": [], "relu_L1": [], "nope_L3_nobos": [], "sgd_L1": [],
            "relu_L3": []}
    for seed in range(5):
        e = seed * 0.01
        runs["adam_L3"].append(write_guo_run(tmp_path, "adam_L3", seed, 3, [0.02, 0.4, 0.8 + e], [5, 9, 3],
                                             [24, 28, 34 + seed], [1.0, 1.5, 1.9]))
        runs["sgd_L3"].append(write_guo_run(tmp_path, "sgd_L3", seed, 3, [0.02, 0.1, 0.6 + e], [5, 6, 8],
                                            [24, 24, 23 + seed], [1.0, 1.4, 1.6]))
        runs["adam_L1"].append(write_guo_run(tmp_path, "adam_L1", seed, 1, [0.02, 0.3, 0.5 + e], [5, 10, 4 + e],
                                             [24, 30, 40], [1.0, 0.8, 0.7]))
        runs["relu_L1"].append(write_guo_run(tmp_path, "relu_L1", seed, 1, [0.02, 0.0, 0.0], [5, 50, 100],
                                             [24, 200, 500], [1.0, 1.1, 1.2]))
        # the other depth: SGD's 1-layer residual ends at 30 against Adam's 40; ReLU's 3-layer heads
        # never attend to BOS (0.0) against softmax's 0.80..0.84
        runs["sgd_L1"].append(write_guo_run(tmp_path, "sgd_L1", seed, 1, [0.02, 0.2, 0.4], [5, 6, 6],
                                            [24, 28, 30 - e], [1.0, 0.9, 0.8]))
        runs["relu_L3"].append(write_guo_run(tmp_path, "relu_L3", seed, 3, [0.02, 0.0, 0.0], [5, 50, 100],
                                             [24, 100, 200], [1.0, 1.1, 1.2]))
        # no BOS: attention to position 0 0.55..0.59 against BOS's 0.80..0.84, far below the margin
        runs["nope_L3_nobos"].append(write_guo_run(tmp_path, "nope_L3_nobos", seed, 3, [0.02, 0.3, 0.55 + e],
                                                   [10, 8, 4], [20, 20, 20], [1.0, 1.0, 1.0]))
    out = tmp_path / "out"
    args = [f"{name}={','.join(map(str, dirs))}" for name, dirs in runs.items()]
    proc = subprocess.run([sys.executable, str(SCRIPTS / "guo_figures.py"), str(out)] + args, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    effects = {e["effect"]: e for e in json.loads((out / "effects.json").read_text())["effects"]}
    peak = effects["residual peak needs Adam (3 layers, after block 0)"]
    assert peak["mean"] == 11.0 and peak["seeds"] == [5, 5]
    assert peak["p"] == 2 / 252 and peak["test"] == "exact permutation" and peak["reproduced"] == "yes"
    # one arm: the per-seed rise 0.48..0.52 (mean 0.5, sd 0.0158): d = 31.6, t = 70.7 on 4 df
    dormant = effects["dormant head, 1 layer"]
    assert dormant["test"] == "one-sample t" and abs(dormant["cohens_d"] - 0.5 / math.sqrt(0.00025)) < 1e-9
    assert 0 < dormant["p"] < 1e-6 and dormant["reproduced"] == "yes"
    assert effects["value drain, 1 layer"]["reproduced"] == "yes"  # rose 5 -> 10, then down to 0.4 of it
    assert effects["dormant head, 3 layers (largest over layers)"]["reproduced"] == "yes"
    assert effects["without BOS and positions, position 0 takes BOS's role (3 layers)"]["reproduced"] == "no"
    assert effects["without BOS and positions, position 0 takes BOS's role (3 layers, largest over layers)"][
        "reproduced"] == "no"
    assert abs(effects["dormant head, 1 layer"]["mean"] - 0.5) < 1e-12
    assert effects["ReLU attention removes the sink (1 layer)"]["reproduced"] == "yes"
    one_layer_peak = effects["residual peak needs Adam (1 layer, after block 0)"]
    assert abs(one_layer_peak["mean"] - 10.02) < 1e-9 and one_layer_peak["reproduced"] == "yes"
    # ... yet Adam's BOS ends at 0.7 of the rest against SGD's 0.8: a larger norm, no peak
    one_layer_relative = effects["residual peak relative to the rest (1 layer)"]
    assert abs(one_layer_relative["mean"] + 0.1) < 1e-9 and one_layer_relative["reproduced"] == "no"
    relu3 = effects["ReLU attention removes the sink (3 layers, largest over layers)"]
    assert abs(relu3["mean"] + 0.82) < 1e-9 and relu3["p"] == 2 / 252 and relu3["reproduced"] == "yes"
    # ... while its BOS residual, 200 against softmax's 34..38, is no smaller: no removed peak
    relu3_peak = effects["ReLU attention removes the residual peak (3 layers, after block 0)"]
    assert abs(relu3_peak["mean"] - 164) < 1e-9 and relu3_peak["reproduced"] == "no"
    # SGD's residual after block 0 ends at 23..27 from 24: changes -1..3, mean 1, interval across 0
    sgd_peak = effects["SGD removes the residual peak (3 layers, after block 0)"]
    assert sgd_peak["mean"] == 1.0 and sgd_peak["lo"] < 0 < sgd_peak["hi"]
    assert sgd_peak["reproduced"] == "not decidable at these seeds"
    # effects.md gives the rule and the verdict a column each, so a verdict never reads as its rule's clause
    row = next(line for line in (out / "effects.md").read_text().splitlines() if line.startswith("| SGD removes"))
    assert row.endswith("| back to its start or below: interval below 0 | not decidable at these seeds |")
    assert "| adam_L3 | 5 | 3 |" in (out / "table.md").read_text()
    assert (out / "curves.png").stat().st_size > 1000
    # Guo et al.'s 3-layer residual points reach only as far as the runs (to step 100 here): through
    # their first point at or past it, not out to their 10 000 steps
    guo_adam = (out / "curves.gp").read_text().split("$guo3Adam << EOD\n")[1].split("EOD")[0]
    assert [line.split()[0] for line in guo_adam.splitlines()] == ["0", "1000"]

    one = [f"{name}={dirs[0]}" for name, dirs in runs.items()]
    proc = subprocess.run([sys.executable, str(SCRIPTS / "guo_figures.py"), str(tmp_path / "one")] + one,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    effects = json.loads((tmp_path / "one" / "effects.json").read_text())["effects"]
    assert all(e["reproduced"] == "not decidable (one seed)" for e in effects)

    # 2 seeds against 2: the permutation test cannot reach p < 0.05 (smallest p 2/6)
    two = [f"{name}={','.join(map(str, dirs[:2]))}" for name, dirs in runs.items()]
    proc = subprocess.run([sys.executable, str(SCRIPTS / "guo_figures.py"), str(tmp_path / "two")] + two,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    effects = {e["effect"]: e for e in json.loads((tmp_path / "two" / "effects.json").read_text())["effects"]}
    assert effects["residual peak needs Adam (3 layers, after block 0)"]["reproduced"].startswith("not decidable")

    # one arm whose interval is above 0 but whose rise is not significant: changes 0.08 and 0.58 give
    # t = 1.32 on 1 df, p = 0.41, so the rise is not decidable at two seeds
    noisy = [write_guo_run(tmp_path / "noisy", "adam_L1", seed, 1, [0.02, 0.3, 0.1 + 0.5 * seed], [5, 10, 4],
                           [24, 30, 40], [1.0, 0.8, 0.7]) for seed in range(2)]
    proc = subprocess.run([sys.executable, str(SCRIPTS / "guo_figures.py"), str(tmp_path / "no"),
                           "adam_L1=" + ",".join(map(str, noisy))], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    dormant = {e["effect"]: e for e in json.loads((tmp_path / "no" / "effects.json").read_text())["effects"]}[
        "dormant head, 1 layer"]
    assert dormant["lo"] > 0 and abs(dormant["p"] - 0.4127) < 1e-3
    assert dormant["reproduced"] == "not decidable at these seeds"

    # SGD's residual after block 0 back below its start (24 -> 30 -> 21..21.9) removes the peak; one that
    # stays above it (24 -> 30 -> 27..27.9) does not, and says so only because p < 0.05 (t = 13.2 and 17.8
    # on 3 df)
    for name, end, verdict in (("below", 21.0, "yes"), ("above", 27.0, "no")):
        sgd = [write_guo_run(tmp_path / name, "sgd_L3", seed, 3, [0.02, 0.3, 0.5], [5, 6, 8],
                             [24, 30, end + 0.3 * seed], [1.0, 1.4, 1.6]) for seed in range(4)]
        proc = subprocess.run([sys.executable, str(SCRIPTS / "guo_figures.py"), str(tmp_path / f"{name}-out"),
                               "sgd_L3=" + ",".join(map(str, sgd))], capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        sgd_peak = {e["effect"]: e for e in json.loads((tmp_path / f"{name}-out" / "effects.json").read_text())[
            "effects"]}["SGD removes the residual peak (3 layers, after block 0)"]
        assert sgd_peak["reproduced"] == verdict and sgd_peak["p"] < 0.05

    # a value that only falls is no drain: the drain is a rise and then a fall
    falls = [write_guo_run(tmp_path / "falls", "adam_L1", seed, 1, [0.02, 0.3, 0.5], [10, 8, 4], [24, 30, 40],
                           [1.0, 0.8, 0.7]) for seed in range(3)]
    proc = subprocess.run([sys.executable, str(SCRIPTS / "guo_figures.py"), str(tmp_path / "fo"),
                           "adam_L1=" + ",".join(map(str, falls))], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    effects = {e["effect"]: e for e in json.loads((tmp_path / "fo" / "effects.json").read_text())["effects"]}
    assert effects["value drain, 1 layer"]["reproduced"] == "no"

    # backcopy_nobos' arms (NoPE with and without BOS), given as experiment directories of seed-<i>/
    # runs: position 0 within 0.1 of BOS's attention (0.76..0.80 against 0.80..0.84) takes its role;
    # its value rose and then drained to 0.4 of the peak. BOS's dormant head is in layer 0 only (the
    # last layer 0.01): the effects compare the largest attention over layers.
    for seed in range(5):
        write_guo_run(tmp_path / "exp" / "main", "", seed, 3, [0.02, 0.4, 0.76 + seed * 0.01], [5, 10, 4],
                      [24, 28, 30], [1.0, 1.5, 1.8])
        write_guo_run(tmp_path / "exp" / "bos", "", seed, 3, [0.02, 0.02, 0.01], [5, 9, 3], [24, 28, 30],
                      [1.0, 1.5, 1.9], attn_layer0=[0.02, 0.4, 0.8 + seed * 0.01])
    proc = subprocess.run([sys.executable, str(SCRIPTS / "guo_figures.py"), str(tmp_path / "nope-out"),
                           f"main={tmp_path / 'exp' / 'main'}", f"bos={tmp_path / 'exp' / 'bos'}"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    effects = {e["effect"]: e for e in json.loads((tmp_path / "nope-out" / "effects.json").read_text())["effects"]}
    role = effects["without BOS, position 0 takes BOS's role (3 layers, NoPE both)"]
    assert abs(role["mean"] + 0.04) < 1e-12 and role["reproduced"] == "yes"
    assert effects["value drain at position 0 without BOS (3 layers, NoPE)"]["reproduced"] == "yes"
    assert effects["dormant head on BOS without positions (3 layers, NoPE)"]["reproduced"] == "yes"
    assert role["seeds"] == [5, 5]
    # every probe's accuracy is 0.9, so BOS reaches main's final accuracy at step 0 (attention 0.02)
    matched = effects["without BOS, position 0 takes BOS's role, at matched accuracy (3 layers, NoPE both)"]
    assert abs(matched["mean"] - 0.76) < 1e-12 and matched["comparison"] == "main - bos (at matched accuracy)"
    assert "| bos | 5 | 3 | softmax | adamw | 0.0003 | 100 |" in (tmp_path / "nope-out" / "table.md").read_text()
    assert "| 0.820 / 0.010 / 0.010 |" in (tmp_path / "nope-out" / "table.md").read_text()
    # per run, the layer with the most attention to position 0: BOS's head in layer 0 (0.80 + 0.01 seed)
    assert "| bos | seed-4 | 0 | 0.840 / 0.010 / 0.010 | 3.0 / 3.0 / 3.0 | 1.90 / 1.90 / 1.90 |" in (
        tmp_path / "nope-out" / "table.md").read_text()


def write_text_study(docs, study, rows, heldout):
    """results.csv with one row per (variant, ratio, cos, sink_1, emerged): emerged_sink is the step from
    which the sink held (blank if it never did), as the experiment writes it; cells.csv with the held-out
    bits/byte of each variant at its last token count."""
    d = docs / study
    d.mkdir(parents=True)
    with open(d / "results.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["variant", "seed_index", "emerged_sink", "p0_norm_ratio_l0", "p0_cos_l0", "sink_1_l0"])
        for i, (variant, ratio, cos, sink1, emerged) in enumerate(rows):
            w.writerow([variant, i, 250 * (i + 1) if emerged else "", ratio, cos, sink1])
    with open(d / "cells.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["metric", "variant", "T", "tokens", "seeds", "mean"])
        for variant, bpb in heldout.items():
            w.writerow(["heldout_bpb", variant, variant[1:], 0, 3, 9.0])  # an earlier probe, ignored
            w.writerow(["heldout_bpb", variant, variant[1:], 1000, 3, bpb])


def test_the_cross_study_verdict_decides_only_past_the_bigram_plateau(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(b"ab" * 500)  # every next byte is determined: bigram entropy 0 bits/byte
    docs = tmp_path / "docs"
    # Nothing gets below a plateau of 0 bits/byte (minus the margin), so neither T is decidable.
    write_text_study(docs, "text_phase", [("T16", 2.5, 0.95, 0.5, True), ("T16", 2.5, 0.95, 0.5, True),
                                          ("T16", 1.0, 0.2, 0.0, False), ("T32", 1.0, 0.3, 0.0, False)],
                     {"T16": 0.05, "T32": 0.1})
    proc = subprocess.run([sys.executable, str(SCRIPTS / "verdict_summary.py"), str(docs), "--corpus", str(corpus)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    v = json.loads((docs / "verdict.json").read_text())
    assert v["bigram_entropy_bits_per_byte"] == 0.0
    claims = {c["claim"]: c for c in v["claims"]}
    # every setting undecided: the status does not claim "not supported" anywhere
    assert claims["high_norm"]["status"].startswith("not decidable at T = 16, 32")
    assert "p0sink/verdict.json" in v["missing"]

    # A corpus of random bytes has a high bigram entropy: T16's 2 of 3 runs with ratio >= 2 and
    # p0_cos >= 0.9 now decide the high-norm claim for it. Its 2 of 3 emerged sinks decide nothing
    # without a positive control: a BOS variant that sank at the same budget.
    rng = random.Random(1)
    corpus.write_bytes(bytes(rng.randrange(256) for _ in range(200000)))
    (docs / "verdict.json").unlink()

    def run():
        proc = subprocess.run([sys.executable, str(SCRIPTS / "verdict_summary.py"), str(docs), "--corpus",
                               str(corpus)], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        return json.loads((docs / "verdict.json").read_text())

    v = run()
    assert v["bigram_entropy_bits_per_byte"] > 7
    claims = {c["claim"]: c for c in v["claims"]}
    assert claims["high_norm"]["status"] == "supported in text_phase"
    assert "no BOS control at this budget yet" in claims["sink"]["status"]
    # text_controls' BOS variant sank in 1 of 5 runs: the text settings still decide nothing on sinks
    (docs / "text_controls").mkdir()

    def controls(bos_sinks):
        (docs / "text_controls" / "verdict.json").write_text(json.dumps(
            {"engine_version": 2, "claims": [], "variant_order": ["main", "bos"],
             "variants": {"main": {"runs": 5, "emerged": {"sink": 0, "high_norm": 0}},
                          "bos": {"runs": 5, "emerged": {"sink": bos_sinks, "high_norm": 0}}}}))

    controls(1)
    claims = {c["claim"]: c for c in run()["claims"]}
    assert "no sink with BOS either" in claims["sink"]["status"]
    controls(4)  # now it did, in most runs: T16's sinks count
    claims = {c["claim"]: c for c in run()["claims"]}
    assert claims["sink"]["status"] == "supported in text_phase"
    t16 = next(e for e in claims["high_norm"]["evidence"] if e.get("T") == 16)
    assert t16["high_norm_runs"]["k"] == 2 and t16["high_norm_runs"]["n"] == 3
    assert 0 <= t16["high_norm_runs"]["lo"] <= 2 / 3 <= t16["high_norm_runs"]["hi"] <= 1
    assert "| high_norm | supported in text_phase |" in (docs / "verdict.md").read_text()
    assert claims["bos_sink"]["status"] == "not shown"

    # Without the corpus the plateau is unknown: nothing is decided, and the status says why.
    proc = subprocess.run([sys.executable, str(SCRIPTS / "verdict_summary.py"), str(docs), "--corpus",
                           str(tmp_path / "missing")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    claims = {c["claim"]: c for c in json.loads((docs / "verdict.json").read_text())["claims"]}
    assert "held-out loss or bigram entropy unknown" in claims["high_norm"]["status"]



def test_a_text_studys_bos_runs_count_alike_as_its_positive_control_and_for_bos_sink(tmp_path):
    # A BOS run whose only sinking head is in layer 0 (no sink "emerged" after the first layer) is a
    # BOS sink: both places that read the study's BOS variant must count it.
    docs = tmp_path / "docs"
    d = docs / "text_long"
    d.mkdir(parents=True)
    with open(d / "results.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["variant", "seed_index", "emerged_sink", "p0_norm_ratio_l0", "p0_cos_l0", "sink_1_l0",
                    "sink_rate_l0", "sink_rate_l1"])
        w.writerows([["T256", 0, "", 1.5, 0.8, 0, 0, 0], ["T256", 1, "", 1.6, 0.8, 0, 0, 0],
                     ["T256-bos", 0, "", 1.5, 1.0, 0.25, 0.25, 0], ["T256-bos", 1, "", 1.5, 1.0, 0, 0, 0],
                     ["T256-bos", 2, "", 1.5, 1.0, 0.25, 0.25, 0]])
    with open(d / "cells.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["metric", "variant", "T", "tokens", "seeds", "mean"])
        w.writerows([["heldout_bpb", "T256", 256, 1000, 2, 2.6], ["heldout_bpb", "T256-bos", 256, 1000, 3, 2.5]])
    proc = subprocess.run([sys.executable, str(SCRIPTS / "verdict_summary.py"), str(docs), "--corpus",
                           str(tmp_path / "none")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    claims = {c["claim"]: c for c in json.loads((docs / "verdict.json").read_text())["claims"]}
    (bos,) = [e for e in claims["bos_sink"]["evidence"] if e["study"] == "text_long"]
    assert (bos["main"]["emerged"]["k"], bos["main"]["emerged"]["n"]) == (2, 3)
    assert bos["measure"] == "runs with a sink, any layer, last probe"
    (t256,) = [e for e in claims["sink"]["evidence"] if e["study"] == "text_long"]
    assert "T256-bos sank in 2/3 runs" in t256["positive_control"]

def test_the_cross_study_verdict_counts_each_variant_of_a_search(tmp_path):
    docs = tmp_path / "docs"
    (docs / "text_controls").mkdir(parents=True)
    variants = {"main": {"runs": 5, "emerged": {"sink": 1, "high_norm": 0}},
                "bos": {"runs": 5, "emerged": {"sink": 4, "high_norm": 0}},
                "rope": {"runs": 5, "emerged": {"sink": 3, "high_norm": 0}}}

    def claims():
        (docs / "text_controls" / "verdict.json").write_text(json.dumps(
            {"engine_version": 2, "claims": [], "main": "", "control": "", "variant_order": ["main", "bos", "rope"],
             "variants": variants}))
        proc = subprocess.run([sys.executable, str(SCRIPTS / "verdict_summary.py"), str(docs), "--corpus",
                               str(tmp_path / "none")], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        return {c["claim"]: c for c in json.loads((docs / "verdict.json").read_text())["claims"]}

    got = claims()
    sink = {e["main"]["variant"]: e["main"]["emerged"]["k"] for e in got["sink"]["evidence"]}
    # only main tests the mask alone: rope's 3 of 5 add positions, and BOS counts for bos_sink only
    assert sink == {"main": 1}
    assert got["sink"]["status"] == "not supported"
    # 4 of 5 BOS runs: Clopper-Pearson lower bound 0.28 < 0.5, so not shown at 5 seeds
    assert got["bos_sink"]["status"] == "not shown"
    # Where BOS got no sink in most runs either, main's missing sink decides nothing: the positive
    # control failed at that budget.
    variants["bos"]["emerged"]["sink"] = 2
    assert claims()["sink"]["status"] == ("not decidable at natural text, T = 256, 12.3 M tokens (text_controls: "
                                          "no sink with BOS either: text_controls bos sank in 2/5 runs)")
    # With the runs' results.csv a BOS run counts when its last probe sinks in any layer, layer 0
    # included (a BOS token can be sunk onto from the first layer; position 0 without BOS cannot):
    # 3 of 5 BOS runs sink in layer 0 only, so main's missing later-layer sink now decides.
    with open(docs / "text_controls" / "results.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["variant", "seed_index", "sink_rate_l0", "sink_rate_l1"])
        for i in range(5):
            w.writerow(["bos", i, 1.0 if i < 3 else 0.0, 0.0])
            w.writerow(["main", i, 0.0, 0.0])
    got = claims()
    assert got["sink"]["status"] == "not supported"
    assert got["sink"]["evidence"][0]["positive_control"] == "text_controls bos sank in 3/5 runs (any layer, last probe)"
    # A high norm that held at some probe in 3 of 5 main runs but to the end in none: not supported by
    # the emergence rule, and called transient; in 2 of 5 (not most) it is not
    variants["main"]["ever"] = {"high_norm": 3, "sink": 1}
    got = claims()
    assert got["high_norm"]["status"] == ("not supported; transient in text_controls (held in most runs for part of "
                                          "training, not to its end)")
    assert got["high_norm"]["evidence"][0]["main"]["ever"]["k"] == 3
    variants["main"]["ever"]["high_norm"] = 2
    assert claims()["high_norm"]["status"] == "not supported"


def test_a_state_held_at_some_probe_in_most_runs_is_transient_in_a_tested_experiment_and_a_text_setting(tmp_path):
    """The transient note reads every kind of evidence: an experiment whose verdict tests the claim (main
    against its control) and a text setting's runs (results.csv's probe shares), not only a search."""
    docs = tmp_path / "docs"
    (docs / "p0sink").mkdir(parents=True)
    side = {"mean": 0.0, "lo": 0.0, "hi": 0.0, "emerged": 1, "runs": 5}
    tested = [{"claim": c, "metric": "m", "main": side, "control": dict(side, emerged=0),
               "difference": {"mean": 0.0, "lo": 0.0, "hi": 0.0}, "cohens_d": 0.0, "p_value": 1.0,
               "test": "welch", "supported": False} for c in ("identification", "high_norm", "sink")]
    variants = {"main": {"runs": 5, "emerged": {"sink": 1, "high_norm": 0}, "ever": {"sink": 3, "high_norm": 2}},
                "bos": {"runs": 5, "emerged": {"sink": 5, "high_norm": 0}}}
    write_text_study(docs, "text_long", [("T256", 1.5, 0.9, 0.0, False)] * 2, {"T256": 2.0})

    def claims(high_norm_probes, ratio=1.5):
        (docs / "p0sink" / "verdict.json").write_text(json.dumps(
            {"engine_version": 2, "claims": tested, "main": "main", "control": "control",
             "variant_order": ["main", "bos"], "variants": variants}))
        with open(docs / "text_long" / "results.csv", newline="") as f:
            rows = list(csv.DictReader(f))
        with open(docs / "text_long" / "results.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=[k for k in rows[0] if not k.endswith("_probes")] +
                               ["high_norm_probes", "sink_probes"])
            w.writeheader()
            for r, share in zip(rows, high_norm_probes):
                w.writerow({**{k: v for k, v in r.items() if not k.endswith("_probes")},
                            "p0_norm_ratio_l0": ratio, "high_norm_probes": share, "sink_probes": 0})
        proc = subprocess.run([sys.executable, str(SCRIPTS / "verdict_summary.py"), str(docs), "--corpus",
                               str(tmp_path / "none")], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        return {c["claim"]: c["status"] for c in json.loads((docs / "verdict.json").read_text())["claims"]}

    # main's sink held at some probe in 3 of 5 runs, its high norm in 2 of 5 (not most); both text runs
    # had the high norm at some probe (a share of 0.1 of the probes), neither at the end
    got = claims([0.1, 0.1])
    assert got["sink"].endswith("; transient in p0sink (held in most runs for part of training, not to its end)")
    assert got["high_norm"].endswith("; transient in text_long (held in most runs for part of training, not to "
                                     "its end)")
    # one of the two text runs is not most of them
    assert "transient" not in claims([0.1, 0.0])["high_norm"]
    md = (docs / "verdict.md").read_text()
    assert "main held at some probe, to the end or not: 3/5" in md
    assert "held at some probe, to the end or not: 1/2" in md
    # a state held at the last probe in most runs came and stayed: not transient, even where the setting
    # cannot decide the claim (here the plateau is unknown)
    assert "transient" not in claims([0.1, 0.1], ratio=2.5)["high_norm"]
    # a run written without the probe shares is left out of the count, not counted as "never"
    assert "transient in text_long" in claims(["", 0.1])["high_norm"]
    assert "held at some probe, to the end or not: 1/1" in (docs / "verdict.md").read_text()


def test_the_committed_cross_study_verdict_is_what_the_committed_studies_give(tmp_path):
    # docs/search/verdict.{json,md} must be regenerated whenever a study's files change: recompute
    # them from a copy of docs/search and compare (needs the fortunes corpus for the plateau).
    import shutil
    source = Path(os.environ["P0SIM_SOURCE_DIR"]) / "docs" / "search"
    docs = tmp_path / "search"
    shutil.copytree(source, docs)
    proc = subprocess.run([sys.executable, str(SCRIPTS / "verdict_summary.py"), str(docs)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert (docs / "verdict.json").read_text() == (source / "verdict.json").read_text(), \
        "docs/search/verdict.json is stale: run python3 scripts/verdict_summary.py"
    assert (docs / "verdict.md").read_text() == (source / "verdict.md").read_text()
    # and the README shows its summary table as it is
    summary = (source / "verdict.md").read_text().split("## Summary\n\n")[1].split("\n\n")[0]
    readme = (source.parent.parent / "README.md").read_text()
    assert summary in readme, "README's cross-study table differs from docs/search/verdict.md's summary"


def test_the_trajectory_table_reads_the_largest_ratio_its_cosine_and_the_high_norm_count_per_step(tmp_path):
    """Two seeds, 2 blocks, probes at 0 and 100. At 100 seed 0 has ratio 2.5 in block 1 with cos 0.95
    (high norm) and seed 1 ratio 2.2 in block 1 with cos 0.5 (direction not fixed: not high norm)."""
    figures = {  # seed -> step -> per block (ratio, cos)
        0: {0: [(1.0, 0.1), (0.9, 0.2)], 100: [(1.5, 0.99), (2.5, 0.95)]},
        1: {0: [(1.2, 0.3), (0.8, 0.2)], 100: [(1.1, 0.99), (2.2, 0.5)]},
    }
    # seed-2 is still training (no summary.json): left out, with a line on stderr
    (tmp_path / "runs" / "main" / "seed-2" / "checkpoint").mkdir(parents=True)
    for seed, steps in figures.items():
        run = tmp_path / "runs" / "main" / f"seed-{seed}"
        run.mkdir(parents=True)
        (run / "summary.json").write_text("{}")
        with open(run / "trace.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["step", "layer", "p0_norm_ratio", "p0_cos", "p0_norm", "loss", "accuracy", "sink_rate",
                        "attn_to_0"])
            for step, blocks in steps.items():
                for layer, (ratio, cos) in enumerate(blocks):
                    sinks = seed == 1 and layer == 0 and step == 100  # seed 1's layer 0 sinks at its last probe
                    # |h_0| after block 0 is 20 + 10 * seed at step 100; block 1's (99) must not be read
                    w.writerow([step, layer, ratio, cos, 99.0 if layer else 20 + step / 10 * seed, 2.0 - step / 100,
                                0.5 + step / 1000, 1.0 if sinks else 0.0, 0.4 if sinks else 0.05])
        with open(run / "heads.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["step", "layer", "head", "attn_to_0_rest", "value_out_norm_0"])
            for step in steps:
                for layer in range(2):
                    w.writerow([step, layer, 0, 0.01 * (layer + 1) + seed / 100, 10 + layer + step / 10])
    out = tmp_path / "table.md"
    proc = subprocess.run([sys.executable, str(SCRIPTS / "trajectory_table.py"), str(out), "0,100,200",
                           f"main={tmp_path / 'runs' / 'main'}"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "left out 1 unfinished run(s)" in proc.stderr
    per_step, per_run = out.read_text().split("Each run over all its probes.")
    rows = [line for line in per_step.splitlines() if line.startswith("| main |")]
    assert len(rows) == 2  # no probe at step 200: no row
    cells = [c.strip() for c in rows[1].split("|")[1:-1]]
    assert cells[:3] == ["main", "100", "2"]
    assert cells[3] == "2.35 [2.20, 2.50] (block 1)"
    assert cells[4] == "0.72 [0.50, 0.95]"
    assert cells[5] == "25.0 [20.0, 30.0]"  # |h_0| after block 0
    assert cells[6] == "0.025 [0.020, 0.030]"  # the larger layer's attention, per seed
    assert cells[7] == "21.0 [21.0, 21.0]"  # the last layer's |W_o v_0|
    assert cells[-1] == "1/2"
    assert [c.strip() for c in rows[0].split("|")[1:-1]][-1] == "0/2"
    # each run over all its probes
    runs = {line.split("|")[2].strip(): [c.strip() for c in line.split("|")[3:-1]]
            for line in per_run.splitlines() if line.startswith("| main |")}
    assert runs["seed-0"] == ["1 of 2 (0.50)", "100–100", "2.50 (step 100, block 1)", "2.50, cos 0.95 (step 100, block 1)",
                              "none in any layer"]
    assert runs["seed-1"] == ["0 of 2", "–", "2.20 (step 100, block 1)", "2.20, cos 0.50 (step 100, block 1)",
                              "layer 0: 1 (100–100; peak 0.40, last 0.40)"]

    bad = subprocess.run([sys.executable, str(SCRIPTS / "trajectory_table.py"), str(out)], capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode == 2 and "trajectory_table.py" in bad.stderr


def command_line_scripts():
    """Every script in scripts/ that has a command line (the shared modules have none)."""
    return sorted(p.name for p in SCRIPTS.glob("*.py") if p.name not in ("interval.py", "script_args.py", "run_csv.py"))


def test_every_script_answers_help_without_writing_and_refuses_a_bad_argument_in_one_line(tmp_path):
    missing = str(tmp_path / "missing")
    for name in command_line_scripts():
        help_ = subprocess.run([sys.executable, str(SCRIPTS / name), "--help"], capture_output=True, text=True,
                               timeout=60, cwd=tmp_path)
        assert help_.returncode == 0 and help_.stdout.startswith(f"usage: {name}"), (name, help_.stderr)
        assert list(tmp_path.iterdir()) == [], name  # --help ran nothing
        # a first argument that names no directory or file, and too few of them for most scripts
        bad = subprocess.run([sys.executable, str(SCRIPTS / name), "--no-such-option", missing],
                             capture_output=True, text=True, timeout=60, cwd=tmp_path)
        assert bad.returncode == 2 and bad.stdout == "", (name, bad.stdout, bad.stderr)
        assert bad.stderr.count("\n") == 1 and bad.stderr.startswith(f"{name}: "), (name, bad.stderr)
        assert f"usage: {name}" in bad.stderr, (name, bad.stderr)
        assert list(tmp_path.iterdir()) == [], name


def test_a_guo_arm_read_up_to_a_step_is_the_same_runs_stopped_there(tmp_path):
    # 3-layer Adam runs whose dormant head reaches 0.4 at step 50 and 0.8.. at 100; ReLU's stays at 0
    adam = [write_guo_run(tmp_path / "adam", "", seed, 3, [0.02, 0.4 + 0.01 * seed, 0.8], [5, 9, 3],
                          [24, 28, 34], [1.0, 1.5, 1.9]) for seed in range(3)]
    relu = [write_guo_run(tmp_path, "relu_L3", seed, 3, [0.02, 0.0, 0.0], [5, 50, 100], [24, 100, 200],
                          [1.0, 1.1, 1.2]) for seed in range(3)]

    def figures(out, *arms):
        return subprocess.run([sys.executable, str(SCRIPTS / "guo_figures.py"), str(tmp_path / out), *arms],
                              capture_output=True, text=True, timeout=300)

    relu_arm = "relu_L3=" + ",".join(map(str, relu))
    proc = figures("at50", relu_arm, "adam_L3=" + ",".join(f"{d}@50" for d in adam))
    assert proc.returncode == 0, proc.stderr
    effect = {e["effect"]: e for e in json.loads((tmp_path / "at50" / "effects.json").read_text())["effects"]}[
        "ReLU attention removes the sink (3 layers, largest over layers)"]
    assert abs(effect["mean"] + 0.41) < 1e-12  # softmax's 0.40..0.42 at step 50, not its 0.8 at 100
    assert "| adam_L3 | 3 | 3 | softmax | adamw | 0.0003 | 50 |" in (tmp_path / "at50" / "table.md").read_text()
    # a directory of seed-<i>/ runs takes the step too; a step with no probe, or no step, is refused
    proc = figures("at100", relu_arm, f"adam_L3={tmp_path / 'adam'}@100")
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "at100" / "effects.json").read_text())["arms"] == {"relu_L3": 3, "adam_L3": 3}
    for bad, says in ((f"{adam[0]}@75", "has no probe at step 75 (its probes reach 50)"),
                      (f"{adam[0]}@last", "'@last' is not @STEP")):
        proc = figures("bad", relu_arm, "adam_L3=" + bad)
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and says in proc.stderr, proc.stderr
        assert not (tmp_path / "bad").exists()


def test_the_guo_replication_keeps_each_finished_run_in_the_docs_and_replaces_one_only_when_its_probes_differ(
        tmp_path):
    out, docs = tmp_path / "out", tmp_path / "docs"
    for seed in (1, 2):
        run = write_guo_run(out, "adam_L3", seed, 3, [0.02, 0.4, 0.8], [5, 9, 3], [24, 28, 34], [1.0, 1.5, 1.9])
        (run / "config.toml").write_text("seed = %d\n" % seed)
        (run / "train.csv").write_text("step,loss\n1,5.0\n")
    unfinished = out / "seed-3" / "adam_L3"
    unfinished.mkdir(parents=True)
    (unfinished / "config.toml").write_text("seed = 3\n")
    # every run already has its directory, so the stand-in binary is only asked to resume (and does nothing)
    env = dict(os.environ, P0SIM_BIN="true", SEEDS="1 2 3", ARMS="adam_L3")
    script = ["bash", str(SCRIPTS / "guo_replication.sh"), str(out), str(docs)]

    def replicate():
        proc = subprocess.run(script, cwd=SCRIPTS.parent, env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        return proc.stderr

    assert "replacing" not in replicate()
    kept = sorted(p.name for p in (docs / "runs" / "adam_L3").iterdir())
    assert kept == ["seed-1", "seed-2"]  # the unfinished seed 3 is not kept
    assert sorted(p.name for p in (docs / "runs" / "adam_L3" / "seed-1").iterdir()) == [
        "config.toml", "heads.csv", "summary.json", "trace.csv", "train.csv"]
    assert json.loads((docs / "effects.json").read_text())["arms"] == {"adam_L3": 2}
    # step by step: the arm over both seeds, then each seed (probes at 0, 50, 100: only step 0 is tabulated)
    trajectory = (docs / "trajectory.md").read_text()
    assert "| adam_L3 | 0 | 2 | 1.00 [1.00, 1.00] (block 0) | 0.50 [0.50, 0.50] | 24.0 [24.0, 24.0] |" in trajectory
    assert "| adam_L3-seed-1 | 0 | 1 | 1.00 (block 0) |" in trajectory
    assert "| adam_L3 | 250 |" not in trajectory
    assert "replacing" not in replicate()  # the same run again: nothing replaced

    # seed 1 extended: its probes differ, so its record is replaced, and the replacement is said
    with open(out / "seed-1" / "adam_L3" / "trace.csv", "a") as f:
        f.write(extension := "150,0,40,20.0,2.0,2.0,0.9,0.5,0.0,0.05\n")
    assert f"replacing {docs / 'runs' / 'adam_L3' / 'seed-1'}" in replicate()
    assert (docs / "runs" / "adam_L3" / "seed-1" / "trace.csv").read_text().endswith(extension)

    # another study's arm, up to a step, is drawn and tested beside this one's, but neither kept nor tabulated
    other = write_guo_run(tmp_path / "other", "", 1, 3, [0.02, 0.3, 0.6], [5, 6, 8], [24, 25, 26], [1.0, 1.2, 1.4])
    env["REFERENCE"] = f"sgd_L3={other}@50"
    replicate()
    assert json.loads((docs / "effects.json").read_text())["arms"] == {"adam_L3": 2, "sgd_L3": 1}
    assert "| sgd_L3 | 1 | 3 | softmax | adamw | 0.0003 | 50 |" in (docs / "table.md").read_text()
    assert sorted(p.name for p in (docs / "runs").iterdir()) == ["adam_L3"]
    assert "sgd_L3" not in (docs / "trajectory.md").read_text()


NAN = float("nan")


def write_experiment_run(root, variant, seed, probes, finished=True):
    """probes: {step: [(accuracy, first_accuracy, loss, sink_rate, p0_norm_ratio) per layer]}."""
    run = root / "runs" / variant / f"seed-{seed}"
    run.mkdir(parents=True)
    with open(run / "trace.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["step", "layer", "p0_norm_ratio", "sink_rate", "loss", "accuracy", "first_accuracy", "stage"])
        for step, layers in probes.items():
            for layer, (acc, first, loss, sink, ratio) in enumerate(layers):
                w.writerow([step, layer, ratio, sink, loss, acc, first, "train"])
    if finished:
        (run / "summary.json").write_text("{}")


def test_experiment_curves_average_the_finished_seeds_up_to_the_shortest_and_draw_the_chance_level(tmp_path):
    exp = tmp_path / "exp"
    # layer 0's sink rate (0.9) is not a later layer's and must not count; the ratio is the larger layer's
    write_experiment_run(exp, "main", 0, {0: [(0.1, 0.0, 4.0, 0.9, 1.0), (0.1, 0.0, 4.0, 0.0, 1.5)],
                                          100: [(0.5, 0.4, 3.0, 0.9, 0.8), (0.5, 0.4, 3.0, 0.25, 0.6)],
                                          200: [(0.9, 0.8, 2.0, 0.9, 0.7), (0.9, 0.8, 2.0, 0.5, 0.6)]})
    write_experiment_run(exp, "main", 1, {0: [(0.3, 0.2, 4.2, 0.9, 1.2), (0.3, 0.2, 4.2, 0.0, 1.1)],
                                          100: [(0.7, 0.6, 3.2, 0.9, 0.9), (0.7, 0.6, 3.2, 0.75, 1.0)]})
    write_experiment_run(exp, "main", 2, {0: [(1.0, 1.0, 0.0, 1.0, 9.0), (1.0, 1.0, 0.0, 1.0, 9.0)]}, finished=False)
    write_experiment_run(exp, "control", 0, {0: [(0.0, 0.0, 4.1, 0.0, 1.0), (0.0, 0.0, 4.1, 0.0, 1.0)],
                                             100: [(0.2, 0.1, 3.9, 0.0, 0.9), (0.2, 0.1, 3.9, 0.0, 0.95)]})
    (exp / "verdict.json").write_text(json.dumps({"control_chance": {"trigger_accuracy": 0.658,
                                                                    "first_trigger_accuracy": 0.369}}))
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, str(SCRIPTS / "experiment_curves.py"), str(exp), str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "seed-2: left out" in proc.stderr
    with open(out / "curves.csv", newline="") as f:
        rows = {(r["variant"], r["quantity"], int(r["step"])): r for r in csv.DictReader(f)}
    # main: seeds 0 and 1 at steps 0 and 100 only (seed 1 stops at 100; unfinished seed 2 left out)
    assert ("main", "accuracy", 200) not in rows
    assert {s for (v, q, s) in rows if v == "main" and q == "accuracy"} == {0, 100}
    acc = rows[("main", "accuracy", 100)]
    assert (int(acc["seeds"]), float(acc["mean"]), float(acc["min"]), float(acc["max"])) == (2, 0.6, 0.5, 0.7)
    sink = rows[("main", "max_sink_rate", 100)]
    assert (float(sink["mean"]), float(sink["min"]), float(sink["max"])) == (0.5, 0.25, 0.75)
    ratio = rows[("main", "max_p0_norm_ratio", 0)]
    assert (float(ratio["min"]), float(ratio["max"])) == (1.2, 1.5)
    assert float(rows[("control", "first_accuracy", 100)]["mean"]) == 0.1
    gp = (out / "curves.gp").read_text()
    assert "0.658 with lines" in gp and "0.369 with lines" in gp
    assert (out / "curves.png").stat().st_size > 0
    assert not (out / "matched.md").exists()  # no experiment.toml naming a main and a control
    bad = subprocess.run([sys.executable, str(SCRIPTS / "experiment_curves.py"), str(exp), str(out), "--variants",
                          "main,bos"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--variants: 'bos' is not a variant" in bad.stderr
    bad = subprocess.run([sys.executable, str(SCRIPTS / "experiment_curves.py"), str(tmp_path), str(out)],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "has no runs/ directory" in bad.stderr


def test_experiment_curves_compare_main_with_the_control_at_the_control_s_final_loss(tmp_path):
    exp = tmp_path / "exp"
    exp.mkdir()
    (exp / "experiment.toml").write_text('steps = 300\n[experiment]\nmain = "main"\ncontrol = "control"\n')
    # the first-trigger accuracy is undefined (NaN), as on the text task: no panel, no row
    # the control ends at losses 3.0 and 3.2: the target is their mean, 3.1
    write_experiment_run(exp, "control", 0, {0: [(0.0, NAN, 4.0, 0.0, 1.0)], 300: [(0.2, NAN, 3.0, 0.0, 1.0)]})
    write_experiment_run(exp, "control", 1, {0: [(0.0, NAN, 4.0, 0.0, 1.0)], 300: [(0.4, NAN, 3.2, 0.0, 1.2)]})
    # main seed 0 reaches it between steps 0 (4.0) and 100 (3.05): at 0.9/0.95 of the way; seed 1 at
    # step 200 (exactly 3.1 counts: all the way from step 100); seed 2 never (read at its last probe);
    # the rows after the match must not count
    write_experiment_run(exp, "main", 0, {0: [(0.0, NAN, 4.0, 0.0, 1.0)], 100: [(0.5, NAN, 3.05, 0.0, 1.5)],
                                          200: [(0.9, NAN, 2.0, 0.0, 3.0)], 300: [(0.9, NAN, 2.0, 0.0, 3.0)]})
    write_experiment_run(exp, "main", 1, {0: [(0.0, NAN, 4.0, 0.0, 1.0)], 100: [(0.1, NAN, 3.5, 0.0, 1.0)],
                                          200: [(0.7, NAN, 3.1, 0.0, 1.7)], 300: [(1.0, NAN, 2.5, 0.0, 3.0)]})
    write_experiment_run(exp, "main", 2, {0: [(0.0, NAN, 4.0, 0.0, 1.0)], 100: [(0.1, NAN, 3.8, 0.0, 1.0)],
                                          200: [(0.2, NAN, 3.6, 0.0, 1.0)], 300: [(0.3, NAN, 3.5, 0.0, 1.8)]})
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, str(SCRIPTS / "experiment_curves.py"), str(exp), str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    matched = (out / "matched.md").read_text()
    assert "final loss, 3.1000 nats (the mean over its 2 seeds)" in matched
    assert "first probe at or below it at steps 100–200, of 300 steps; 1 run(s) never reach it" in matched
    rows = {line.split(" | ")[0].lstrip("| "): line.split(" | ") for line in matched.splitlines() if line.startswith("| ")}
    # accuracy: main at the match 0.5 * 0.9/0.95, 0.7, 0.3 (mean 0.4912), at its end 0.9, 1.0, 0.3;
    # control 0.2, 0.4 (0.3)
    accuracy = rows["task accuracy (every trigger)"]
    assert accuracy[1].startswith("0.733 [") and accuracy[2].startswith("0.491 [")
    assert accuracy[3].startswith("0.300 [") and accuracy[4].startswith("0.191 [")
    # 1 + 0.5 * 0.9/0.95, 1.7, 1.8
    assert rows["largest p0_norm_ratio over layers"][2].startswith("1.658 [")
    assert rows["probe loss (nats)"][2].startswith("3.233 [")  # 3.1, 3.1 and seed 2's last, 3.5
    assert float(accuracy[5]) > 0
    assert "first trigger" not in matched and "first_accuracy" not in (out / "curves.gp").read_text()
