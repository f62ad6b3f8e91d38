"""`p0sim report` opened in a real browser: headless Chromium renders each kind of report with no
console message, the numbers the page shows equal the run's CSV, and the screenshot holds the
drawn figures."""
import csv
import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import run_cli

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def golden_command(name):
    """One line of tests/golden/commands.txt: the short runs whose outputs are pinned."""
    golden = Path(os.environ["P0SIM_SOURCE_DIR"]) / "tests" / "golden"
    for line in (golden / "commands.txt").read_text().splitlines():
        if line.startswith(name + ":"):
            return line.split(":", 1)[1].replace("{golden}", str(golden)).split()
    raise KeyError(name)


def chromium(tmp_path, *args):
    """Runs headless Chromium; returns (stdout, console lines). As root it needs --no-sandbox."""
    if CHROMIUM is None:
        pytest.fail("chromium is not installed (scripts/install-deps.sh installs it)")
    proc = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           "--user-data-dir=" + str(tmp_path / "chromium-profile"),
                           "--enable-logging=stderr", "--v=0", *args],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    console = [l for l in proc.stderr.splitlines() if ":CONSOLE" in l]
    return proc.stdout, console


class Dom(HTMLParser):
    """The rendered DOM's body attributes, #errors text, table cells and figures."""

    def __init__(self):
        super().__init__()
        self.body, self.errors, self.tables, self.figures = {}, "", {}, []
        self._in_errors, self._table, self._cell = False, None, None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body":
            self.body = a
        elif tag == "div" and a.get("id") == "errors":
            self._in_errors = True
        elif tag == "table" and "data-table" in a:
            self._table = self.tables.setdefault(a["data-table"], [])
        elif tag == "tr" and self._table is not None:
            self._table.append([])
        elif tag == "td" and self._table is not None:
            self._cell = {"column": a.get("data-column"), "value": a.get("data-value"), "text": ""}
            self._table[-1].append(self._cell)
        elif tag == "figure":
            self.figures.append(a.get("id"))

    def handle_endtag(self, tag):
        if tag == "div":
            self._in_errors = False
        elif tag == "table":
            self._table = None
        elif tag == "td":
            self._cell = None

    def handle_data(self, data):
        if self._in_errors:
            self.errors += data
        if self._cell is not None:
            self._cell["text"] += data


def render(tmp_path, page):
    html, console = chromium(tmp_path, "--dump-dom", page.as_uri())
    dom = Dom()
    dom.feed(html)
    assert console == [], console
    assert dom.errors.strip() == ""
    assert dom.body.get("data-rendered") == "ok"
    return dom


def is_number(csv_text):
    """A CSV cell the page formats as a number (the circuit's stage column is text)."""
    return re.fullmatch(r"[-+0-9.eE]+", csv_text) is not None


def shown_equals(text, csv_text):
    """The page shows 4 significant digits (or 3 after the point in exponent form) of the file's value."""
    value, shown = float(csv_text), float(text)
    return abs(shown - value) <= 5e-4 * abs(value) + 1e-300


def report(binary, directory):
    run_cli(binary, "report", str(directory))
    page = directory / "report.html"
    assert page.is_file()
    return page


@pytest.fixture(scope="module")
def run_page(p0sim_binary, tmp_path_factory):
    run = tmp_path_factory.mktemp("report") / "run"
    run_cli(p0sim_binary, *golden_command("train"), "--out", str(run))
    return run, report(p0sim_binary, run)


def test_a_run_report_uses_no_network_resource(run_page):
    text = run_page[1].read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", text)
    assert "@import" not in text and "url(" not in text


def test_a_run_report_renders_and_shows_trace_csv_last_probe(run_page, tmp_path):
    run, page = run_page
    dom = render(tmp_path, page)
    with open(run / "trace.csv") as f:
        trace = list(csv.DictReader(f))
    last = [r for r in trace if r["step"] == trace[-1]["step"]]
    rows = [r for r in dom.tables["last_probe"] if r]  # the header row has no td
    assert len(rows) == len(last)
    for cells, expected in zip(rows, last):
        assert [c["column"] for c in cells] == list(expected)
        for c in cells:
            want = expected[c["column"]]
            if want == "":
                assert c["value"] is None and c["text"] == "–"
            elif not is_number(want):
                assert c["value"] is None and c["text"] == want
            else:
                assert c["value"] == want, c["column"]
                assert shown_equals(c["text"], want), (c["column"], c["text"], want)
    # One curve per trace.csv metric, one heat map per layer and head, the norms per position.
    metrics = [k for k in trace[0] if k not in ("step", "layer") and all(is_number(r[k]) for r in trace if r[k])]
    assert sum(f.startswith("curve-trace_") for f in dom.figures) == len(metrics)
    config = (run / "config.toml").read_text()
    layers = int(re.search(r"^layers = (\d+)", config, re.M).group(1))
    heads = int(re.search(r"^heads = (\d+)", config, re.M).group(1))
    assert sum(f.startswith("heat-attn_") for f in dom.figures) == layers * heads


def test_a_run_report_screenshot_shows_the_figures(run_page, tmp_path):
    Image = pytest.importorskip("PIL.Image")
    shot = tmp_path / "report.png"
    chromium(tmp_path, "--window-size=1200,3000", "--screenshot=" + str(shot), run_page[1].as_uri())
    image = Image.open(shot).convert("RGB")
    assert image.size == (1200, 3000)
    colours = image.getcolors(maxcolors=1 << 20)
    # A blank or failed page has a handful of colours; curves, text and heat maps have thousands.
    assert len(colours) > 500
    # The curves' first series colour (#1f77b4) is drawn.
    assert any(rgb == (0x1F, 0x77, 0xB4) for _, rgb in colours)


@pytest.mark.parametrize("name", ["experiment", "sweep_train"])
def test_experiment_and_sweep_reports_render_their_tables(name, p0sim_binary, tmp_path):
    out = tmp_path / name
    run_cli(p0sim_binary, *golden_command(name), "--out", str(out))
    dom = render(tmp_path, report(p0sim_binary, out))
    assert any(f.startswith("heat-") for f in dom.figures)
    if name == "experiment":
        verdict = json.loads((out / "verdict.json").read_text())
        rows = [{c["column"]: c for c in row} for row in dom.tables["verdict"] if row]
        assert [r["claim"]["text"] for r in rows] == [c["claim"] for c in verdict["claims"]]
        for row, claim in zip(rows, verdict["claims"]):
            for column, value in (("main mean", claim["main"]["mean"]), ("control mean", claim["control"]["mean"]),
                                  ("Welch p", claim["p_value"])):
                assert float(row[column]["value"]) == value, column
                assert shown_equals(row[column]["text"], row[column]["value"]), column
