"""CPython 3.15's ``python -m profiling.sampling replay --pstats`` as an oracle: its real CLI
(``profiling.sampling.cli.main``) run on many files in one reference-interpreter process."""

from __future__ import annotations

import json
import os

from .reference import run_reference

# Runs under the reference interpreter: a JSON list of argument lists on stdin; prints, per
# run, what the CLI printed to stdout (colours off: stdout is not a terminal, NO_COLOR set).
_RUNNER = """
import contextlib, io, json, os, sys
os.environ["NO_COLOR"] = "1"
os.environ.pop("FORCE_COLOR", None)
from profiling.sampling.cli import main
out = []
for args in json.load(sys.stdin):
    buffer = io.StringIO()
    sys.argv = ["profiling.sampling", "replay", *args]
    with contextlib.redirect_stdout(buffer):
        main()
    out.append(buffer.getvalue())
print(json.dumps(out))
"""


def replay_outputs(runs: list[list[str | os.PathLike]]) -> list[str]:
    """What each ``replay ARGS...`` printed, one reference process for all *runs*."""
    payload = json.dumps([[os.fspath(a) for a in args] for args in runs])
    return json.loads(run_reference(_RUNNER, input=payload).stdout)


def report_of(printed: str) -> str:
    """The report part of what ``replay --pstats`` printed without ``-o``: the stdout minus
    the three "Replaying ..." lines, the progress-bar line (carriage returns, ended by one
    newline) and the closing "Replayed N samples" line, which name the input path."""
    lines = printed.split("\n")
    assert lines[0].startswith("Replaying ") and lines[-2].startswith("Replayed "), printed
    return "\n".join(lines[4:-2]) + "\n"
