"""docs/pictures.md: its code blocks run, in order, on a bundled profile, and write what they
say."""

from __future__ import annotations

import re
import shutil
import xml.etree.ElementTree as ET

import tachyon_format
from tests.helpers.paths import DATA_DIR, REPO

PAGE = REPO / "docs" / "pictures.md"
BLOCKS = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.S)


def test_code_blocks_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copy(DATA_DIR / "threads_gil_blocking.bin", tmp_path / "profile.bin")
    namespace: dict = {}
    for index, block in enumerate(BLOCKS):
        exec(compile(block, f"{PAGE.name} block {index}", "exec"), namespace)
    for name in ("flame.html", "diff.html", "timeline.html"):
        text = (tmp_path / name).read_text(encoding="utf-8")
        assert text.startswith("<!DOCTYPE html>") and 'id="profile-data"' in text
        assert "http://" not in text and "https://" not in text  # self-contained
    assert ET.parse(tmp_path / "flame.svg").getroot().tag.endswith("svg")
    assert "my run" in (tmp_path / "flame.html").read_text(encoding="utf-8")
    assert isinstance(namespace["profile"], tachyon_format.Profile)
