"""Progress bars: drawn on standard error when it is a terminal (a pseudo-terminal here), absent
when it is a pipe or with ``--quiet``, and never changing what a command prints; the Tachyon
reader's ``progress`` hook they are fed by."""

from __future__ import annotations

import fcntl
import importlib.util
import os
import pty
import select
import struct
import subprocess
import sys
import tempfile
import termios

import pytest

import tachyon_format
from tests.helpers.paths import DATA_DIR, REPO

FILE = DATA_DIR / "threads_wall_zstd.bin"
OTHER = DATA_DIR / "exceptions_mode_zstd.bin"
RUN = ("import sys\nfrom tachyon_format.cli import main, progress\n"
       "progress.DELAY_S = float(sys.argv[1])\n"
       "code = main(sys.argv[2:])\n"
       "print('tqdm loaded' if 'tqdm' in sys.modules else 'tqdm not loaded', file=sys.__stdout__)\n"
       "sys.exit(code)\n")
"""The command line with the bar's delay set (0: a small file's read draws it)."""


def run(args: list[str], *, terminal: bool, delay: float = 0.0) -> tuple[int, str, str]:
    """Exit status, standard output and standard error (a pseudo-terminal when
    *terminal*, else a pipe) of one command in a fresh process."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), *filter(
        None, [os.environ.get("PYTHONPATH")])])}
    command = [sys.executable, "-c", RUN, str(delay), *args]
    if not terminal:
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
        return done.returncode, done.stdout, done.stderr
    controller, follower = pty.openpty()
    # a new pseudo-terminal is 0 x 0, where a bar has no room: give it a terminal's size
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    # (standard output to a file: a full pipe nobody reads while the terminal is read would
    # block the command)
    with tempfile.TemporaryFile() as out_file, subprocess.Popen(
            command, stdout=out_file, stderr=follower, env=env) as proc:
        os.close(follower)
        err = bytearray()
        while True:  # read the terminal while the command runs, so that it never blocks
            ready, _, _ = select.select([controller], [], [], 60)
            if not ready:
                proc.kill()
                pytest.fail("the command hung")
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # EIO: every writer has closed the terminal
                break
            if not chunk:
                break
            err += chunk
        code = proc.wait()
        out_file.seek(0)
        out = out_file.read()
    os.close(controller)
    return code, out.decode(), err.decode(errors="replace")


needs_tqdm = pytest.mark.skipif(importlib.util.find_spec("tqdm") is None,
                                reason="the bars need tqdm (the 'progress' extra)")


@needs_tqdm
@pytest.mark.parametrize("args", [
    ["top", str(FILE), "-n", "5"],
    ["convert", str(FILE), "-", "--to", "collapsed"],
], ids=["top", "convert"])
def test_a_bar_of_samples_on_a_terminal_and_the_same_output(args):
    code, out, err = run(args, terminal=True)
    piped_code, piped_out, piped_err = run(args, terminal=False)
    from tqdm import tqdm

    total = tqdm.format_sizeof(tachyon_format.info(FILE)["sample_count"])
    assert code == piped_code == 0
    assert f"{FILE.name}:" in err and f"/{total} [" in err and "samples/s" in err
    assert out.endswith("\ntqdm loaded\n") and piped_out.endswith("\ntqdm not loaded\n")
    assert out.rsplit("tqdm", 1)[0] == piped_out.rsplit("tqdm", 1)[0]  # (the bar: stderr)
    assert piped_err == ""


@needs_tqdm
@pytest.mark.parametrize("args", [
    ["convert", str(FILE), "out.gecko.json"],
    ["flamegraph", str(FILE), "-o", "flame.html"],
    ["heatmap", str(FILE), "-o", "heat"],
], ids=["convert", "flamegraph", "heatmap"])
def test_the_whole_command_shows_progress(args, tmp_path, monkeypatch):
    """After the read, the writing (or drawing) shows a line too: a long write never looks
    stuck."""
    monkeypatch.chdir(tmp_path)
    code, _, err = run(args, terminal=True)
    assert code == 0
    assert ("writing " if args[0] != "flamegraph" else "drawing ") in err


@needs_tqdm
def test_quiet_draws_no_bar_and_loads_no_tqdm():
    code, out, err = run(["top", str(FILE), "-n", "3", "--quiet"], terminal=True)
    assert code == 0
    assert err == ""
    assert out.endswith("tqdm not loaded\n")


def test_quick_work_draws_no_bar():
    """Under the real delay a small file is read before any bar would be drawn."""
    code, out, err = run(["top", str(FILE), "-n", "3"], terminal=True, delay=30.0)
    assert (code, err) == (0, "")
    assert out.endswith("tqdm not loaded\n")


@needs_tqdm
@pytest.mark.parametrize("command", ["validate", "info"])
def test_a_bar_of_files_keeps_every_line(command):
    files = [str(FILE), str(OTHER), str(DATA_DIR / "synthetic_edges_raw.bin")]
    code, out, err = run([command, *files], terminal=True)
    piped = run([command, *files], terminal=False)
    assert (code, out.rsplit("tqdm", 1)[0]) == (piped[0], piped[1].rsplit("tqdm", 1)[0])
    assert "files" in err
    assert piped[2] == ""


def test_the_reader_reports_samples_decoded():
    calls: list[tuple[int, int]] = []
    total = tachyon_format.info(FILE)["sample_count"]
    plain = tachyon_format.read(FILE)
    fed = tachyon_format.read(FILE, chunk_size=1024, progress=lambda *a: calls.append(a))
    assert len(calls) > 2
    assert [done for done, _ in calls] == sorted(done for done, _ in calls)
    assert calls[-1] == (total, total) and {t for _, t in calls} == {total}
    assert (fed.samples.stack == plain.samples.stack).all()
    batch_calls: list[tuple[int, int]] = []
    batches = list(tachyon_format.iter_batches(FILE, samples_per_batch=300,
                                               progress=lambda *a: batch_calls.append(a)))
    assert sum(len(b.samples) for b in batches) == total
    assert batch_calls[-1] == (total, total)
