"""docs/formats/gperftools.md: its examples run (on a committed libprofiler profile and a
Tachyon golden file), say what they claim, and its links resolve."""

from __future__ import annotations

import re
import shutil

import tachyon_format
from tests.helpers.docs_pages import links_resolve
from tests.helpers.libprofiler import COMMITTED
from tests.helpers.paths import DATA_DIR, REPO

PAGE = REPO / "docs" / "formats" / "gperftools.md"
TEXT = PAGE.read_text(encoding="utf-8")
BLOCKS = re.findall(r"```python\n(.*?)```", TEXT, flags=re.S)


def test_examples_run_and_say_what_they_claim(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copyfile(COMMITTED / "libprofiler_mixed.prof", tmp_path / "cpu.prof")
    shutil.copyfile(DATA_DIR / "threads_wall_zstd.bin", tmp_path / "python.bin")
    assert len(BLOCKS) == 2
    namespace: dict = {}
    for block in BLOCKS:
        exec(compile(block, str(PAGE.name), "exec"), namespace)
    profile = namespace["profile"]
    assert (profile.meta.period_type.type, profile.meta.period_type.unit) == ("cpu",
                                                                              "nanoseconds")
    assert profile.meta.period == 10_000_000
    assert [t.type for t in profile.meta.sample_types] == ["samples", "cpu"]
    assert (namespace["cpu_ns"] == namespace["counts"] * 10_000_000).all()
    assert namespace["row"] >= 0 and namespace["facts"].text.startswith(b"5")
    for name in ("copy.prof", "copy-be.prof", "python.prof"):
        assert tachyon_format.sniff(tmp_path / name) == "gperftools"
    assert (tmp_path / "copy.prof").read_bytes() == (tmp_path / "cpu.prof").read_bytes()
    assert tachyon_format.info(tmp_path / "copy-be.prof")["byte_order"] == "big"
    back = namespace["back"]
    assert "fib" in {back.strings[i] for i in back.frames.funcname}


def test_links_resolve_and_no_local_paths():
    links_resolve(PAGE)
