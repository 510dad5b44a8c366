"""Debian's Chromium, headless, as the browser the rendered pages are loaded in: the DOM
after the page's scripts ran (``--dump-dom``), and screenshots."""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

requires_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium on PATH (Debian: apt-get install chromium; "
                             "tools/dev.sh installs it)")


def _run(url: str, *extra: str) -> str:
    with tempfile.TemporaryDirectory() as profile_dir:
        done = subprocess.run(
            [CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
             f"--user-data-dir={profile_dir}", "--window-size=1400,900", *extra, url],
            capture_output=True, text=True, timeout=120, check=False)
    if done.returncode:
        raise AssertionError(f"chromium failed ({done.returncode}): {done.stderr[-2000:]}")
    return done.stdout


def dump_dom(path: str | os.PathLike, fragment: str = "") -> str:
    """The page's DOM as serialised after its scripts ran."""
    return _run(Path(path).resolve().as_uri() + fragment, "--dump-dom")


def screenshot(path: str | os.PathLike, png: str | os.PathLike) -> None:
    _run(Path(path).resolve().as_uri(), f"--screenshot={os.fspath(png)}")


def root_attribute(dom: str, name: str) -> str | None:
    """An attribute of the ``<html>`` element of a dumped DOM, unescaped."""
    tag = re.search(r"<html\b[^>]*>", dom)
    assert tag, "no <html> element in the dumped DOM"
    found = re.search(rf'\s{re.escape(name)}="([^"]*)"', tag.group(0))
    return html.unescape(found.group(1)) if found else None


def texts_of(dom: str, css_class: str) -> list[str]:
    """The text of every ``<div class="... css_class ...">`` (no nested elements)."""
    pattern = rf'<div class="(?:[^"]* )?{re.escape(css_class)}(?: [^"]*)?"[^>]*>([^<]*)</div>'
    return [html.unescape(text) for text in re.findall(pattern, dom)]
