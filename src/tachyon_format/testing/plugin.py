"""The pytest plugin (entry point ``pytest11``; inert unless used).

* Fixture ``tachyon_profile``: a factory of :class:`~tachyon_format.testing.ProfileBuilder`
  objects that write into the test's ``tmp_path``: ``tachyon_profile("run.bin",
  mode="cpu")`` returns a builder whose ``.write()`` writes ``tmp_path / "run.bin"`` (the
  format from the extension) and returns that path.
* Option ``--tachyon-validate=GLOB`` (repeatable; or the ini setting ``tachyon_validate``, one
  glob a line): when the session ends, every file matching a glob (relative to the rootdir;
  ``**`` spans directories) is validated, the problems are listed in the summary, and the
  session fails if any file has a problem that makes it unreadable or inconsistent. For
  suites whose code writes profiles (a profiler's own tests, a pipeline's fixtures).

Loading it costs nothing: this module imports only pytest and the standard library, and the
library loads when a fixture or the session-end check first needs it. Turn it off with
``-p no:tachyon_format.testing.plugin``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

OPTION = "--tachyon-validate"
INI = "tachyon_validate"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tachyon-format")
    group.addoption(OPTION, action="append", default=[], metavar="GLOB",
                    help="at the end of the session, validate the profile files matching "
                         "GLOB (relative to the rootdir; repeatable) and fail the session "
                         "if one is invalid")
    parser.addini(INI, type="linelist", default=[],
                  help="globs of profile files to validate at the end of the session")


@pytest.fixture
def tachyon_profile(tmp_path: Path):
    """``tachyon_profile(name="profile.bin", **ProfileBuilder options)``: a builder that
    writes to ``tmp_path / name``."""
    from tachyon_format.testing import ProfileBuilder

    def make(name: str = "profile.bin", **options) -> ProfileBuilder:
        return ProfileBuilder(path=tmp_path / name, **options)

    return make


def _globs(config: pytest.Config) -> list[str]:
    return [*config.getoption(OPTION.lstrip("-").replace("-", "_")), *config.getini(INI)]


def matching_files(root: Path, patterns: list[str]) -> list[Path]:
    """The files matching *patterns* (relative to *root* unless absolute), sorted, once
    each."""
    import glob

    found: set[Path] = set()
    for pattern in patterns:
        full = pattern if os.path.isabs(pattern) else os.path.join(root, pattern)
        found.update(Path(p) for p in glob.glob(full, recursive=True) if os.path.isfile(p))
    return sorted(found)


class _Report:
    """What the session-end check found, for the terminal summary."""

    def __init__(self, checked: list[Path], failures: dict[Path, str]) -> None:
        self.checked = checked
        self.failures = failures


_REPORT = pytest.StashKey[_Report]()


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    patterns = _globs(session.config)
    if not patterns:
        return
    from tachyon_format.testing.validity import assert_valid

    checked = matching_files(session.config.rootpath, patterns)
    failures = {}
    for path in checked:
        try:
            assert_valid(path)
        except AssertionError as exc:
            failures[path] = str(exc)
    session.config.stash[_REPORT] = _Report(checked, failures)
    if failures and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    report = config.stash.get(_REPORT, None)
    if report is None:
        return
    terminalreporter.section("tachyon-format validation")
    if not report.checked:
        terminalreporter.write_line(f"no file matches {', '.join(_globs(config))}")
    for path in report.checked:
        failure = report.failures.get(path)
        if failure is None:
            terminalreporter.write_line(f"valid: {path}")
        else:
            terminalreporter.write_line(failure, red=True)
    if report.failures:
        terminalreporter.write_line(f"{len(report.failures)} of {len(report.checked)} "
                                    f"profile files are invalid", red=True, bold=True)
