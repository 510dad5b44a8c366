"""docs/quickstart.md: its Python blocks run in order on a bundled profile, and its
``tachyon-format`` lines are valid command lines."""

from __future__ import annotations

import contextlib
import io
import re
import shlex

import pytest

import tachyon_format
from tachyon_format.cli.main import build_parser
from tests.helpers.paths import DATA_DIR, REPO

PAGE = REPO / "docs" / "quickstart.md"
TEXT = PAGE.read_text(encoding="utf-8")


def test_python_blocks_run_in_order(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "profile.bin").write_bytes((DATA_DIR / "threads_wall_zstd.bin").read_bytes())
    namespace: dict = {}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        for index, block in enumerate(re.findall(r"```python\n(.*?)```", TEXT, re.S)):
            exec(compile(block, f"{PAGE.name} block {index}", "exec"), namespace)
    assert "Condition.wait" in printed.getvalue()
    for name in ("flame.html", "timeline.html", "profile.pb.gz", "profile.speedscope.json",
                 "profile.gecko.json", "profile.trace.json", "profile.collapsed"):
        assert (tmp_path / name).stat().st_size > 0, name
    assert tachyon_format.sniff(tmp_path / "profile.gecko.json") == "gecko"


@pytest.mark.parametrize("line", [line for block in re.findall(r"```sh\n(.*?)```", TEXT, re.S)
                                  for line in block.splitlines()
                                  if line.startswith("tachyon-format ")])
def test_command_lines_parse(line):
    words = shlex.split(line.split("&&")[0].split("#")[0])
    assert build_parser().parse_args(words[1:]).run is not None
