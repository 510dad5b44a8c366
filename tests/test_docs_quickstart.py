"""docs/quickstart.md: its Python blocks run in order on a bundled profile, and its
``tachyon-format`` lines are valid command lines."""

from __future__ import annotations

import re
import shlex

import pytest

import tachyon_format
from tachyon_format.cli.main import build_parser
from tests.helpers.docs_pages import run_in_order
from tests.helpers.paths import REPO

PAGE = REPO / "docs" / "quickstart.md"
TEXT = PAGE.read_text(encoding="utf-8")


def test_python_blocks_run_in_order(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert "Condition.wait" in run_in_order(PAGE, tmp_path)
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
