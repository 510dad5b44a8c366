"""How the analysis commands (``top``, ``callers``, ``diff``) print a table's rows: as JSON
lines, and their key columns as text a person reads."""

from __future__ import annotations

import json

BY = ("function", "file_function", "line", "opcode")
"""What a row of the analysis commands is (``--by``)."""


def print_json(table) -> None:
    """One JSON object per row, numpy values as Python's."""
    for row in table.rows():
        print(json.dumps(dict(zip(table.names, plain(row), strict=True))))


def plain(row) -> list:
    return [value.item() if hasattr(value, "item") else value for value in row]


def shown(key: str, value) -> str:
    """A key's value as text: an opcode by its CPython 3.15 name (and number)."""
    if key == "opcode":
        import tachyon_format

        number = int(value)
        if number < 0:
            return "-"
        name = tachyon_format.opcode_name(number)
        return f"{name} ({number})" if name else str(number)
    return str(value)
