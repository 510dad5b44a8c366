"""The declarations of CPython's checks during replay: each is the row of its number in
docs/format/reader.md#checks-during-replay, and every decoder of the region says its message
and names its field (one verdict for read, validate and salvage:
tests/formats/tachyon/test_checks.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import tachyon_format
from tachyon_format.errors import FormatError
from tachyon_format.formats.tachyon.region import replay_checks
from tests.formats.tachyon.region.helpers import ERROR_CASES, check_of, tachyon_file

PAGE = Path(__file__).parents[4] / "docs" / "format" / "reader.md"


def replay_rows() -> dict[int, str]:
    """Number -> the exact message of each row of the page's checks during replay."""
    text = PAGE.read_text().split("## Checks during replay", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for number, message in re.findall(r"^\| (\d+) \| .*? \| (?:`\w+Error`: )?`([^`]+)`",
                                      text, re.MULTILINE):
        rows[int(number)] = message
    return rows


@pytest.mark.parametrize("check", replay_checks.CHECKS, ids=lambda c: str(c.number))
def test_each_check_is_the_page_row_of_its_number(check):
    page = replay_rows()[check.number]
    assert re.sub(r"%(?:ll|z)?[udz]|%zd", "{}", page) == re.sub(r"\{\d\}", "{}", check.message)


def test_every_row_but_the_impossible_one_is_declared():
    """Check 6 (a u32 count beyond ``Py_ssize_t``) cannot fail; 17 is the file's sample count,
    checked after the last record (file-level)."""
    assert set(replay_rows()) - {c.number for c in replay_checks.CHECKS} == {6, 17}
    numbers = [c.number for c in replay_checks.CHECKS]
    assert numbers == sorted(numbers)


@pytest.mark.parametrize("engine", ["compiled", "numpy", "interpreted"])
@pytest.mark.parametrize("region, message", ERROR_CASES, ids=[m for _, m in ERROR_CASES])
def test_every_decoder_names_the_checks_field(engine, region, message):
    """The message and the field of the declaration whose message it is, from each decoder."""
    from tachyon_format.formats.tachyon.region import engines

    if engine == "compiled" and not engines.decoder_info()["compiled"]:
        pytest.skip("the compiled walk is not built here")
    data = tachyon_file(region, sample_count=1, thread_count=4, num_frames=10)
    with pytest.raises(FormatError) as caught:
        tachyon_format.read(data, format="tachyon", engine=engine)
    error = caught.value
    assert error.message == message
    check = check_of(message)
    assert error.path == check.path(int(message.split(": ")[-1]) if check.field and "{0}"
                                    in check.field else 0)
