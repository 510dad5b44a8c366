"""Make ``tests/data/killed/killed_zstd.bin``: a recording whose profiler was killed (SIGKILL)
before it finished, as CPython 3.15's profiler leaves it on disk.

    python tools/make_killed_fixture.py PYTHON3.15 [OUT]

Runs ``PYTHON3.15 -m profiling.sampling run -r 20khz --opcodes --binary`` on
``tools/workloads/churn.py`` (a stack that changes at every sample), waits until the output
file holds data (the writer's first 512 KiB buffer went through zstd and stdio reached the
disk), then kills the profiler and the profiled script. The file keeps the writer's all-zero
placeholder header and a zstd stream cut where the kill found it; no tables, no footer.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
WORKLOAD = REPO / "tools" / "workloads" / "churn.py"
DEFAULT_OUT = REPO / "tests" / "data" / "killed" / "killed_zstd.bin"


def main(argv: list[str]) -> int:
    python = argv[1]
    out = Path(argv[2]) if len(argv) > 2 else DEFAULT_OUT
    out.unlink(missing_ok=True)
    profiler = subprocess.Popen(
        [python, "-m", "profiling.sampling", "run", "-r", "20khz", "--opcodes", "--binary",
         "-o", str(out), str(WORKLOAD)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (out.exists() and out.stat().st_size):
            time.sleep(0.2)
        time.sleep(0.3)
    finally:
        children = _children(profiler.pid)
        profiler.send_signal(signal.SIGKILL)
        profiler.wait()
        for pid in children:
            os.kill(pid, signal.SIGKILL)
    size = out.stat().st_size if out.exists() else 0
    print(f"{out}: {size} bytes")
    return 0 if size else 1


def _children(pid: int) -> list[int]:
    """The profiled script: the profiler's child processes (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


if __name__ == "__main__":
    sys.exit(main(sys.argv))
