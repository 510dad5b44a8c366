"""pprof test oracles: the protobuf classes as an independent decoder, and Go's pprof.

``canonical(data)`` decodes a pprof file with the protobuf classes (upb) and resolves every
id and string index, so two files are *semantically equal* when their canonical forms are:
same header facts, same samples in order (each: its locations' contents, values, labels as a
multiset), same tables up to id renumbering.

``parse_raw`` reads the ``-raw`` output of ``go tool pprof`` (run privately by
``tests/helpers/go_oracle.py``, the ``go_tool`` fixture) into comparable samples.
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from tachyon_format.schema import protobuf_plain
from tachyon_format.schema.pprof_plain import PROTO

from .paths import SHARED_FIXTURES

PPROF_FIXTURES = SHARED_FIXTURES / "pprof_proto"
UPSTREAM_PROTO = PPROF_FIXTURES / "google-pprof" / "proto" / "profile.proto"


def fixture_files() -> list[Path]:
    """Every pprof file of the shared fixtures (the .proto schema aside)."""
    if not PPROF_FIXTURES.is_dir():
        return []
    return sorted(p for p in PPROF_FIXTURES.rglob("*") if p.is_file() and p.suffix != ".proto")


def fixture_params():
    files = fixture_files()
    if not files:
        return [pytest.param(None, marks=pytest.mark.skip(
            reason=f"no pprof fixtures at {PPROF_FIXTURES} (shared fixtures absent)"))]
    return [pytest.param(p, id=p.name) for p in files]


def message_classes() -> dict[str, type]:
    """The protobuf classes of ``profile.proto``, built from the declared messages."""
    return protobuf_plain.message_classes(PROTO)


def message_of(data: bytes):
    raw = gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
    return message_classes()["Profile"].FromString(raw)


def canonical(data: bytes) -> tuple:
    """The profile in *data*, ids and string indices resolved (see the module doc)."""
    p = message_of(data)
    s = list(p.string_table)
    functions = {f.id: (s[f.name], s[f.system_name], s[f.filename], f.start_line)
                 for f in p.function}
    mappings = {m.id: (m.memory_start, m.memory_limit, m.file_offset, s[m.filename],
                       s[m.build_id], m.has_functions, m.has_filenames, m.has_line_numbers,
                       m.has_inline_frames) for m in p.mapping}
    locations = {loc.id: (mappings.get(loc.mapping_id), loc.address, loc.is_folded,
                          tuple((functions.get(x.function_id), x.line, x.column)
                                for x in loc.line)) for loc in p.location}
    samples = [(tuple(locations[i] for i in x.location_id), tuple(x.value),
                tuple(sorted((s[lb.key], s[lb.str], lb.num, s[lb.num_unit])
                             for lb in x.label))) for x in p.sample]
    head = ([(s[t.type], s[t.unit]) for t in p.sample_type], s[p.period_type.type],
            s[p.period_type.unit], p.period, p.time_nanos, p.duration_nanos,
            [s[c] for c in p.comment], s[p.default_sample_type], s[p.doc_url],
            s[p.drop_frames], s[p.keep_frames])
    return (head, samples, sorted(map(repr, locations.values())),
            sorted(map(repr, functions.values())), sorted(map(repr, mappings.values())))


# --- go tool pprof's output (run by tests/helpers/go_oracle.py) ------------------------------


def parse_raw(text: str) -> dict:
    """``go tool pprof -raw`` output as: header lines, and samples as (values, locations,
    labels), each location by its printed content (id and mapping number dropped)."""
    head, rest = text.split("\nSamples:\n", 1)
    samples_text, rest = rest.split("\nLocations\n", 1)
    locations_text = rest.split("\nMappings\n", 1)[0]
    locations: dict[str, list[str]] = {}
    current = None
    for line in locations_text.splitlines():
        match = re.match(r"\s*(\d+): (.*)$", line)
        if match:
            current = match.group(1)
            locations[current] = [re.sub(r" M=\d+", "", match.group(2)).rstrip()]
        elif line.strip() and current is not None:
            locations[current].append(line.strip())
    lines = samples_text.splitlines()
    types = lines[0].split()
    samples: list[tuple] = []
    for line in lines[1:]:
        match = re.match(r"\s*([-\d ]+): ?(.*)$", line)
        if match and not line.strip().startswith(("thread", "end_")) and ":[" not in line:
            values = tuple(int(v) for v in match.group(1).split())
            locs = tuple(tuple(locations[i]) for i in match.group(2).split())
            samples.append([values, locs, []])
        elif line.strip():
            samples[-1][2].extend(re.findall(r"(\S[^:\[]*):\[([^\]]*)\]", line.strip()))
    return {"head": [h for h in head.splitlines() if not h.startswith("Time:")],
            "types": types,
            "samples": [(v, loc, tuple(sorted(lab))) for v, loc, lab in samples]}
