"""Every config in configs/ runs, cut short: the studies' experiments and their verdicts, the sweeps,
the single trainings and the theory tables, each exactly as committed but for its length. A renamed
option, a variant whose overrides no longer validate or a verdict that no longer reads a study's
output fails here, in CI, instead of hours into a long run. Then the studies the cross-study verdict
reads are each produced by their own command (an experiment; the text phase diagram's sweep and
scripts/text_phase.py; Guo et al.'s replication by scripts/guo_replication.sh) and
scripts/verdict_summary.py turns them into its claims, as it does for docs/search.

Cut short means: 2 optimiser steps, 2 rows per step, 4 probe rows, 2 seeds (the fewest an interval
takes); the theory tables 20 trials, the wired circuit 4 sequences and 2 models. Everything else
(widths, depths, context lengths, tasks, corpora, variants, claims) is the committed config's."""
import csv
import json
import os
import re
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path

import pytest

SOURCE = Path(os.environ["P0SIM_SOURCE_DIR"])
sys.path.insert(0, str(SOURCE / "scripts"))
import verdict_summary  # noqa: E402  the studies the cross-study verdict reads, and their configs
CONFIGS = sorted((SOURCE / "configs").rglob("*.toml"))
# the length of a run: every line that sets one of these keys, in any table, gets the short value
SHORT = {"steps": 2, "batch": 2, "probe-batch": 4, "seeds": 2, "trials": 20, "sequences": 4, "models": 2}
# and a training config that leaves one to its default gets it at the top
SHORT_TRAIN = ("steps", "batch", "probe-batch")
EXPERIMENT_CLAIMS = ["identification", "high_norm", "sink"]


def kind(text):
    """The command a config is written for, from its keys (each config's header names the same)."""
    if re.search(r"^\[experiment\]", text, re.M):
        return "experiment"
    if re.search(r"^grid\s*=", text, re.M):
        return "sweep"
    if re.search(r"^sink-gain\s*=", text, re.M):
        return "theory circuit"
    if re.search(r"^model\s*=", text, re.M):
        return "theory cone"
    return "train"


def shorten(text, config_kind, experiment_path=None):
    """The config's text with every length key set short (and a sweep's experiment replaced by its short copy)."""
    lines = []
    for line in text.splitlines():
        m = re.match(r"^(\s*)([A-Za-z-]+)(\s*=\s*)(.*)$", line)
        if m and m.group(2) in SHORT:
            line = f"{m.group(1)}{m.group(2)}{m.group(3)}{SHORT[m.group(2)]}"
        elif m and m.group(2) == "experiment" and experiment_path:
            line = f'{m.group(1)}experiment{m.group(3)}"{experiment_path}"'
        lines.append(line)
    top = tomllib.loads(text)
    scalars = {k for k, v in top.items() if not isinstance(v, dict)}
    trains = config_kind in ("experiment", "train") or (
        config_kind == "sweep" and top.get("kind", "train") == "train" and "experiment" not in top)
    if trains:
        first_table = next((i for i, line in enumerate(lines) if line.startswith("[")), len(lines))
        lines[first_table:first_table] = [f"{k} = {SHORT[k]}" for k in SHORT_TRAIN if k not in scalars]
    return "\n".join(lines) + "\n"


def run(args, cwd, timeout=600):
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{' '.join(map(str, args))}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
    return proc


def short_copy(config, tmp):
    """The config cut short, beside the copies of the configs it names (a sweep's experiment)."""
    text = config.read_text()
    k = kind(text)
    experiment = None
    named = tomllib.loads(text).get("experiment")
    if isinstance(named, str):
        experiment = short_copy(SOURCE / named, tmp)
    out = tmp / "configs" / config.relative_to(SOURCE / "configs")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(shorten(text, k, experiment))
    tomllib.loads(out.read_text())  # still TOML
    return out


def run_short(binary, config, tmp, out):
    """Runs the config's command, cut short, into out (a sweep keeping its runs); returns the command's kind."""
    short = short_copy(config, tmp)
    k = kind(config.read_text())
    out.parent.mkdir(parents=True, exist_ok=True)
    if k == "experiment":
        args = ["experiment", "--config", short, "--seeds", "2", "--threads", "2", "--out", out]
    elif k == "sweep":
        theory = tomllib.loads(config.read_text()).get("kind") == "theory"  # a theory point has no run directory
        args = ["sweep", "--config", short, *([] if theory else ["--keep-runs"]), "--threads", "2", "--out", out]
    elif k == "train":
        args = ["train", "--config", short, "--out", out]
    else:
        out.mkdir(parents=True)
        args = [*k.split(), "--config", short, "--out", out / f"{k.split()[1]}.csv"]
    run([binary, *args], cwd=SOURCE)
    return k


