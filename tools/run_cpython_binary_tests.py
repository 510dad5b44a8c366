"""Run CPython's own ``test_binary_format.py`` with ``tachyon_format.compat`` standing in for
the binary-format part of ``_remote_debugging``.

    python tools/run_cpython_binary_tests.py [--python PYTHON3.15] [--deps DIR] [-v]

The dev interpreter prepares a dependency folder for the reference CPython 3.15 (numpy's
cp3XX wheel unpacked, construct), then re-runs this script under that interpreter with
``src/`` and the folder on ``sys.path``. There, before the test module is imported, the real
``_remote_debugging`` gets our ``BinaryWriter``, ``BinaryReader``, struct sequences,
``zstd_available`` and status constants, so ``profiling.sampling`` (collectors, the Python
``BinaryReader`` wrapper) runs on top of them. Prints pass/fail counts and each failure.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_PYTHON = "~/.cache/tachyon-format/cpython-3.15/root/usr/bin/python3.15"
DEFAULT_DEPS = "~/.cache/tachyon-format/py315-deps"
TEST_MODULE = "test.test_profiling.test_sampling_profiler.test_binary_format"
REPLACED = ["BinaryWriter", "BinaryReader", "FrameInfo", "LocationInfo", "ThreadInfo",
            "InterpreterInfo", "zstd_available", "THREAD_STATUS_HAS_GIL", "THREAD_STATUS_ON_CPU",
            "THREAD_STATUS_UNKNOWN", "THREAD_STATUS_GIL_REQUESTED",
            "THREAD_STATUS_HAS_EXCEPTION", "THREAD_STATUS_MAIN_THREAD"]


def reference_python(explicit: str | None) -> str:
    return os.path.expanduser(explicit or os.environ.get("TACHYON_REFERENCE_PYTHON")
                              or DEFAULT_PYTHON)


def prepare_deps(python: str, deps: Path) -> None:
    """numpy and construct importable by *python*, in *deps* (once)."""
    version = subprocess.run([python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    deps.mkdir(parents=True, exist_ok=True)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--quiet"]
    if not (deps / "numpy").is_dir():
        # pip cannot install a wheel for another interpreter, but it can fetch one; a
        # wheel is a zip laid out for site-packages, so unpacking it installs it.
        with tempfile.TemporaryDirectory() as download:
            subprocess.run([*pip, "download", "numpy", "--no-deps", "--only-binary=:all:",
                            "--python-version", version, "-d", download], check=True)
            for wheel in Path(download).glob("numpy-*.whl"):
                with zipfile.ZipFile(wheel) as archive:
                    archive.extractall(deps)
    if not (deps / "construct").is_dir():
        subprocess.run([*pip, "install", "--no-deps", "--target", os.fspath(deps),
                        "construct>=2.10.70,<2.11"], check=True)


def outer(args: argparse.Namespace) -> int:
    python = reference_python(args.python)
    deps = Path(os.path.expanduser(args.deps))
    prepare_deps(python, deps)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.fspath(REPO / "src"),
                                                        os.fspath(deps)])}
    command = [python, os.fspath(Path(__file__).resolve()), "--inner"]
    if args.verbose:
        command.append("-v")
    return subprocess.run(command, env=env, check=False).returncode


def inner(verbose: bool) -> int:
    import unittest

    import _remote_debugging

    from tachyon_format import compat

    for name in REPLACED:
        setattr(_remote_debugging, name, getattr(compat, name))
    suite = unittest.defaultTestLoader.loadTestsFromName(TEST_MODULE)
    result = unittest.TextTestRunner(verbosity=2 if verbose else 1, stream=sys.stderr).run(suite)
    failed = {test.id() for test, _ in result.failures + result.errors}
    print(f"\nCPython test_binary_format.py with tachyon_format.compat: ran {result.testsRun}, "
          f"passed {result.testsRun - len(failed) - len(result.skipped)}, "
          f"failed {len(result.failures)}, errors {len(result.errors)}, "
          f"skipped {len(result.skipped)}")
    for test, trace in result.failures + result.errors:
        print(f"  FAIL {test.id().rsplit('.', 2)[-2:]}: {trace.strip().splitlines()[-1]}")
    return 0 if result.wasSuccessful() else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", help="reference CPython 3.15 (default: the installer's)")
    parser.add_argument("--deps", default=DEFAULT_DEPS, help="folder for its numpy/construct")
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    return inner(args.verbose) if args.inner else outer(args)


if __name__ == "__main__":
    sys.exit(main())
