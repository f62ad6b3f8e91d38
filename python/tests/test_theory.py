"""p0sim.theory returns the rows the CLI writes."""
import csv
import io

import numpy as np

import p0sim
from conftest import run_cli


def assert_columns_equal_csv(columns, text):
    rows = list(csv.DictReader(io.StringIO(text)))
    assert list(columns) == list(rows[0])
    for name, values in columns.items():
        for value, row in zip(values, rows):
            if row[name] == "":
                assert np.isnan(value), name
            elif isinstance(value, str):
                assert value == row[name], name
            else:
                assert float(row[name]) == value, name


def test_cone_equals_the_cli_csv(p0sim_binary, tmp_path):
    out = tmp_path / "cone.csv"
    run_cli(p0sim_binary, "theory", "cone", "--model", "gauss", "--d", "16", "--T", "6", "--m", "0.5",
            "--trials", "3000", "--seed", "5", "--out", str(out))
    cone = p0sim.theory.cone(model="gauss", d=16, T=6, m=0.5, trials=3000, seed=5)
    assert_columns_equal_csv(cone, out.read_text())


def test_circuit_equals_the_cli_csv(p0sim_binary, tmp_path):
    out = tmp_path / "circuit.csv"
    run_cli(p0sim_binary, "theory", "circuit", "--d", "32", "--T", "16", "--models", "2", "--sequences", "64",
            "--out", str(out))
    row = p0sim.theory.circuit(d=32, T=16, models=2, sequences=64)
    samples = row.pop("samples")
    assert_columns_equal_csv({k: [v] for k, v in row.items()}, out.read_text())
    assert len(samples["margins"]) == 2 * 64


def test_cone_refuses_a_point_outside_the_model():
    import pytest
    with pytest.raises(ValueError, match="--d"):
        p0sim.theory.cone(d=1)
    with pytest.raises(ValueError, match="--model"):
        p0sim.theory.cone(model="cone")
