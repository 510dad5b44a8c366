"""The reference CPython 3.15 as a test oracle: its Tachyon writer, reader and profiler.

Everything runs in a subprocess of the reference interpreter, found by ``reference_python()``.
Tests that need it are marked ``@requires_reference`` and skip cleanly without it.

The sample description taken by ``reference_write`` mirrors ``BinaryWriter.write_sample``
calls, in JSON-able form::

    [[timestamp_us, [[interpreter_id, [[thread_id, status, [frame, ...]], ...]], ...]], ...]
    frame = [filename, location, funcname, opcode]    # innermost first
    location = [lineno, end_lineno, column, end_column] or None;  opcode = int or None
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from .paths import REPO

DECODER = REPO / "tools" / "cpython_decode.py"
INSTALLER = "tools/install-reference-cpython.sh"
DEFAULT_PREFIX_PYTHON = "~/.cache/tachyon-format/cpython-3.15/root/usr/bin/python3.15"
ENV_VAR = "TACHYON_REFERENCE_PYTHON"


def _usable(python: str) -> bool:
    """True if *python* runs and has the Tachyon reader/writer (``_remote_debugging``)."""
    try:
        probe = subprocess.run([python, "-c", "import _remote_debugging"],
                               capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0


def _candidates() -> list[str]:
    explicit = os.environ.get(ENV_VAR)
    if explicit:  # an explicit choice is never silently replaced by another interpreter
        return [explicit]
    on_path = shutil.which("python3.15")
    return [os.path.expanduser(DEFAULT_PREFIX_PYTHON), *([on_path] if on_path else [])]


@functools.cache
def reference_python() -> str | None:
    """Path of the reference interpreter, or None when there is none that works.

    ``$TACHYON_REFERENCE_PYTHON`` if set; else the installer's default prefix; else
    ``python3.15`` on PATH. Only an interpreter that imports ``_remote_debugging`` counts.
    """
    return next((python for python in _candidates() if _usable(python)), None)


requires_reference = pytest.mark.skipif(
    reference_python() is None,
    reason=(f"needs the reference CPython 3.15 with _remote_debugging: run {INSTALLER} "
            f"or set {ENV_VAR}"),
)


def run_reference(code_or_script: str | os.PathLike, *args: str,
                  input: str | None = None) -> subprocess.CompletedProcess:
    """Run Python code (a string) or a script (a path) under the reference interpreter.

    Output is text; a non-zero exit raises CalledProcessError with stderr attached.
    """
    python = reference_python()
    if python is None:
        pytest.skip(f"no reference CPython 3.15 (run {INSTALLER})")
    if isinstance(code_or_script, os.PathLike):
        cmd = [python, os.fspath(code_or_script), *args]
    else:
        cmd = [python, "-c", code_or_script, *args]
    return subprocess.run(cmd, input=input, capture_output=True, text=True, check=True,
                          encoding="utf-8")


def reference_decode(path: str | os.PathLike) -> str:
    """CPython's canonical decode of a Tachyon file (see tests/data/README.md)."""
    return run_reference(DECODER, os.fspath(path)).stdout


def reference_info(path: str | os.PathLike) -> dict:
    """``BinaryReader(path).get_info()``, as JSON types (python_version is a list)."""
    return json.loads(run_reference(DECODER, "--info", os.fspath(path)).stdout)


def reference_stats(path: str | os.PathLike) -> dict:
    """The reader's ``get_stats()`` record counters after one ``replay()``."""
    return json.loads(run_reference(DECODER, "--stats", os.fspath(path)).stdout)


def reference_batches(path: str | os.PathLike) -> list[list[int]]:
    """One ``[interpreter_id, thread_id, status, n_timestamps]`` per ``collect()`` call."""
    out = run_reference(DECODER, "--batches", os.fspath(path)).stdout
    return [json.loads(line) for line in out.splitlines()]


# Runs under the reference interpreter: reads {"path", "samples", "writer", "stats"} on stdin.
_WRITER = """
import json, sys
from _remote_debugging import BinaryWriter, FrameInfo, InterpreterInfo, LocationInfo, ThreadInfo

def frame(filename, location, funcname, opcode):
    location = None if location is None else LocationInfo(tuple(location))
    return FrameInfo((filename, location, funcname, opcode))

def call(interpreters):
    return [InterpreterInfo((iid, [ThreadInfo((tid, status, [frame(*f) for f in frames]))
                                   for tid, status, frames in threads]))
            for iid, threads in interpreters]

job = json.load(sys.stdin)
writer = BinaryWriter(job["path"], job["interval_us"], job["start_time_us"], **job["writer"])
for timestamp_us, interpreters in job["samples"]:
    writer.write_sample(call(interpreters), timestamp_us)
if job["stats"] is not None:
    writer.set_stats(*job["stats"])
writer.finalize()
"""


def reference_write(samples: list, path: str | os.PathLike, *, sample_interval_us: int = 1000,
                    start_time_us: int = 0, stats: list | tuple | None = None,
                    **writer_kwargs) -> Path:
    """Write *samples* (the description above) with CPython's own ``BinaryWriter``.

    *stats* is ``[duration_sec, sample_rate, error_rate, missed_samples]`` (the last two may
    be None or left out) for ``set_stats``; *writer_kwargs* are ``BinaryWriter``'s keyword
    arguments: ``compression=``, ``mode=``, ``capture_features=``.
    """
    job = {"path": os.fspath(path), "samples": samples, "interval_us": sample_interval_us,
           "start_time_us": start_time_us, "writer": writer_kwargs,
           "stats": None if stats is None else list(stats)}
    run_reference(_WRITER, input=json.dumps(job))
    return Path(path)
