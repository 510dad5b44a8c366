"""CPython 3.15's ``python -m profiling.sampling replay`` as a test oracle, run by the
reference interpreter.

``replay_outputs`` runs the real command line (``profiling.sampling.cli.main``) on many
argument lists in one process and returns what each printed; ``replay_cli`` converts one
file with it; ``replay_many`` converts a batch of files through the same steps as the
command line (its ``_create_collector`` with the file's interval and mode,
``replay_samples``, ``export``), to keep hypothesis tests fast.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .reference import run_reference

EXTENSIONS = {"jsonl": ".jsonl", "gecko": ".json"}

# Runs under the reference interpreter: a JSON list of argument lists on stdin; prints, per
# run, what the CLI printed to stdout (colours off: stdout is not a terminal, NO_COLOR set).
_CLI = """
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

# Runs under the reference interpreter: [[format, input, output], ...] on stdin.
_BATCH = """
import contextlib, io, json, sys
from profiling.sampling.binary_reader import BinaryReader
from profiling.sampling.cli import _create_collector

for fmt, source, target in json.load(sys.stdin):
    with BinaryReader(source) as reader, contextlib.redirect_stdout(io.StringIO()):
        info = reader.get_info()
        collector = _create_collector(fmt, info["sample_interval_us"], skip_idle=False,
                                      mode=info.get("mode"))
        reader.replay_samples(collector)
        collector.export(target)
"""


def replay_outputs(runs: list[list[str | os.PathLike]]) -> list[str]:
    """What each ``replay ARGS...`` printed, one reference process for all *runs*."""
    payload = json.dumps([[os.fspath(a) for a in args] for args in runs])
    return json.loads(run_reference(_CLI, input=payload).stdout)


def report_of(printed: str) -> str:
    """The report part of what ``replay --pstats`` printed without ``-o``: the stdout minus
    the three "Replaying ..." lines, the progress-bar line (carriage returns, ended by one
    newline) and the closing "Replayed N samples" line, which name the input path."""
    lines = printed.split("\n")
    assert lines[0].startswith("Replaying ") and lines[-2].startswith("Replayed "), printed
    return "\n".join(lines[4:-2]) + "\n"


def replay_cli(fmt: str, source: str | os.PathLike, target: str | os.PathLike) -> Path:
    """``python3.15 -m profiling.sampling replay --<fmt> -o target source``."""
    replay_outputs([[f"--{fmt}", "-o", target, source]])
    return Path(target)


def replay_many(fmt: str, sources: list[Path], directory: Path) -> list[Path]:
    """Each of *sources* converted to *fmt* in *directory* (one subprocess for all)."""
    targets = [directory / (Path(s).stem + f".cpython{EXTENSIONS[fmt]}") for s in sources]
    run_reference(_BATCH, input=json.dumps(
        [[fmt, os.fspath(s), os.fspath(t)] for s, t in zip(sources, targets, strict=True)]))
    return targets
