"""Make real gperftools CPU profiles: compile a small C program against libprofiler, run it.

    python tools/make_gperftools_fixture.py            # (re)write tests/data/gperftools/
    python tools/make_gperftools_fixture.py --out DIR  # elsewhere

Needs gcc and gperftools' libprofiler (Debian: gcc, libgoogle-perftools-dev). The program,
``tools/workloads/cpu_work.c``, is built and run in ``<temp dir>/tachyon-format-gperftools/``
so that the memory map the profile ends with names neutral paths. Profiled runs are not
deterministic: each run gives other bytes. The tests call :func:`make_profile` themselves
(and skip, saying why, without gcc or libprofiler); the files in ``tests/data/gperftools``
let the other tests read a real libprofiler profile without either.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SOURCE = REPO / "tools" / "workloads" / "cpu_work.c"
OUT_DIR = REPO / "tests" / "data" / "gperftools"
WORK_DIR = Path(tempfile.gettempdir()) / "tachyon-format-gperftools"
CFLAGS = ("-O1", "-g", "-fno-omit-frame-pointer")
LINK = ("-Wl,--no-as-needed", "-lprofiler")  # nothing calls libprofiler: keep it linked
MODES = {"mixed": 20_000_000, "hot": 20_000_000}
"""Workload modes (see cpu_work.c) and their default amounts of work."""


class ToolchainMissing(Exception):
    """gcc or libprofiler is not there (the message says which, and how to get it)."""


@dataclass(frozen=True)
class Made:
    profile: Path
    binary: Path
    command: str


def build(work_dir: Path = WORK_DIR) -> Path:
    """The workload program, compiled into *work_dir*."""
    gcc = shutil.which("gcc")
    if gcc is None:
        raise ToolchainMissing("gcc is not installed (Debian: gcc)")
    work_dir.mkdir(parents=True, exist_ok=True)
    binary = work_dir / "cpu_work"
    done = subprocess.run([gcc, *CFLAGS, "-o", str(binary), str(SOURCE), *LINK],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise ToolchainMissing("cannot link against libprofiler (Debian: "
                               f"libgoogle-perftools-dev):\n{done.stderr.strip()}")
    return binary


def make_profile(out: Path, *, mode: str = "mixed", work: int | None = None,
                 frequency: int | None = None, work_dir: Path = WORK_DIR) -> Made:
    """Run the workload under libprofiler, writing its CPU profile to *out*.

    *frequency*: ``CPUPROFILE_FREQUENCY`` (samples per second; libprofiler's default is 100),
    *work*: loop length (the default runs about a second)."""
    binary = build(work_dir)
    work = MODES[mode] if work is None else work
    env = {**os.environ, "CPUPROFILE": str(out)}
    if frequency is not None:
        env["CPUPROFILE_FREQUENCY"] = str(frequency)
    done = subprocess.run([str(binary), mode, str(work)], env=env, cwd=work_dir,
                          capture_output=True, text=True, timeout=300)
    if done.returncode != 0 or not out.exists():
        raise ToolchainMissing(f"the profiled run failed (no {out.name}):\n{done.stderr}")
    settings = f"CPUPROFILE={out.name}" + (
        f" CPUPROFILE_FREQUENCY={frequency}" if frequency else "")
    return Made(out, binary, f"{settings} ./cpu_work {mode} {work}")


def package_version(name: str) -> str:
    done = subprocess.run(["dpkg-query", "-W", "-f=${Version}", name], capture_output=True,
                          text=True)
    return done.stdout.strip() if done.returncode == 0 else "unknown"


def readme(made: dict[str, Made], compiler: str) -> str:
    rows = []
    for name, item in made.items():
        data = item.profile.read_bytes()
        rows.append(f"| `{name}` | `{item.command}` | {len(data):,} | "
                    f"{hashlib.sha256(data).hexdigest()[:16]} |")
    return "\n".join([
        "# Real gperftools CPU profiles",
        "",
        "Written by gperftools' own libprofiler, profiling `tools/workloads/cpu_work.c`.",
        "Regenerate with `python tools/make_gperftools_fixture.py` (needs gcc and",
        "libgoogle-perftools-dev); profiled runs are not deterministic, so the bytes change.",
        "",
        "## Provenance",
        "",
        f"* Generated on {datetime.date.today().isoformat()} by "
        "`tools/make_gperftools_fixture.py`.",
        f"* libprofiler: Debian package libgoogle-perftools4 "
        f"{package_version('libgoogle-perftools4')}, x86-64 (64-bit little-endian words).",
        f"* Compiler: {compiler}, `gcc {' '.join(CFLAGS)} -o cpu_work cpu_work.c "
        f"{' '.join(LINK)}`.",
        f"* Run in `{WORK_DIR}` (the paths the memory maps name); no symbols are stored in",
        "  the profiles, only addresses and the memory map.",
        "",
        "## Files",
        "",
        "| file | run (in the directory above) | bytes | sha256[:16] |",
        "|---|---|---:|---|",
        *rows,
        "",
        "`mixed` reaches the leaf through three call paths; `hot` through one, so pprof's",
        "signal-frame heuristic cuts the leaf's two callers from every sample (as pprof does",
        "with any such file; `read(..., drop_signal_frames=False)` keeps them).",
        "",
    ])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT_DIR)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    made = {}
    try:
        for mode in MODES:
            name = f"libprofiler_{mode}.prof"
            made[name] = make_profile(WORK_DIR / name, mode=mode)
    except ToolchainMissing as exc:
        print(exc, file=sys.stderr)
        return 1
    for name, item in made.items():
        shutil.copyfile(item.profile, args.out / name)
        made[name] = Made(args.out / name, item.binary, item.command)
    version = subprocess.run(["gcc", "--version"], capture_output=True, text=True)
    (args.out / "README.md").write_text(readme(made, version.stdout.splitlines()[0]))
    for name in made:
        print(f"wrote {args.out / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
