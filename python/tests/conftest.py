"""Shared fixtures: the CLI binary the module must agree with, and a small trained run."""
import os
import subprocess

import pytest

import p0sim

# A small firstrecall run: trains in about a second, probes three times.
SMALL = dict(task="firstrecall", d_model=32, layers=2, heads=2, seq_len=16, batch=16, steps=40,
             probe_every=20, probe_batch=16, seed=3)


def cli_flags(options):
    flags = []
    for k, v in options.items():
        flags += ["--" + k.replace("_", "-"), str(v).lower() if isinstance(v, bool) else str(v)]
    return flags


@pytest.fixture(scope="session")
def p0sim_binary():
    path = os.environ.get("P0SIM_BINARY")
    if not path or not os.access(path, os.X_OK):
        pytest.fail("P0SIM_BINARY must name the p0sim executable (CTest sets it)")
    return path


def run_cli(binary, *args, check=True):
    return subprocess.run([binary, *args], capture_output=True, text=True, check=check)


@pytest.fixture(scope="session")
def trained(tmp_path_factory):
    """A model trained through the module, with its run directory written."""
    out = tmp_path_factory.mktemp("py") / "run"
    model = p0sim.Model(**SMALL)
    result = model.train(out=str(out))
    return model, result, out
