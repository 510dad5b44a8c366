"""One self-contained HTML page from a template and inlined assets (no network).

Templating is the standard library's :class:`string.Template` over ``assets/page.html``: the
pages have a handful of slots (title, CSS, body, data, script), so a template engine would be
a dependency for nothing. Only the template's ``$slots`` are substituted (``substitute``
fails on a missing one); CSS and JavaScript are values put in, never parsed as templates, so
their own ``$`` stay as written. Text goes in HTML-escaped, and the data as JSON in a
``<script type="application/json">`` block with ``</`` escaped, so no name can end the block.
"""

from __future__ import annotations

import html
import json
import os
from importlib import resources
from string import Template
from typing import Any


def asset(name: str) -> str:
    """The text of ``assets/<name>``."""
    return resources.files(__package__).joinpath("assets", name).read_text(encoding="utf-8")


def script_json(data: Any) -> str:
    """*data* as compact JSON that is safe inside a ``<script>`` element."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return text.replace("</", "<\\/").replace("<!--", "<\\!--")


def page(*, title: str, kind: str, css: list[str], body: str, data: Any,
         scripts: list[str]) -> str:
    """The page: *css* and *scripts* are asset names, inlined in order; *body* is HTML."""
    return Template(asset("page.html")).substitute(
        title=html.escape(title),
        kind=kind,
        css="\n".join(asset(name) for name in css),
        body=body,
        data=script_json(data),
        script="\n".join(asset(name) for name in scripts),
    )


def write_text(path: str | os.PathLike, text: str) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        out.write(text)
