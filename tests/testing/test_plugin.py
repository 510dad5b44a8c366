"""The pytest plugin, run in pytest's own ``pytester``: the ``tachyon_profile`` fixture, the
session-end validation, and that it stays inert (and light) unless used."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import tomllib

import pytest

from tachyon_format.testing import ProfileBuilder
from tests.helpers.paths import DATA_DIR, REPO

pytest_plugins = ["pytester"]
PLUGIN = "tachyon_format.testing.plugin"


@pytest.fixture(autouse=True, scope="module")
def library_loaded():
    """pytester's in-process runs drop the modules first imported inside them, and numpy's C
    core cannot be imported twice in one process: load what the plugin uses out here."""
    import tachyon_format

    tachyon_format.validate(ProfileBuilder().sample(stack=["a.py:1 f"]).to_bytes())
    tachyon_format.validate(b"HCAT" + bytes(60))


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("-p", PLUGIN, "-p", "no:cacheprovider", *args)


def test_the_fixture_builds_profiles_in_tmp_path(pytester):
    pytester.makepyfile(test_fixture="""
        import tachyon_format

        def test_profile(tachyon_profile, tmp_path):
            path = (tachyon_profile("run.bin", mode="cpu")
                    .sample(thread=1, t=5, stack=["app.py:1 main", "app.py:2 work"],
                            status="has_gil")
                    .write())
            assert path == tmp_path / "run.bin"
            assert tachyon_format.info(path)["mode"] == 1
            assert tachyon_format.validate(path) == []
            pprof = tachyon_profile("run.pb.gz").sample(stack=["a.py:1 f"]).write()
            assert tachyon_format.sniff(pprof) == "pprof"
    """)
    run(pytester).assert_outcomes(passed=1)


def write_profiles(directory) -> None:
    directory.mkdir()
    ProfileBuilder().sample(stack=["app.py:1 main"]).write(directory / "good.bin")
    (directory / "bad.bin").write_bytes((DATA_DIR / "exceptions_mode_zstd.bin").read_bytes()[:100])


def test_invalid_files_fail_the_session_and_are_listed(pytester):
    write_profiles(pytester.path / "profiles")
    pytester.makepyfile(test_nothing="def test_ok():\n    pass\n")
    result = run(pytester, "--tachyon-validate=profiles/*.bin")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines([
        "*tachyon-format validation*",
        "*profiles/bad.bin is not valid: 3 problems",
        "  1. Invalid string table offset: * exceeds file size 100 "
        "(offset 40, header -> string_table_offset)",
        "     severity unreadable; offset 40; field header -> string_table_offset",
        "  2. Invalid frame table offset: * exceeds file size 100 *",
        "valid: *profiles/good.bin",
        "1 of 2 profile files are invalid",
    ])


def test_files_the_tests_write_are_checked_at_the_end(pytester):
    """The use case: a suite whose code under test writes profiles; the ini setting."""
    pytester.makeini("[pytest]\ntachyon_validate =\n    out/**/*.bin\n")
    pytester.makepyfile(test_writer="""
        import pathlib

        def test_writes_a_broken_profile():
            out = pathlib.Path("out/deep")
            out.mkdir(parents=True)
            (out / "x.bin").write_bytes(b"HCAT" + bytes(60))
    """)
    result = run(pytester)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*out/deep/x.bin is not valid: 4 problems*",
                                 "  1. Unsupported format version 0 *"])


def test_valid_files_and_failing_tests_keep_their_exit_status(pytester):
    write_profiles(pytester.path / "profiles")
    pytester.makepyfile(test_fails="def test_no():\n    assert False\n")
    result = run(pytester, "--tachyon-validate=profiles/good.bin")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["valid: *profiles/good.bin"])
    pytester.makepyfile(test_fails="def test_yes():\n    pass\n")
    assert run(pytester, "--tachyon-validate=profiles/good.bin").ret == pytest.ExitCode.OK
    nothing = run(pytester, "--tachyon-validate=nowhere/*.bin")
    nothing.stdout.fnmatch_lines(["no file matches nowhere/*.bin"])


def test_inert_unless_used(pytester):
    write_profiles(pytester.path / "profiles")  # (invalid files that nobody asked to check)
    pytester.makepyfile(test_plain="def test_plain():\n    pass\n")
    result = run(pytester)
    assert result.ret == pytest.ExitCode.OK
    assert "tachyon-format validation" not in result.stdout.str()
    assert "profiles/bad.bin" not in result.stdout.str()
    run(pytester, "--help").stdout.fnmatch_lines(["*--tachyon-validate=GLOB*"])


def test_loading_the_plugin_imports_neither_numpy_nor_the_library():
    code = ("import sys, tachyon_format.testing.plugin; "
            "print(sorted(m for m in sys.modules if m.startswith(('numpy', 'construct', "
            "'tachyon_format.model', 'tachyon_format.testing.builder', 'hypothesis'))))")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO / "src"), str(REPO)]))
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True, env=env).stdout.strip()
    assert loaded == "[]"


def test_the_entry_point_names_the_plugin_module():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["entry-points"]["pytest11"] == {PLUGIN: PLUGIN}
    assert importlib.import_module(PLUGIN).tachyon_profile is not None