@pytest.fixture(scope="module")
def cut_short(tmp_path_factory, p0sim_binary):
    """Each config's short run, once for the whole file: (its kind, its output directory)."""
    root = tmp_path_factory.mktemp("cut_short")
    done = {}

    def get(config):
        if config not in done:
            out = root / "runs" / str(config.relative_to(SOURCE / "configs")).removesuffix(".toml")
            done[config] = (run_short(p0sim_binary, config, root, out), out)
        return done[config]
    return get


def test_every_config_is_cut_short_on_every_key_that_sets_its_length():
    assert len(CONFIGS) >= 20
    kinds = Counter(kind(c.read_text()) for c in CONFIGS)
    assert kinds["experiment"] >= 10 and kinds["sweep"] >= 4 and kinds["train"] >= 5, kinds
    for config in CONFIGS:
        text = config.read_text()
        short = tomllib.loads(shorten(text, kind(text)))
        tables = [short] + list(short.get("variants", {}).values())
        for table in tables:
            for key, value in SHORT.items():
                if key in table:
                    assert table[key] == value, f"{config.name}: {key} = {table[key]}"
        if kind(text) in ("experiment", "train"):
            assert all(short[k] == SHORT[k] for k in SHORT_TRAIN), config.name
        # nothing but the length changes
        original = tomllib.loads(text)
        for key in set(original) - set(SHORT) - {"variants", "experiment"}:
            assert short[key] == original[key], f"{config.name}: {key}"


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: str(c.relative_to(SOURCE / "configs")))
def test_each_config_runs_cut_short(config, cut_short):
    k, out = cut_short(config)
    if k == "experiment":
        spec = tomllib.loads(config.read_text())
        verdict = json.load(open(out / "verdict.json"))
        assert verdict["seeds"] == 2
        assert sorted(verdict["variant_order"]) == sorted(spec["variants"])
        tested = spec["experiment"].get("main", "") != ""
        assert [c["claim"] for c in verdict["claims"]] == (EXPERIMENT_CLAIMS if tested else [])
        for claim in verdict["claims"]:  # at 2 steps a claim's verdict is computed, whatever it is
            assert isinstance(claim["supported"], bool) and claim["main"]["runs"] == 2
        rows = list(csv.DictReader(open(out / "results.csv")))
        assert Counter(r["variant"] for r in rows) == {v: 2 for v in spec["variants"]}
    elif k == "sweep":
        rows = list(csv.DictReader(open(out / "results.csv")))
        seeds = Counter(r["seed_index"] for r in rows)  # every point, both seeds
        assert rows and set(seeds) == {"0", "1"} and seeds["0"] == seeds["1"], seeds
    elif k == "train":
        summary = json.load(open(out / "summary.json"))
        assert summary["steps"] == 2
    else:
        assert (out / f"{k.split()[1]}.csv").stat().st_size > 0


def test_the_cross_study_verdict_reads_every_study_produced_by_its_own_command(cut_short, p0sim_binary, tmp_path):
    """docs/search's layout, each study made by its committed command cut short, then verdict_summary.py."""
    docs = tmp_path / "docs"
    experiments = [(study, config) for study, _, _, _, config in verdict_summary.EXPERIMENTS]
    for study, config in experiments + [("text_long", "configs/text_long.toml")]:
        _, out = cut_short(SOURCE / config)
        (docs / study).mkdir(parents=True)
        for name in ("verdict.json", "results.csv"):
            (docs / study / name).write_bytes((out / name).read_bytes())
        if study == "text_long":
            run([sys.executable, SOURCE / "scripts/text_phase.py", docs / study, out / "runs"], cwd=SOURCE)
    _, phase = cut_short(SOURCE / "configs/sweep_text_phase.toml")
    (docs / "text_phase").mkdir()
    (docs / "text_phase" / "results.csv").write_bytes((phase / "results.csv").read_bytes())
    run([sys.executable, SOURCE / "scripts/text_phase.py", docs / "text_phase", phase / "runs"], cwd=SOURCE)
    # Guo et al.'s replication: the arms the verdict reads (the dormant head in 1 and 3 layers, position 0
    # without BOS), two seeds, two steps; the arms set their own batch
    env = dict(os.environ, P0SIM_BIN=p0sim_binary, SEEDS="1 2", STEPS="2", ARMS="adam_L1 adam_L3 nope_L3_nobos")
    proc = subprocess.run(["bash", SOURCE / "scripts/guo_replication.sh", tmp_path / "runs/guo", docs / "guo_backcopy"],
                          cwd=SOURCE, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]

    run([sys.executable, SOURCE / "scripts/verdict_summary.py", docs], cwd=SOURCE)
    summary = json.load(open(docs / "verdict.json"))
    assert summary["missing"] == []
    studies = {c["claim"]: {e["study"] for e in c["evidence"]} for c in summary["claims"]}
    assert studies["identification"] == {"p0sink", "frlookup_control_convergence"}
    assert {study for study, _ in experiments} | {"text_phase", "text_long"} <= studies["high_norm"]
    assert "guo_backcopy" in studies["sink"] and "guo_backcopy" in studies["bos_sink"]
    for claim in summary["claims"]:
        assert claim["status"], claim["claim"]
