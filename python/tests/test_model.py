"""The module trains, loads and refuses exactly as the CLI does."""
import csv
import threading
import time
import _thread

import numpy as np
import pytest

import p0sim
from conftest import SMALL, cli_flags, run_cli


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def test_training_writes_the_same_bits_as_the_cli(trained, p0sim_binary, tmp_path):
    _, _, py_dir = trained
    cli_dir = tmp_path / "cli"
    run_cli(p0sim_binary, "train", *cli_flags(SMALL), "--out", str(cli_dir))
    for name in sorted(p.name for p in (cli_dir / "weights").iterdir()):
        assert (py_dir / "weights" / name).read_bytes() == (cli_dir / "weights" / name).read_bytes(), name
    for name in ("train.csv", "trace.csv", "heads.csv", "config.toml"):
        py_rows = (py_dir / name).read_text().splitlines()
        cli_rows = (cli_dir / name).read_text().splitlines()
        if name == "train.csv":  # its tokens_per_s column is wall-clock
            cut = lambda rows: [",".join(r.split(",")[:4]) for r in rows]
            py_rows, cli_rows = cut(py_rows), cut(cli_rows)
        assert py_rows == cli_rows, name


def test_the_returned_trace_holds_trace_csv(trained):
    _, result, out = trained
    rows = read_csv(out / "trace.csv")
    trace = result["trace"]
    assert list(trace) == list(rows[0])
    for name, column in trace.items():
        for value, row in zip(column, rows):
            if name == "stage":
                assert value == row[name]
            elif row[name] == "":
                assert np.isnan(value), name
            else:
                assert float(row[name]) == value, name  # 17 significant digits: the double itself
    heads = read_csv(out / "heads.csv")
    assert list(result["heads"]) == list(heads[0])
    assert [float(r["attn_to_0"]) for r in heads] == list(result["heads"]["attn_to_0"])


def test_the_loaded_run_has_the_trained_weights(trained):
    model, _, out = trained
    loaded = p0sim.load(str(out))
    assert loaded.options == model.options
    ours, theirs = model.state_dict(), loaded.state_dict()
    assert list(ours) == list(theirs)
    for name in ours:
        assert np.array_equal(ours[name], theirs[name]), name
        assert np.array_equal(np.load(out / "weights" / f"{name}.npy"), ours[name]), name


def test_load_state_dict_round_trips_and_refuses_a_wrong_shape():
    a, b = p0sim.Model(**SMALL), p0sim.Model(**{**SMALL, "seed": 4})
    b.load_state_dict(a.state_dict())
    tokens = np.arange(32).reshape(2, 16) % 64
    assert np.array_equal(a(tokens), b(tokens))
    bad = a.state_dict()
    bad["lm_head"] = bad["lm_head"][:, :-1]
    with pytest.raises(ValueError, match="lm_head"):
        b.load_state_dict(bad)


# Each bad option, given to the CLI and to the module: the same one-line message.
BAD = [
    dict(lr=-1),
    dict(d_model=30, heads=4),
    dict(task="nosuchtask"),
    dict(seq_len=1),
]


@pytest.mark.parametrize("options", BAD, ids=lambda o: ",".join(o))
def test_a_bad_option_raises_value_error_with_the_cli_message(options, p0sim_binary, tmp_path):
    cli = run_cli(p0sim_binary, "train", *cli_flags(options), "--out", str(tmp_path / "x"), check=False)
    assert cli.returncode == 2
    with pytest.raises(ValueError) as err:
        p0sim.Model(**options)
    assert cli.stderr.strip() == "p0sim: error: " + str(err.value)


# Names and values CLI11 itself refuses on a command line (an unknown flag, a value after a flag
# option) reach the module through the run-option table, which config files use too.
@pytest.mark.parametrize("options, message", [
    (dict(d_modle=32), "--d-modle: unknown option 'd-modle' (did you mean 'd-model'?)"),
    (dict(bos="maybe"), "--bos: must be true or false, got 'maybe'"),
])
def test_an_unknown_option_or_bad_flag_names_itself(options, message):
    with pytest.raises(ValueError) as err:
        p0sim.Model(**options)
    assert str(err.value) == message


def test_missing_run_directories_raise_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a directory"):
        p0sim.load(str(tmp_path / "absent"))
    with pytest.raises(FileNotFoundError, match="no config.toml"):
        p0sim.load(str(tmp_path))


def test_a_non_empty_output_directory_is_refused_unless_forced(tmp_path):
    (tmp_path / "keep.txt").write_text("x")
    model = p0sim.Model(**{**SMALL, "steps": 2, "probe_every": 0})
    with pytest.raises(ValueError, match="not empty"):
        model.train(out=str(tmp_path))
    assert (tmp_path / "keep.txt").exists()
    model.train(out=str(tmp_path), force=True)
    assert (tmp_path / "summary.json").exists()


def test_ctrl_c_stops_training_after_a_step_and_the_model_trains_again():
    model = p0sim.Model(**{**SMALL, "steps": 100000, "probe_every": 0})
    seen = []
    timer = threading.Timer(0.3, _thread.interrupt_main)  # SIGINT's Python-level effect
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        model.train(on_step=lambda s: seen.append(s["step"]))
    timer.join()
    assert 0 < len(seen) < 100000 and seen == list(range(1, len(seen) + 1))
    assert model.train(steps=3)["log"]["step"].tolist() == [1, 2, 3]


def test_an_exception_in_on_step_stops_training_and_propagates():
    model = p0sim.Model(**{**SMALL, "probe_every": 0})

    def stop(s):
        if s["step"] == 5:
            raise RuntimeError("enough")
    with pytest.raises(RuntimeError, match="enough"):
        model.train(on_step=stop)


def ran_while(work):
    """How often this thread ran while `work` ran in another. A call that holds the GIL lets it in
    at most once (at the switch right after the call returns, before its end is timed)."""
    span = {}

    def timed():
        span["start"] = time.perf_counter()
        work()
        span["end"] = time.perf_counter()
    worker = threading.Thread(target=timed)
    worker.start()
    ticks = []
    while worker.is_alive():
        time.sleep(0.001)
        ticks.append(time.perf_counter())
    worker.join()
    return sum(span["start"] < t < span["end"] for t in ticks)


def test_training_and_monte_carlo_release_the_gil():
    model = p0sim.Model(**{**SMALL, "steps": 300, "probe_every": 0})
    assert ran_while(lambda: model.train()) >= 3
    assert ran_while(lambda: p0sim.theory.cone(d=64, T=64, trials=20000)) >= 3
