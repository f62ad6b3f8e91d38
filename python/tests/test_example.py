"""docs/examples/position0_sink.py, the newcomer's walk-through, runs to its end."""
import os
import subprocess
import sys
from pathlib import Path


def test_the_position0_walkthrough_runs_and_prints_each_step(tmp_path):
    script = Path(os.environ["P0SIM_SOURCE_DIR"]) / "docs" / "examples" / "position0_sink.py"
    env = {**os.environ, "P0SIM_EXAMPLE_STEPS": "50"}
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for expected in ("engine version", "blocks.1.attn.hook_pattern (128, 4, 16, 16)", "mean pattern",
                     "p0_norm_ratio per layer"):
        assert expected in proc.stdout
