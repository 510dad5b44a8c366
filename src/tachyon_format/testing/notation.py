"""The short text notation of frames and thread statuses that the testing helpers read and
print, so that a fixture and a failure message look alike.

A frame is written ``"file:line func"`` (``"app.py:10 main"``), optionally followed by
``" @OPNAME"`` or ``" @number"`` for the opcode it was executing (``"app.py:20 work
@BINARY_OP"``). A single word is a frame without a location, as CPython's profiler records
its synthetic frames: ``"<GC>"`` is function ``<GC>`` of file ``~``, no line. A file name
holding spaces, or a frame with columns, is a :class:`Frame`.

A status is the names of :class:`tachyon_format.ThreadStatus` bits joined by ``|``, in any
case (``"has_gil|on_cpu"``; numbers for bits without a name, ``"has_gil|0x40"``), an
``int``, or a ``ThreadStatus``; ``""`` is no bit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

NO_FILE = "~"
"""The file CPython's profiler gives a frame that has none (``<GC>``, ``<native>``)."""

STATUS_BITS = ("HAS_GIL", "ON_CPU", "UNKNOWN", "GIL_REQUESTED", "HAS_EXCEPTION", "MAIN_THREAD")
""":class:`tachyon_format.ThreadStatus`'s names, bit 0 first (kept here so that reading a
status does not load the schemas; a test checks they agree)."""

_FRAME = re.compile(r"(?P<file>\S+?)(?::(?P<line>-?\d+))?\s+(?P<func>[^@\s]\S*)"
                    r"(?:\s+@(?P<opcode>\S+))?")
_SYNTHETIC = re.compile(r"(?P<func>\S+)(?:\s+@(?P<opcode>\S+))?")


@dataclass(frozen=True)
class Frame:
    """One frame, as a Tachyon file stores it: positions are -1 when unknown (``lineno``
    -1: no location at all); ``end_lineno`` defaults to ``lineno``; ``opcode`` is a CPython
    3.15 opcode number or name, ``None`` when not captured."""

    filename: str
    funcname: str
    lineno: int = -1
    end_lineno: int | None = None
    column: int = -1
    end_column: int = -1
    opcode: int | str | None = None

    def key(self) -> tuple[str, str, int, int, int, int, int | None]:
        """The 7-tuple :meth:`tachyon_format.Writer.add` takes."""
        end_lineno = self.lineno if self.end_lineno is None else self.end_lineno
        return (self.filename, self.funcname, self.lineno, end_lineno, self.column,
                self.end_column, opcode_number(self.opcode))


def parse_frame(frame: str | Frame) -> Frame:
    """A :class:`Frame` from its notation (a :class:`Frame` is returned as it is)."""
    if isinstance(frame, Frame):
        return frame
    if not isinstance(frame, str):
        raise TypeError(f"a frame is a 'file:line func' string or a Frame, not {frame!r}")
    text = frame.strip()
    match = _FRAME.fullmatch(text)
    if match:
        line = match["line"]
        return Frame(match["file"], match["func"], -1 if line is None else int(line),
                     opcode=match["opcode"])
    match = _SYNTHETIC.fullmatch(text)
    if match:
        return Frame(NO_FILE, match["func"], opcode=match["opcode"])
    raise ValueError(f"cannot read frame {frame!r}: write 'file:line func', 'file func' or "
                     f"a single name for a frame without a location")


def frame_text(filename: str, funcname: str, lineno: int, opcode: int | None = None) -> str:
    """The notation of one frame (the inverse of :func:`parse_frame` for these fields)."""
    if lineno < 0 and filename == NO_FILE:
        text = funcname
    else:
        text = f"{filename}:{lineno} {funcname}" if lineno >= 0 else f"{filename} {funcname}"
    if opcode is not None and opcode >= 0:
        text += f" @{_opcode_name(opcode)}"
    return text


def opcode_number(opcode: int | str | None) -> int | None:
    """A CPython 3.15 opcode number from its number or name; None for none."""
    if opcode is None or isinstance(opcode, int):
        return opcode
    if opcode.isdigit():
        return int(opcode)
    from tachyon_format.schema.opcodes import OPNAMES

    try:
        return OPNAMES.index(opcode.upper())
    except ValueError:
        raise ValueError(f"unknown CPython 3.15 opcode {opcode!r}") from None


def _opcode_name(number: int) -> str:
    from tachyon_format.schema.opcodes import opcode_name

    return opcode_name(number) or str(number)


def parse_status(status: str | int) -> int:
    """The status byte of *status* (names joined by ``|``, or an int / ``ThreadStatus``)."""
    if isinstance(status, int):
        if not 0 <= status <= 0xFF:
            raise ValueError(f"a status is a byte, not {status}")
        return int(status)
    bits = 0
    for name in filter(None, (part.strip() for part in status.split("|"))):
        if name[:1].isdigit():  # (bits 6-7 have no name: status_text prints them as 0x..)
            bits |= parse_status(int(name, 0))
            continue
        try:
            bits |= 1 << STATUS_BITS.index(name.upper())
        except ValueError:
            known = "|".join(bit.lower() for bit in STATUS_BITS)
            raise ValueError(f"unknown thread status {name!r} (known: {known})") from None
    return bits


def status_text(status: int) -> str:
    """The notation of a status byte: its bits' names, ``0x..`` for bits 6-7, ``"0"`` for
    none."""
    names = [name.lower() for bit, name in enumerate(STATUS_BITS) if status >> bit & 1]
    if status >> len(STATUS_BITS):
        names.append(hex(status >> len(STATUS_BITS) << len(STATUS_BITS)))
    return "|".join(names) or "0"
