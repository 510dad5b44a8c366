"""``ProfileBuilder``: tiny, readable profiles for tests, written by the project's real
writers.

>>> from tachyon_format.testing import ProfileBuilder
>>> builder = ProfileBuilder(mode="wall", interval_us=1000)
>>> builder.sample(thread=1, t=1000, stack=["app.py:10 main", "app.py:20 work"],
...                status="has_gil|on_cpu")                          # doctest: +ELLIPSIS
<...ProfileBuilder ...>
>>> data = builder.to_bytes()                   # a Tachyon file CPython 3.15 reads

Stacks are listed **outermost first** (the caller, then what it called, the executing frame
last), as a traceback prints them; frames and statuses use the notation of
:mod:`tachyon_format.testing.notation`. The Tachyon bytes come from
:class:`tachyon_format.Writer` (CPython 3.15.2's ``BinaryWriter`` byte for byte), one
``add`` per sample in the order given; :meth:`ProfileBuilder.profile` reads them back with
:func:`tachyon_format.read`, and the other formats are converted from them by
:func:`tachyon_format.convert`, so every output is what the library itself writes.
"""

from __future__ import annotations

import io
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from .notation import Frame, parse_frame, parse_status

if TYPE_CHECKING:
    from tachyon_format import Profile

MODES = ("wall", "cpu", "gil", "all", "exception")
"""``profiling.sampling``'s modes, by their ``ProfilingMode`` number (0..4)."""


@dataclass(frozen=True)
class BuiltSample:
    """One sample as given to :meth:`ProfileBuilder.sample` (one per repeat), frames
    innermost first as the writer takes them."""

    interpreter: int
    thread: int
    timestamp_us: int
    status: int
    frames: tuple[tuple, ...]


class ProfileBuilder:
    """Collects samples; writes them as a profile in any format the library writes.

    *mode*: ``"wall"``, ``"cpu"``, ``"gil"``, ``"all"``, ``"exception"`` or ``None``
    (unknown), as ``profiling.sampling`` records it; *interval_us*: the sampling interval;
    *start_time_us*: the header's start time, also the default time of the first sample;
    *compression*: ``"zstd"`` or ``"none"`` for the sample region; *path*: where
    :meth:`write` writes when given no destination (the pytest fixture sets it)."""

    def __init__(self, *, mode: str | int | None = None, interval_us: int = 1000,
                 start_time_us: int = 0, compression: str = "zstd",
                 capture_features: int | None = None,
                 path: str | os.PathLike | None = None) -> None:
        self.mode = _mode_number(mode)
        self.interval_us = interval_us
        self.start_time_us = start_time_us
        self.compression = compression
        self.capture_features = capture_features
        self.path = None if path is None else Path(path)
        self.samples: list[BuiltSample] = []
        self.next_time_us = start_time_us

    def __repr__(self) -> str:
        return f"<ProfileBuilder {len(self.samples)} samples>"

    def sample(self, *, thread: int = 1, stack: list[str | Frame] | tuple = (),
               t: int | None = None, status: str | int = 0, interpreter: int = 0,
               repeat: int = 1) -> ProfileBuilder:
        """Add *repeat* samples of *thread* (of *interpreter*) with *stack* (outermost
        first) and *status*, at *t* µs and every interval after it (default: one interval
        after the last sample added, or the start time). Returns the builder, for chaining."""
        if repeat < 1:
            raise ValueError("repeat must be at least 1")
        if isinstance(stack, str):
            raise TypeError("stack is a list of frames, outermost first, not one string")
        frames = tuple(parse_frame(frame).key() for frame in reversed(stack))
        bits = parse_status(status)
        start = self.next_time_us if t is None else t
        for k in range(repeat):
            self.samples.append(BuiltSample(interpreter, thread, start + k * self.interval_us,
                                            bits, frames))
        self.next_time_us = start + repeat * self.interval_us
        return self

    # -- outputs ----------------------------------------------------------------------------

    def to_bytes(self, format: str = "tachyon") -> bytes:
        """The profile as a file of *format* (any format :func:`tachyon_format.write`
        writes)."""
        out = io.BytesIO()
        self._write_to(out, format)
        return out.getvalue()

    def profile(self) -> Profile:
        """The profile as :func:`tachyon_format.read` reads the Tachyon bytes."""
        import tachyon_format

        return tachyon_format.read(self.to_bytes())

    def write(self, destination: str | os.PathLike | BinaryIO | None = None, *,
              format: str | None = None) -> Path | None:
        """Write to *destination* (a path or a binary file; default: the builder's *path*)
        in *format* (default: from the path's name, as :func:`tachyon_format.convert` picks
        it, ``.gz`` included; else Tachyon). Returns the path written, ``None`` for a file
        object."""
        if destination is None:
            if self.path is None:
                raise ValueError("no destination: pass one, or give the builder a path")
            destination = self.path
        if not isinstance(destination, str | os.PathLike):
            self._write_to(destination, format or "tachyon")
            return None
        path = Path(destination)
        path.parent.mkdir(parents=True, exist_ok=True)
        self._write_to(path, format)
        return path

    def _write_to(self, destination: Path | BinaryIO, format: str | None) -> None:
        """The Tachyon file, written to a scratch file, copied (*format* ``tachyon``) or
        converted (*format*, or the one *destination*'s name says) to *destination*."""
        with tempfile.TemporaryDirectory(prefix="tachyon-format-builder-") as scratch:
            staged = os.path.join(scratch, "profile.bin")
            self._write_tachyon(staged)
            if format != "tachyon":
                import tachyon_format

                tachyon_format.convert(staged, destination, to=format)
            elif isinstance(destination, Path):
                shutil.copyfile(staged, destination)
            else:
                with open(staged, "rb") as f:
                    shutil.copyfileobj(f, destination)

    def _write_tachyon(self, path: str) -> None:
        from tachyon_format import Writer

        with Writer(path, self.interval_us, self.start_time_us,
                    compression=self.compression, mode=self.mode,
                    capture_features=self.capture_features) as writer:
            for s in self.samples:
                writer.add(s.thread, s.interpreter, s.timestamp_us, s.status, s.frames)


def _mode_number(mode: str | int | None) -> int | None:
    if mode is None or isinstance(mode, int):
        return mode
    try:
        return MODES.index(mode.lower())
    except ValueError:
        raise ValueError(f"unknown mode {mode!r} (known: {', '.join(MODES)})") from None
