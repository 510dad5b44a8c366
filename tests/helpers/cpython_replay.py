"""CPython 3.15's ``replay`` conversions (``python -m profiling.sampling replay --jsonl`` /
``--gecko``) as test oracles, run by the reference interpreter.

``replay_cli`` runs the command line itself, one file at a time; ``replay_many`` converts a
batch of files in one subprocess through the same steps as the command line (its
``_create_collector`` with the file's interval and mode, ``replay_samples``, ``export``),
to keep hypothesis tests fast.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .reference import run_reference

EXTENSIONS = {"jsonl": ".jsonl", "gecko": ".json"}

_CLI = """
import runpy, sys
sys.argv = ["profiling.sampling", *sys.argv[1:]]
runpy.run_module("profiling.sampling", run_name="__main__")
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


def replay_cli(fmt: str, source: str | os.PathLike, target: str | os.PathLike) -> Path:
    """``python3.15 -m profiling.sampling replay --<fmt> -o target source``."""
    run_reference(_CLI, "replay", f"--{fmt}", "-o", os.fspath(target), os.fspath(source))
    return Path(target)


def replay_many(fmt: str, sources: list[Path], directory: Path) -> list[Path]:
    """Each of *sources* converted to *fmt* in *directory* (one subprocess for all)."""
    targets = [directory / (Path(s).stem + f".cpython{EXTENSIONS[fmt]}") for s in sources]
    run_reference(_BATCH, input=json.dumps(
        [[fmt, os.fspath(s), os.fspath(t)] for s, t in zip(sources, targets, strict=True)]))
    return targets
