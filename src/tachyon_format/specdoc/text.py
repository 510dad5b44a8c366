"""The little reStructuredText of the schema's docstrings, as Markdown (and as table cells)."""

from __future__ import annotations

import ast
import inspect
import re
from types import ModuleType


def rst_to_md(text: str) -> str:
    """The little reStructuredText the schema docstrings use: ``code`` and ``::`` blocks."""
    text = inspect.cleandoc(text)
    text = re.sub(r"``(.+?)``", r"`\1`", text)
    out: list[str] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.endswith("::") and i + 1 < len(lines) and not lines[i + 1].strip():
            out += [line[:-1], "", "```"]
            i += 2
            block: list[str] = []
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith("    ")):
                block.append(lines[i][4:])
                i += 1
            while block and not block[-1].strip():
                block.pop()
            out += [*block, "```", ""]
            continue
        out.append(line)
        i += 1
    return "\n".join(out).strip()


def attribute_docs(module: ModuleType) -> dict[str, str]:
    """Docstrings written under module-level assignments (``X = 1`` then ``\"\"\"doc\"\"\"``)."""
    tree = ast.parse(inspect.getsource(module))
    docs: dict[str, str] = {}
    body = tree.body
    for stmt, nxt in zip(body, body[1:], strict=False):
        if (
            isinstance(stmt, ast.Assign | ast.AnnAssign)
            and isinstance(nxt, ast.Expr)
            and isinstance(nxt.value, ast.Constant)
            and isinstance(nxt.value.value, str)
        ):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    docs[target.id] = inspect.cleandoc(nxt.value.value)
    return docs


def one_line(text: str) -> str:
    """*text* as one Markdown table cell: rst ``code`` as `code`, `*` and `|` escaped."""
    text = re.sub(r"``(.+?)``", r"`\1`", " ".join(text.split()))
    parts = text.split("`")
    parts[::2] = [part.replace("*", "\\*") for part in parts[::2]]  # outside code spans
    return "`".join(parts).replace("|", "\\|")


def first_line(doc: str) -> str:
    """The first paragraph of *doc*, as one table cell."""
    return one_line(inspect.cleandoc(doc).split("\n\n")[0])
