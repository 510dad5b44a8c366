"""Fixtures of the gperftools tests: pprof's test files, Go's pprof, fresh libprofiler runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.go_oracle import GoOracle, GoUnavailable
from tests.helpers.libprofiler import PPROF_TESTDATA, load_fixture_tool


@pytest.fixture(scope="session")
def pprof_testdata() -> Path:
    """google/pprof's legacy CPU profiles from the shared fixtures."""
    if not PPROF_TESTDATA.is_dir():
        pytest.skip(f"no shared fixtures at {PPROF_TESTDATA} (google/pprof's test files)")
    return PPROF_TESTDATA


@pytest.fixture(scope="session")
def go_oracle(go_tool) -> GoOracle:
    """:func:`go_tool` with its ``Profile.String()`` program built (skips, with the reason,
    when this Go vendors no pprof)."""
    try:
        go_tool.profile_strings([])  # builds the program once
    except GoUnavailable as exc:
        pytest.skip(str(exc))
    return go_tool


@pytest.fixture(scope="session")
def libprofiler_runs(tmp_path_factory):
    """Fresh profiles from gperftools' libprofiler (``mixed`` and ``hot`` workloads at 1 kHz),
    with the program that was profiled; skips without gcc or libprofiler."""
    tool = load_fixture_tool()
    out = tmp_path_factory.mktemp("libprofiler")
    try:
        return {mode: tool.make_profile(out / f"{mode}.prof", mode=mode, frequency=1000,
                                        work=5_000_000, work_dir=out / "work")
                for mode in tool.MODES}
    except tool.ToolchainMissing as exc:
        pytest.skip(str(exc))
