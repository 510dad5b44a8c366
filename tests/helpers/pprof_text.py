"""pprof's two text views of a profile, for comparing ours with Go's.

* :func:`go_profile_string` renders one of our :class:`~tachyon_format.Profile` objects as
  google/pprof's ``Profile.String()`` (``profile/profile.go``) would render the pprof
  ``Profile`` it stands for: frame row ``i`` is location ``i + 1``, mapping row ``j`` is
  mapping ``j + 1``, samples in order. pprof's own ``.string`` goldens and Go's output can
  then be compared byte for byte.
* :func:`parse_go_profile_string` reads that text back (also what ``go tool pprof -raw``
  prints), and :func:`stack_totals` reduces either side to what a merge cannot change:
  per stack of (address, mapping file, function) the summed values.

Not format-specific: any profile in the model renders (a frame "has a line" for pprof when
it has a function or file name; unknown line and column numbers, -1 in the model, are 0).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from tachyon_format import Profile


def _text(profile: Profile, row: int) -> str:
    return profile.strings.raw(int(row)).decode("utf-8", "surrogateescape")


def go_profile_string(profile: Profile, *, columns: bool = True) -> str:
    """Go's ``Profile.String()`` of the pprof profile *profile* stands for (*columns*: as
    pprof prints it since it has ``Line.column``, ``file:line:column``; else ``file:line``)."""
    meta = profile.meta
    if meta.time_ns or meta.duration_ns:
        raise NotImplementedError("Time and Duration lines (Go's time formatting)")
    out = []
    if meta.period_type is not None:
        out.append(f"PeriodType: {meta.period_type.type} {meta.period_type.unit}")
    out.append(f"Period: {meta.period}")
    out.append("Samples:")
    default = meta.default_sample_type or ""
    out.append(" ".join(f"{t.type}/{t.unit}{'[dflt]' if t.type == default else ''}"
                        for t in meta.sample_types).strip())
    values = profile.samples.values
    stacks = profile.stacks.tuples()
    for i, stack in enumerate(profile.samples.stack.tolist()):
        row = values[i].tolist() if values is not None else [1]
        text = "".join(f" {v:10d}" for v in row) + ": "
        out.append(text + "".join(f"{frame + 1} " for frame in stacks[stack]))
    out.append("Locations")
    frames = profile.frames
    address = frames.address
    mapping = frames.mapping
    for i in range(len(frames)):
        head = f"{i + 1:6d}: {0 if address is None else int(address[i]):#x} "
        if mapping is not None and mapping[i] >= 0:
            head += f"M={int(mapping[i]) + 1} "
        name, file = _text(profile, frames.funcname[i]), _text(profile, frames.filename[i])
        if not name and not file:
            out.append(head)
            continue
        line, column = max(int(frames.lineno[i]), 0), max(int(frames.column[i]), 0)
        where = f"{file}:{line}:{column}" if columns else f"{file}:{line}"
        out.append(f"{head}{name} {where} s=0")
    out.append("Mappings")
    m = profile.mappings
    for j in range(len(m.start)):
        out.append(f"{j + 1}: {int(m.start[j]):#x}/{int(m.limit[j]):#x}/{int(m.offset[j]):#x} "
                   f"{_text(profile, m.filename[j])} {_text(profile, m.build_id[j])} ")
    return "\n".join(out) + "\n"


# --- reading the text back ----------------------------------------------------------------------


@dataclass
class GoProfileText:
    """The parts of a ``Profile.String()`` text that the comparisons use."""

    period_type: str = ""
    period: int = 0
    sample_types: list[str] = field(default_factory=list)
    samples: list[tuple[tuple[int, ...], tuple[int, ...]]] = field(default_factory=list)
    locations: dict[int, tuple[int, int, tuple[str, ...]]] = field(default_factory=dict)
    mappings: dict[int, tuple[int, int, int, str, str]] = field(default_factory=dict)


_SAMPLE = re.compile(r"^((?: +-?\d+)+): ((?:\d+ )*)$")
_LOCATION = re.compile(r"^ *(\d+): (0x[0-9a-f]+) (?:M=(\d+) )?(?:\[F\] )?(.*)$")
_MAPPING = re.compile(r"^(\d+): (0x[0-9a-f]+)/(0x[0-9a-f]+)/(0x[0-9a-f]+) (.*?) (\S*) (\S*)$")


def parse_go_profile_string(text: str) -> GoProfileText:
    """The samples, locations and mappings of a ``Profile.String()`` text."""
    out = GoProfileText()
    section = "head"
    last_location = None
    for line in text.splitlines():
        if line in ("Samples:", "Locations", "Mappings"):
            section = line
            continue
        if section == "head":
            if line.startswith("PeriodType: "):
                out.period_type = line[len("PeriodType: "):]
            elif line.startswith("Period: "):
                out.period = int(line[len("Period: "):])
        elif section == "Samples:":
            if match := _SAMPLE.match(line):
                out.samples.append((tuple(int(v) for v in match.group(1).split()),
                                    tuple(int(v) for v in match.group(2).split())))
            elif not out.sample_types:
                out.sample_types = line.split()
            else:
                raise AssertionError(f"sample line not understood: {line!r}")
        elif section == "Locations":
            if line.startswith("             "):  # a further (inlined) line of a location
                address, mapping, lines = out.locations[last_location]
                out.locations[last_location] = (address, mapping, (*lines, line.strip()))
                continue
            match = _LOCATION.match(line)
            assert match, f"location line not understood: {line!r}"
            last_location = int(match.group(1))
            rest = match.group(4).strip()
            out.locations[last_location] = (int(match.group(2), 16), int(match.group(3) or 0),
                                            (rest,) if rest else ())
        elif section == "Mappings":
            match = _MAPPING.match(line)
            assert match, f"mapping line not understood: {line!r}"
            out.mappings[int(match.group(1))] = (
                int(match.group(2), 16), int(match.group(3), 16), int(match.group(4), 16),
                match.group(5), match.group(6))
    return out


def stack_totals(text: GoProfileText) -> Counter:
    """Per stack, innermost first, of (address, mapping file or "", first line's text):
    the summed sample values (zero totals left out, as merging drops them). Invariant under
    pprof's merging and renumbering."""
    totals: Counter = Counter()
    for values, locations in text.samples:
        key = []
        for ident in locations:
            address, mapping, lines = text.locations[ident]
            file = text.mappings[mapping][3] if mapping else ""  # pprof's driver adds an
            # empty mapping for locations without one
            key.append((address, file, lines[0] if lines else ""))
        for index, value in enumerate(values):
            totals[(tuple(key), index)] += value
    return Counter({key: value for key, value in totals.items() if value})
