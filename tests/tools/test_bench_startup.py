"""``tools/bench/startup.py``: the commands it times and its table (the timing itself runs only
when someone benchmarks; here one real round of the cheapest command shows it runs)."""

from __future__ import annotations

import os
import sys

from tests.helpers.paths import DATA_DIR
from tests.helpers.tools import TOOLS, load_tool

startup = load_tool("bench_startup", TOOLS / "bench" / "startup.py")
FILE = str(DATA_DIR / "threads_wall_zstd.bin")


def test_the_commands_compare_cpython_with_ours():
    cmds = startup.commands(FILE, "python3.15", "python3.11", None)
    assert list(cmds) == ["cpython-c", "cpython-sampling", "ours-dev"]
    assert cmds["ours-dev"] == ["python3.11", "-m", "tachyon_format", "info", FILE]
    assert "get_info()" in cmds["cpython-c"][2] and cmds["cpython-c"][-1] == FILE
    with_315 = startup.commands(FILE, "python3.15", "python3.11", "venv/bin/python")
    assert with_315["ours-3.15"][0] == "venv/bin/python"


def test_the_report_gives_best_and_median():
    table = startup.report({"a": [0.3, 0.1, 0.2], "b": [0.05]})
    assert table.splitlines()[2:] == ["| a | 0.100 | 0.200 |", "| b | 0.050 | 0.050 |"]


def test_a_round_of_our_command_runs(tmp_path):
    env = {**os.environ, "PYTHONPYCACHEPREFIX": str(tmp_path),
           "PYTHONPATH": str(startup.SRC)}
    times = startup.measure({"ours": [sys.executable, "-m", "tachyon_format", "info", FILE]},
                            1, env)
    assert len(times["ours"]) == 1 and 0 < times["ours"][0] < 60
