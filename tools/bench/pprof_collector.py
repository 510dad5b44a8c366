"""The baseline for Tachyon -> pprof: CPython 3.15's ``BinaryReader.replay()`` into a Python
collector that builds the pprof message with protobuf.

This is the cheapest path a Python user has without tachyon-format: replay every sample
through a collector (as ``profiling.sampling``'s own collectors do), aggregate in dicts, then
fill the protobuf message. It writes what ``tachyon_format`` writes by default: one sample per
(stack, thread, status) with ``samples/count`` and ``<mode>/nanoseconds`` values and the
labels ``thread id``, ``interpreter id``, ``thread status``; one Location per distinct frame,
one Function per (name, file). The message classes come from
``tachyon_format.schema.protobuf_plain`` (a descriptor built at run time), so no generated
``_pb2`` module is needed.
"""

from __future__ import annotations

import gzip

STATUS_NAMES = ((1, "has_gil"), (2, "on_cpu"), (4, "unknown"), (8, "gil_requested"),
                (16, "has_exception"), (32, "main_thread"))


def status_name(status: int) -> str:
    names = [name for bit, name in STATUS_NAMES if status & bit]
    names += [f"bit{b}" for b in (6, 7) if status & (1 << b)]
    return "|".join(names) or "none"


class PprofCollector:
    """A ``replay()`` collector: ``collect(stack_frames, timestamps)`` per thread batch."""

    def __init__(self) -> None:
        self.strings: dict[str, int] = {"": 0}
        self.functions: dict[tuple[str, str], int] = {}
        self.locations: dict[tuple, tuple[int, int, int, int]] = {}
        self.samples: dict[tuple, int] = {}

    def string(self, text: str) -> int:
        index = self.strings.get(text)
        if index is None:
            index = self.strings[text] = len(self.strings)
        return index

    def location(self, frame) -> int:
        found = self.locations.get(frame)
        if found is not None:
            return found[0]
        key = (frame.funcname, frame.filename)
        function = self.functions.get(key)
        if function is None:
            function = self.functions[key] = len(self.functions) + 1
        where = frame.location
        line = where[0] if where is not None and where[0] and where[0] > 0 else 0
        column = where[2] + 1 if where is not None and where[2] is not None and where[2] >= 0 \
            else 0
        ident = len(self.locations) + 1
        self.locations[frame] = (ident, function, line, column)
        return ident

    def collect(self, stack_frames, timestamps) -> None:
        location = self.location
        for interpreter in stack_frames:
            for thread in interpreter.threads:
                key = (tuple(location(f) for f in thread.frame_info),
                       interpreter.interpreter_id, thread.thread_id, thread.status)
                self.samples[key] = self.samples.get(key, 0) + len(timestamps)

    def message(self, classes, period_ns: int, mode: str):
        """The filled ``Profile`` message."""
        out = classes["Profile"]()
        s = self.string
        out.sample_type.add(type=s("samples"), unit=s("count"))
        out.sample_type.add(type=s(mode), unit=s("nanoseconds"))
        out.period_type.type, out.period_type.unit = s(mode), s("nanoseconds")
        out.period = period_ns
        keys = (s("thread id"), s("interpreter id"), s("thread status"))
        for (locations, interpreter, thread, status), count in self.samples.items():
            sample = out.sample.add(location_id=locations, value=[count, count * period_ns])
            sample.label.add(key=keys[0], str=s(str(thread)))
            sample.label.add(key=keys[1], str=s(str(interpreter)))
            sample.label.add(key=keys[2], str=s(status_name(status)))
        for (name, filename), ident in self.functions.items():
            out.function.add(id=ident, name=s(name), filename=s(filename))
        for ident, function, line, column in self.locations.values():
            out.location.add(id=ident).line.add(function_id=function, line=line, column=column)
        out.string_table.extend(self.strings)
        return out


def convert(reader_class, path: str, out: str) -> int:
    """Replay the Tachyon file *path* with *reader_class* (CPython's ``BinaryReader``) and
    write the gzip'd pprof to *out*; returns the number of samples."""
    from tachyon_format.schema.pprof_plain import PROTO
    from tachyon_format.schema.protobuf_plain import message_classes

    reader = reader_class(path)
    info = reader.get_info()
    collector = PprofCollector()
    count = reader.replay(collector)
    modes = {0: "wall", 1: "cpu", 2: "gil", 3: "all", 4: "exception"}
    message = collector.message(message_classes(PROTO), int(info["sample_interval_us"]) * 1000,
                                modes.get(info.get("mode"), "wall"))
    with open(out, "wb") as f:
        f.write(gzip.compress(message.SerializeToString(), 1))  # as ours and Go's runtime
    return count
