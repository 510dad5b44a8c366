"""Shared fixtures, the ``--slow`` switch and the hypothesis profiles.

The reference-interpreter helpers live in ``helpers/reference.py``, paths in
``helpers/paths.py``.

* ``pytest`` alone is the fast run: tests marked ``slow`` (the long equivalence and
  differential tests) are skipped; ``pytest --slow`` (what ``tools/dev.sh test`` and CI run)
  runs them too.
* Hypothesis: the ``ci`` profile (chosen when ``CI`` is set) is derandomized, so a CI run is
  reproducible and never red by chance; ``dev`` (the default elsewhere) explores new examples
  on every run; ``thorough`` (``HYPOTHESIS_PROFILE=thorough``) runs ten times the examples.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.helpers.go_oracle import GoOracle, GoUnavailable
from tests.helpers.paths import DATA_DIR, SHARED_FIXTURES

settings.register_profile("dev", deadline=None)
settings.register_profile("ci", deadline=None, derandomize=True, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", deadline=None, max_examples=1000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--slow", action="store_true",
                     help="also run the tests marked slow (tools/dev.sh test does)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--slow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --slow (tools/dev.sh test does)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """``tests/data``: the golden files (see its README for provenance)."""
    return DATA_DIR


@pytest.fixture(scope="session")
def shared_fixtures() -> Path:
    """Third-party fixture files kept beside the repository, when present."""
    if not SHARED_FIXTURES.is_dir():
        pytest.skip(f"no shared fixtures at {SHARED_FIXTURES} (kept beside the repository, "
                    "never copied into it)")
    return SHARED_FIXTURES


@pytest.fixture(scope="session")
def golden_bins() -> list[Path]:
    """Every golden Tachyon file, ``tests/data/*.bin``, sorted by name."""
    return sorted(DATA_DIR.glob("*.bin"))


@pytest.fixture(scope="session")
def go_tool(tmp_path_factory) -> GoOracle:
    """Go's pprof (``go tool pprof``), run privately and offline; a test using it skips, with
    the reason, where Go is not installed."""
    try:
        return GoOracle(tmp_path_factory.mktemp("go"))
    except GoUnavailable as exc:
        pytest.skip(str(exc))
