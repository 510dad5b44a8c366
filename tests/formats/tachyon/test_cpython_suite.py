"""CPython's own test_binary_format.py, with tachyon_format.compat standing in for the binary
part of _remote_debugging (tools/run_cpython_binary_tests.py). Runs under CPython 3.15 itself,
where that test module and its collectors exist."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.helpers.paths import REPO

pytestmark = pytest.mark.skipif(
    sys.version_info < (3, 15), reason="CPython's test_binary_format.py needs CPython 3.15"
)


def test_cpython_binary_format_suite_passes_on_compat():
    pytest.importorskip("_remote_debugging")
    pytest.importorskip("test.test_profiling.test_sampling_profiler.test_binary_format")
    env = {**os.environ, "PYTHONPATH": os.fspath(REPO / "src")}
    result = subprocess.run(
        [sys.executable, os.fspath(REPO / "tools" / "run_cpython_binary_tests.py"), "--inner"],
        capture_output=True, text=True, env=env, check=False,
    )
    summary = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert "failed 0, errors 0" in summary and "ran 84" in summary, summary
