"""docs/testing.md: its Python examples run and print what they say, its sample failure
message is the real one, and its pytest examples pass (or fail) under pytester."""

from __future__ import annotations

import contextlib
import io
import re
import shlex

import pytest

from tachyon_format.testing import ProfileBuilder
from tests.helpers.docs_pages import links_resolve
from tests.helpers.paths import REPO

pytest_plugins = ["pytester"]
PAGE = REPO / "docs" / "testing.md"
TEXT = PAGE.read_text(encoding="utf-8")
PYTHON = re.findall(r"```python\n(.*?)```", TEXT, flags=re.S)
TEST_FILE = "# test_profiles.py\n"
FENCED = re.compile(r"```\w*\n(.*?)```", flags=re.S)
CODE = FENCED.findall(TEXT) + re.findall(r"`([^`]+)`", FENCED.sub("", TEXT))
"""Everything the page shows as code: the blocks, and the inline spans."""


def run_block(block: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, PAGE.name, "exec"), {"__name__": "docs_testing"})
    for line in block.splitlines():
        if "print(" in line and "#" in line:
            for word in line.split("#", 1)[1].split():
                assert word in out.getvalue(), (line, out.getvalue())
    return out.getvalue()


@pytest.mark.parametrize("index", [i for i, b in enumerate(PYTHON)
                                   if not b.startswith(TEST_FILE)])
def test_python_examples_run(index, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run_block(PYTHON[index])


def test_the_failure_shown_is_the_real_one(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (block,) = [b for b in PYTHON if "assert_profiles_equal(before" in b]
    (shown,) = re.findall(r"which prints:\n\n```text\n(.*?)```", TEXT, flags=re.S)
    assert run_block(block) == shown


def test_the_builder_example_writes_what_it_says(tmp_path, monkeypatch):
    import tachyon_format

    monkeypatch.chdir(tmp_path)
    run_block(PYTHON[0])
    assert tachyon_format.sniff("profile.pb.gz") == "pprof"
    assert tachyon_format.info("profile.bin")["mode"] == 1


@pytest.fixture(scope="module", autouse=True)
def library_loaded():
    """(see test_plugin.py: pytester's in-process runs must not be the first to load numpy)"""
    import tachyon_format

    tachyon_format.validate(ProfileBuilder().sample(stack=["a.py:1 f"]).to_bytes())
    tachyon_format.validate(b"HCAT" + bytes(60))


def test_the_plugin_examples_work(pytester):
    (test_file,) = [b for b in PYTHON if b.startswith(TEST_FILE)]
    pytester.makepyfile(test_profiles=test_file)
    (command,) = re.findall(r"```sh\n(pytest .*?)\n```", TEXT)
    profiles = pytester.path / "build" / "profiles" / "nightly"
    profiles.mkdir(parents=True)
    ProfileBuilder().sample(stack=["a.py:1 f"]).write(profiles / "ok.bin")
    args = ["-p", "tachyon_format.testing.plugin", *shlex.split(command)[1:]]
    result = pytester.runpytest(*args)
    result.assert_outcomes(passed=1)
    assert result.ret == 0
    result.stdout.fnmatch_lines(["valid: *build/profiles/nightly/ok.bin"])
    (profiles / "bad.pb.gz").write_bytes(b"\x1f\x8b broken")
    (ini,) = re.findall(r"```ini\n(.*?)```", TEXT, flags=re.S)
    pytester.makeini(ini)
    failed = pytester.runpytest("-p", "tachyon_format.testing.plugin")
    assert failed.ret == pytest.ExitCode.TESTS_FAILED
    failed.stdout.fnmatch_lines(["*bad.pb.gz is not valid*", "1 of 2 profile files are invalid"])


def test_links_resolve_and_the_readme_links_the_page():
    links_resolve(PAGE)
    assert "(docs/testing.md)" in (REPO / "README.md").read_text(encoding="utf-8")


def test_every_helper_and_option_is_on_the_page():
    import inspect

    from tachyon_format.testing import assert_profiles_equal, strategies

    for function in (assert_profiles_equal, strategies.profiles.__wrapped__,
                     ProfileBuilder.__init__, ProfileBuilder.sample):
        for name in inspect.signature(function).parameters:
            if name not in ("a", "b", "draw", "self"):
                assert any(re.search(rf"\b{name}\b", code) for code in CODE), name
