"""A line-level heat map of any profile with line numbers, as CPython 3.15's ``replay
--heatmap`` writes one: a directory of pages, ``index.html`` listing the source files by their
samples, and a page per file showing its source with each line's self and cumulative samples
(a line counts once per stack in cumulative) and a background as hot as its cumulative share.

The source is read from the path the profile recorded, where it is on this machine (as
CPython's heat map does); where it is not, the file's page says so and lists the lines that
have samples, with their functions. Pages are static HTML (:mod:`.page`): no script is needed
to read them.
"""

from __future__ import annotations

import html
import os
from dataclasses import dataclass, field
from pathlib import Path

from .page import page, write_text

MAX_SOURCE_BYTES = 8 << 20
"""A recorded path larger than this is not shown as source (it is no program text)."""


@dataclass
class _File:
    """The sampled lines of one source file."""

    name: str
    lines: dict[int, list] = field(default_factory=dict)  # lineno -> [self, cumulative, names]

    @property
    def self(self) -> int:
        return sum(row[0] for row in self.lines.values())

    @property
    def hottest(self) -> int:
        return max((row[1] for row in self.lines.values()), default=0)


def heatmap(lines, directory: str | os.PathLike, *, title: str | None = None) -> list[Path]:
    """Write the heat map of a profile's line table (``tachyon_format.analysis.
    function_table(profile, "line")``: per line, its ``self`` and ``cumulative`` weight) into
    *directory* (created if needed): ``index.html`` and one page per source file; returns
    the pages written, the index first. ValueError for a profile without line numbers."""
    table = lines
    if not len(table) or not (table["lineno"] > 0).any():
        raise ValueError("a heat map needs line numbers, and this profile has none")
    files: dict[str, _File] = {}
    for name, funcname, lineno, own, cumulative in zip(
            table["filename"].tolist(), table["funcname"].tolist(), table["lineno"].tolist(),
            table["self"].tolist(), table["cumulative"].tolist(), strict=True):
        if lineno <= 0:
            continue
        row = files.setdefault(name, _File(name)).lines.setdefault(lineno, [0, 0, []])
        row[0] += own
        row[1] = max(row[1], cumulative)  # (a line of two functions: the larger)
        row[2].append(funcname)
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    ordered = sorted(files.values(), key=lambda f: (-f.hottest, f.name))
    pages = {f.name: f"file_{number:04d}.html" for number, f in enumerate(ordered)}
    total = int(table.total)
    heading = title or "Heat map"
    written = [out / "index.html"]
    write_text(written[0], _index(heading, ordered, pages, total))
    for f in ordered:
        path = out / pages[f.name]
        write_text(path, _file_page(heading, f, total))
        written.append(path)
    return written


def _index(title: str, files: list[_File], pages: dict[str, str], total: int) -> str:
    rows = []
    for f in files:
        rows.append(
            f'<tr><td class="num">{f.hottest:,}</td><td class="num">{_share(f.hottest, total)}'
            f'</td><td class="num">{f.self:,}</td><td class="num">{len(f.lines):,}</td>'
            f'<td><a href="{pages[f.name]}">{html.escape(f.name)}</a></td></tr>')
    body = (f"<h1>{html.escape(title)}</h1>"
            f"<p>{len(files):,} source files, {total:,} samples in all. A file's samples are "
            "those of its hottest line (a line counts once per stack).</p>"
            '<table id="files"><thead><tr><th>samples</th><th>share</th><th>self</th>'
            "<th>lines</th><th>file</th></tr></thead><tbody>"
            + "".join(rows) + "</tbody></table>")
    return page(title=title, kind="heatmap-index", css=["common.css", "heatmap.css"],
                body=body, data={"files": len(files), "total": total}, scripts=["common.js"])


def _file_page(title: str, f: _File, total: int) -> str:
    source = _source_lines(f.name)
    hottest = max(f.hottest, 1)
    if source is None:
        note = ("<p class=\"note\">The source is not on this machine at the path the profile "
                "recorded: the lines that have samples are listed with their functions.</p>")
        numbers = sorted(f.lines)
    else:
        note = ""
        numbers = list(range(1, max(len(source), max(f.lines)) + 1))
    rows = []
    for lineno in numbers:
        own, cumulative, names = f.lines.get(lineno, (0, 0, []))
        text = (source[lineno - 1] if source is not None and lineno <= len(source)
                else ", ".join(sorted(set(names))) if source is None else "")
        heat = cumulative / hottest
        style = f' style="background:rgba(255,96,0,{0.08 + 0.72 * heat:.3f})"' if (
            cumulative) else ""
        rows.append(
            f'<tr id="L{lineno}"{style} data-cumulative="{cumulative}"><td class="num">{lineno}'
            f'</td><td class="num">{own or ""}</td><td class="num">{cumulative or ""}</td>'
            f'<td class="num">{_share(cumulative, total) if cumulative else ""}</td>'
            f'<td class="src">{html.escape(text)}</td></tr>')
    body = (f'<p><a href="index.html">{html.escape(title)}</a></p>'
            f"<h1>{html.escape(f.name)}</h1>{note}"
            '<table id="source"><thead><tr><th>line</th><th>self</th><th>cumulative</th>'
            "<th>share</th><th>source</th></tr></thead><tbody>" + "".join(rows)
            + "</tbody></table>")
    return page(title=f"{f.name} - {title}", kind="heatmap-file",
                css=["common.css", "heatmap.css"], body=body,
                data={"file": f.name, "lines": len(f.lines), "source": source is not None},
                scripts=["common.js"])


def _source_lines(path: str) -> list[str] | None:
    """The lines of the source file at *path* (undecodable bytes replaced), or None where it
    is not a readable file of a plausible size."""
    try:
        if not os.path.isfile(path) or os.path.getsize(path) > MAX_SOURCE_BYTES:
            return None
        with open(path, encoding="utf-8", errors="replace") as source:
            return source.read().splitlines()
    except OSError:
        return None


def _share(part: int, total: int) -> str:
    return f"{100 * part / total:.1f}%" if total else "-"


__all__ = ["heatmap"]
