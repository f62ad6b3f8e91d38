"""scripts/norm_jacobian.py: the pre-norm Jacobian at position 0 against the rest, from a run's weights."""
import csv
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import p0sim

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))
from norm_jacobian import jacobian_frobenius, norm_out  # noqa: E402


@pytest.mark.parametrize("kind", ["rms", "layer", "none"])
def test_the_closed_form_jacobian_norm_is_the_finite_difference_one(kind):
    rng = np.random.default_rng(7)
    C = 12
    g, b = rng.normal(1.0, 0.5, C), rng.normal(0.0, 0.3, C)
    for scale in (0.01, 1.0, 40.0):  # the 1/|h| law, and the eps that bends it for tiny states
        x = rng.normal(0.0, scale, C)
        h = 1e-6 * scale
        J = np.stack([(norm_out(x + h * e, g, b, kind) - norm_out(x - h * e, g, b, kind)) / (2 * h)
                      for e in np.eye(C)], axis=1)  # column j: d norm / d x_j
        # central differences: error O(h^2) relative, plus rounding ~1e-16 / 1e-6
        assert jacobian_frobenius(x, g, kind) == pytest.approx(np.linalg.norm(J), rel=1e-6)


def test_the_norm_it_differentiates_is_the_engines(trained):
    model, _, _ = trained
    rows, _ = model.probe_batch()
    _, cache = model.run_with_cache(rows[:, :-1])
    params = model.state_dict()
    for block in range(int(model.options["layers"])):
        h = np.asarray(cache[f"blocks.{block}.hook_resid_pre"], dtype=np.float64)
        ours = norm_out(h, params[f"blocks.{block}.norm1.weight"], params.get(f"blocks.{block}.norm1.bias"),
                        model.options["norm"])
        engine = np.asarray(cache[f"blocks.{block}.ln1.hook_normalized"], dtype=np.float64)
        assert np.max(np.abs(ours - engine)) <= 1e-5 * np.max(np.abs(engine))  # float32 engine, float64 here


def run_script(*args):
    return subprocess.run([sys.executable, str(SCRIPTS / "norm_jacobian.py"), *map(str, args)], capture_output=True,
                          text=True, env=dict(os.environ), timeout=300)


def test_with_equal_gains_the_jacobian_shrinks_exactly_as_one_over_the_norm(tmp_path):
    # untrained: every gain 1, so ||J_t|| = r_t sqrt(C - 1) up to eps / mean square (PyTorch's init: N(0, 1)
    # embeddings, mean squares near 1, so about 1e-5), and the product of the two ratios is 1
    run = tmp_path / "start"
    p0sim.Model(task="firstrecall", d_model=32, layers=3, heads=2, seq_len=16, batch=8, probe_batch=16, init="torch",
                seed=5).train(steps=0, out=str(run))
    proc = run_script("--csv", tmp_path / "j.csv", f"start={run}")
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.DictReader(open(tmp_path / "j.csv")))
    assert [int(r["block"]) for r in rows] == [1, 2]
    for r in rows:
        assert float(r["ratio_product"]) == pytest.approx(1.0, abs=1e-4)
        assert float(r["jacobian_ratio"]) == pytest.approx(1.0 / float(r["norm_ratio"]), rel=0.05)
        assert 0.0 <= float(r["turn_p0"]) <= 180.0 and 0.0 <= float(r["turn_rest"]) <= 180.0
    assert "| start | 1 | 1 |" in proc.stdout


@pytest.mark.parametrize("arg, message", [
    ("nogroup", "is not GROUP=RUN_DIR"),
    ("g=/nonexistent", "is not a finished run directory"),
])
def test_a_bad_group_gets_one_line_and_exit_2(arg, message):
    proc = run_script(arg)
    assert proc.returncode == 2 and message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
