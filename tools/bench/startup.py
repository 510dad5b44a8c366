"""Start-up time of ``tachyon-format info FILE`` against CPython 3.15's own ``get_info()``.

    python tools/bench/startup.py FILE [--reference-python PATH] [--rounds N]

Each command runs in a fresh process, the commands interleaved round by round (so that a
busy moment of the machine hits all of them alike); the report is the best and the median
of the rounds, in seconds. Bytecode is cached in a temporary ``PYTHONPYCACHEPREFIX`` that
every command shares (a first, untimed round fills it), since an installed package runs
from cached bytecode. The commands:

* ``cpython-c``: ``_remote_debugging.BinaryReader(FILE).get_info()``, the C reader alone;
* ``cpython-sampling``: ``profiling.sampling.binary_reader.BinaryReader``, the wrapper that
  CPython's ``replay`` command opens a file with (it imports the collectors);
* ``ours-dev``, ``ours-3.15``: ``python -m tachyon_format info FILE`` under the development
  Python and (with ``--dev-python-315``) under CPython 3.15, with this checkout's ``src``
  first on the path.

With ``--convert``, the whole of a small conversion as a user runs it:

* ``numpy``: ``python -c "import numpy"``, what every reading command pays first;
* ``ours-collapsed``, ``ours-pprof``: ``python -m tachyon_format convert FILE OUT`` to
  collapsed stacks and to pprof; the report gives their time beyond ``numpy``;
* ``cpython-collapsed``: ``python3.15 -m profiling.sampling replay --collapsed -o OUT FILE``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
CPYTHON_C = ("from _remote_debugging import BinaryReader; import sys; "
             "r = BinaryReader(sys.argv[1]); r.get_info(); r.close()")
CPYTHON_SAMPLING = ("from profiling.sampling.binary_reader import BinaryReader; import sys\n"
                    "with BinaryReader(sys.argv[1]) as r: r.get_info()")


def commands(file: str, reference: str, dev: str, dev_315: str | None,
             convert_dir: str | None = None) -> dict[str, list[str]]:
    """The timed commands by name (with *convert_dir*: the conversion commands, writing
    there)."""
    ours = ["-m", "tachyon_format", "info", file]
    found = {
        "cpython-c": [reference, "-c", CPYTHON_C, file],
        "cpython-sampling": [reference, "-c", CPYTHON_SAMPLING, file],
        "ours-dev": [dev, *ours],
    }
    if dev_315:
        found["ours-3.15"] = [dev_315, *ours]
    if convert_dir:
        out = Path(convert_dir)
        found = {
            "numpy": [dev, "-c", "import numpy"],
            "ours-collapsed": [dev, "-m", "tachyon_format", "convert", "-q", file,
                               str(out / "ours.collapsed")],
            "ours-pprof": [dev, "-m", "tachyon_format", "convert", "-q", file,
                           str(out / "ours.pb.gz")],
            "cpython-collapsed": [reference, "-m", "profiling.sampling", "replay",
                                  "--collapsed", "-o", str(out / "cpython.collapsed"), file],
        }
    return found


def time_once(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def measure(cmds: dict[str, list[str]], rounds: int, env: dict[str, str]) -> dict[str, list]:
    """Seconds per command per round, after one untimed round that fills the bytecode cache."""
    for cmd in cmds.values():
        time_once(cmd, env)
    times: dict[str, list[float]] = {name: [] for name in cmds}
    for _ in range(rounds):
        for name, cmd in cmds.items():
            times[name].append(time_once(cmd, env))
    return times


def report(times: dict[str, list[float]]) -> str:
    base = times.get("numpy")
    lines = ["| command | best (s) | median (s) |" + (" beyond numpy, median (ms) |" if base
                                                        else ""),
             "|---|---:|---:|" + ("---:|" if base else "")]
    for name, runs in times.items():
        beyond = ""
        if base and name.startswith("ours"):
            extra = statistics.median(a - b for a, b in zip(runs, base, strict=True))
            beyond = f" {1000 * extra:.0f} |"
        elif base:
            beyond = " |"
        lines.append(f"| {name} | {min(runs):.3f} | {statistics.median(runs):.3f} |{beyond}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file")
    parser.add_argument("--reference-python",
                        default=os.environ.get("TACHYON_REFERENCE_PYTHON", "python3.15"))
    parser.add_argument("--dev-python", default=sys.executable)
    parser.add_argument("--dev-python-315",
                        help="a CPython 3.15 with the project's dependencies (its venv's "
                        "python), for the ours-3.15 row")
    parser.add_argument("--src", default=str(SRC), help="the package's sources to time "
                        "(e.g. an older checkout's src, for before / after)")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--convert", action="store_true",
                        help="time conversions of FILE (collapsed, pprof) against numpy's "
                        "import and CPython's replay --collapsed, instead of info")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "PYTHONPYCACHEPREFIX": cache,
               "PYTHONPATH": os.pathsep.join(filter(None, (args.src,
                                                            os.environ.get("PYTHONPATH"))))}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        with tempfile.TemporaryDirectory() as out:
            cmds = commands(args.file, args.reference_python, args.dev_python,
                            args.dev_python_315, out if args.convert else None)
            print(report(measure(cmds, args.rounds, env)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
