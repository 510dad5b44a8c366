"""Real gperftools CPU profiles for the tests: the committed ones, fresh ones from libprofiler,
and pprof's own test files (with their ``.string`` goldens) when the shared fixtures exist."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.paths import DATA_DIR, SHARED_FIXTURES
from tests.helpers.tools import TOOLS, load_tool

COMMITTED = DATA_DIR / "gperftools"
"""Profiles libprofiler wrote, committed with their provenance (README.md there)."""
COMMITTED_PROFILES = sorted(COMMITTED.glob("*.prof"))
PPROF_TESTDATA = SHARED_FIXTURES / "gperftools_cpu" / "google-pprof"
"""google/pprof's legacy CPU test files (``profile/testdata/*.cpu`` with ``.string``
goldens, ``internal/driver/testdata/cppbench.cpu``)."""
PPROF_PROFILES = sorted(PPROF_TESTDATA.rglob("*.cpu"))
WITH_GOLDEN = [path for path in PPROF_PROFILES if path.with_suffix(".cpu.string").exists()]


def load_fixture_tool():
    """``tools/make_gperftools_fixture.py`` as a module (tools/ is not a package)."""
    return load_tool("make_gperftools_fixture", TOOLS / "make_gperftools_fixture.py")


def golden(path: Path) -> str:
    return path.with_suffix(".cpu.string").read_text()
