"""Real gperftools CPU profiles for the tests: the committed ones, fresh ones from libprofiler,
and pprof's own test files (with their ``.string`` goldens) when the shared fixtures exist."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from tests.helpers.paths import DATA_DIR, REPO, SHARED_FIXTURES

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
    name = "make_gperftools_fixture"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, REPO / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def golden(path: Path) -> str:
    return path.with_suffix(".cpu.string").read_text()
