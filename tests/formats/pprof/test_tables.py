"""The writer's small messages (mappings, the top-level fields) encoded by the declarations,
against protobuf's own serialization of the same values; and what writing loads."""

from __future__ import annotations

import subprocess
import sys

from hypothesis import given
from hypothesis import strategies as st

from tachyon_format.formats.pprof.tables import _message
from tachyon_format.schema import pprof_plain as spec
from tachyon_format.schema.leb128 import encode_uleb128
from tests.helpers.paths import DATA_DIR, REPO
from tests.helpers.pprof import message_classes

u64 = st.integers(0, 2**64 - 1)
i64 = st.integers(-(2**63), 2**63 - 1)


@given(st.fixed_dictionaries({
    "id": u64, "memory_start": u64, "memory_limit": u64, "file_offset": u64,
    "filename": i64, "build_id": i64, "has_functions": st.booleans(),
    "has_filenames": st.booleans(), "has_line_numbers": st.booleans(),
    "has_inline_frames": st.booleans()}))
def test_a_mapping_is_encoded_as_protobuf_serializes_it(values):
    assert _message(spec.MAPPING, values) == \
        message_classes()["Mapping"](**values).SerializeToString()


@given(st.fixed_dictionaries({"period": i64, "time_nanos": i64, "doc_url": i64},
                             optional={"period_type": st.tuples(i64, i64),
                                       "comment": st.lists(st.integers(0, 2**40))}))
def test_the_top_level_fields_are_encoded_as_protobuf_serializes_them(values):
    Profile, ValueType = message_classes()["Profile"], message_classes()["ValueType"]
    expected = Profile(**{k: v for k, v in values.items() if k != "period_type"})
    ours = dict(values)
    if "period_type" in values:
        t, u = values["period_type"]
        expected.period_type.CopyFrom(ValueType(type=t, unit=u))
        ours["period_type"] = _message(spec.VALUE_TYPE, {"type": t, "unit": u})
    ours["comment"] = b"".join(encode_uleb128(i) for i in values.get("comment", []))
    assert _message(spec.PROFILE, ours) == expected.SerializeToString()


def test_writing_and_reading_pprof_load_no_protobuf(tmp_path):
    script = ("import sys, tachyon_format\n"
              "profile = tachyon_format.read(sys.argv[1])\n"
              "tachyon_format.write(profile, 'out.pb.gz')\n"
              "tachyon_format.read('out.pb.gz')\n"
              "print(sorted(m for m in ('google.protobuf', 'construct') if m in sys.modules))")
    run = subprocess.run([sys.executable, "-c", script, str(DATA_DIR / "threads_wall_zstd.bin")],
                         capture_output=True, text=True, cwd=tmp_path,
                         env={"PYTHONPATH": str(REPO / "src"), "PATH": ""})
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"
