"""``tachyon-format spec``: the committed format pages (checked current against the schema by
tests/test_docs_current.py), joined per format."""

from __future__ import annotations

import pytest

from tachyon_format import specdoc
from tachyon_format.cli import main
from tests.helpers.paths import REPO

DOCS = REPO / "docs" / "format"


def _body(name: str) -> str:
    """A committed page without its generated-file marker."""
    text = (DOCS / name).read_text(encoding="utf-8")
    assert text.startswith(specdoc.GENERATED + "\n"), name
    return text.removeprefix(specdoc.GENERATED + "\n").lstrip("\n")


@pytest.mark.parametrize("fmt", sorted(specdoc.FORMAT_FILES))
def test_spec_prints_the_committed_pages_in_order(fmt, capsys):
    assert main(["spec", fmt]) == 0
    out = capsys.readouterr().out
    assert specdoc.GENERATED not in out
    assert out == "\n".join(_body(name) for name in specdoc.FORMAT_FILES[fmt])


def test_every_generated_page_belongs_to_one_format():
    listed = [name for files in specdoc.FORMAT_FILES.values() for name in files]
    assert sorted(listed) == sorted(specdoc.render())


def test_spec_defaults_to_tachyon_and_writes_a_file(tmp_path, capsys):
    out = tmp_path / "tachyon.md"
    assert main(["spec", "-o", str(out)]) == 0
    assert capsys.readouterr().out == ""
    text = out.read_text(encoding="utf-8")
    assert text.startswith("# Tachyon format\n")
    assert "## header" in text and "## footer" in text
    assert main(["spec", "tachyon", "-o", "-"]) == 0
    assert capsys.readouterr().out == text


def test_spec_list_names_every_page(capsys):
    assert main(["spec", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == list(specdoc.FORMAT_FILES)
    for line, files in zip(lines, specdoc.FORMAT_FILES.values(), strict=True):
        assert line.split(": ")[1].split(", ") == list(files)


def test_an_unknown_format_is_refused(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["spec", "protobuf"])
    assert exit_.value.code == 2
    assert "invalid choice" in capsys.readouterr().err
    with pytest.raises(ValueError, match="one of: tachyon"):
        specdoc.reference("protobuf")


def test_the_cli_and_specdoc_agree_on_the_formats():
    from tachyon_format.cli import spec

    assert tuple(specdoc.FORMAT_FILES) == spec.FORMATS
