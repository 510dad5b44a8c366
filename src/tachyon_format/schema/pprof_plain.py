"""The messages of :mod:`.pprof` as plain records (:mod:`.protobuf_plain`): generated
from the declarations by ``tools/specgen.py`` (``tachyon_format.specdoc.pprof_plain``);
do not edit. Reading and writing pprof follow them without loading construct.
"""

from .protobuf_plain import Field, Message, ProtoFile

UPSTREAM_COMMIT = 'b9395ee17fa0d0013c3fd96ac9482318422ac337'
"""The google/pprof commit whose ``proto/profile.proto`` these declarations follow."""
PACKAGE = 'perftools.profiles'
"""The protobuf package of the messages (full names ``perftools.profiles.Profile``, ...)."""
PROTO_FILE = 'profile.proto'
"""File name of the runtime descriptor (the upstream file's name)."""
GZIP_MAGIC = b'\x1f\x8b'
"""First bytes of gzip data (RFC 1952): how pprof's own reader tells a compressed file."""
ZSTD_MAGIC = b'(\xb5/\xfd'
"""First bytes of a zstd frame (RFC 8878)."""


PROFILE = Message(
    'Profile',
    'The whole profile: tables, samples and profile-level facts',
    (
        Field(1, 'sample_type', 'ValueType', True,
              'What each entry of `Sample.value` measures, in order; all samples have exactly'
              ' this many values'),
        Field(2, 'sample', 'Sample', True,
              'The measurements, each a call stack with values and labels'),
        Field(3, 'mapping', 'Mapping', True,
              'Memory mappings of the profiled program; mapping[0] is the main binary when '
              'present'),
        Field(4, 'location', 'Location', True,
              'Unique code locations (addresses and their source lines); samples refer to '
              'them by id'),
        Field(5, 'function', 'Function', True,
              'Functions, referred to by `Line.function_id`'),
        Field(6, 'string_table', 'string', True,
              'Every string of the profile; entry 0 must be "", other fields hold indices '
              'into it'),
        Field(7, 'drop_frames', 'int64', False,
              'String index: frames whose function name fully matches this regexp are dropped'
              " from samples, with their callers' parts below them; 0 = none"),
        Field(8, 'keep_frames', 'int64', False,
              'String index: a regexp of frames kept even if they match `drop_frames`; 0 = '
              'none'),
        Field(9, 'time_nanos', 'int64', False,
              'Time of collection, UTC nanoseconds since the Unix epoch; 0 = unknown'),
        Field(10, 'duration_nanos', 'int64', False,
              'Length of the profile in nanoseconds; 0 = unknown'),
        Field(11, 'period_type', 'ValueType', False,
              'What `period` counts (e.g. cpu/nanoseconds)'),
        Field(12, 'period', 'int64', False,
              'The interval between samples, in `period_type` units'),
        Field(13, 'comment', 'int64', True,
              'String indices of free-form comments shown by pprof'),
        Field(14, 'default_sample_type', 'int64', False,
              'String index of the `sample_type.type` viewers show by default; 0 = the last '
              'sample type'),
        Field(15, 'doc_url', 'int64', False,
              'String index of an absolute URL documenting this profile type; 0 = none'),
    ),
)


VALUE_TYPE = Message(
    'ValueType',
    'The kind and unit of a measured value',
    (
        Field(1, 'type', 'int64', False,
              'String index of the kind, e.g. "cpu", "samples", "alloc_space"'),
        Field(2, 'unit', 'int64', False,
              'String index of the unit, e.g. "nanoseconds", "count", "bytes"'),
    ),
)


SAMPLE = Message(
    'Sample',
    'One measurement: a call stack, its values and labels',
    (
        Field(1, 'location_id', 'uint64', True,
              "Ids of the stack's locations, innermost (the leaf) first; a Location of "
              'several lines stands for several frames'),
        Field(2, 'value', 'int64', True,
              'One value per `Profile.sample_type`, in that order'),
        Field(3, 'label', 'Label', True,
              'Key/value annotations (thread, span, timestamp...); a key may repeat only with'
              ' different units'),
    ),
)


LABEL = Message(
    'Label',
    'One annotation of a sample: a string or a number under a key',
    (
        Field(1, 'key', 'int64', False,
              'String index of the key, e.g. "thread id"'),
        Field(2, 'str', 'int64', False,
              'String index of the value; at most one of `str` and `num` is set'),
        Field(3, 'num', 'int64', False,
              'Numeric value'),
        Field(4, 'num_unit', 'int64', False,
              'String index of the unit of `num` (e.g. "nanoseconds"); 0 = none'),
    ),
)


MAPPING = Message(
    'Mapping',
    'An address range of the program mapped from a file',
    (
        Field(1, 'id', 'uint64', False,
              'Unique nonzero id, referred to by `Location.mapping_id`'),
        Field(2, 'memory_start', 'uint64', False,
              'First address of the mapping'),
        Field(3, 'memory_limit', 'uint64', False,
              'One past the last address of the mapping'),
        Field(4, 'file_offset', 'uint64', False,
              'Offset in the file of `memory_start`'),
        Field(5, 'filename', 'int64', False,
              "String index of the file's path (or a kernel/vdso name)"),
        Field(6, 'build_id', 'int64', False,
              "String index of the file's build id (ELF: hex of the GNU build id note)"),
        Field(7, 'has_functions', 'bool', False,
              'Locations in this mapping have function names'),
        Field(8, 'has_filenames', 'bool', False,
              'Locations in this mapping have source file names'),
        Field(9, 'has_line_numbers', 'bool', False,
              'Locations in this mapping have line numbers'),
        Field(10, 'has_inline_frames', 'bool', False,
              'Locations in this mapping have inlined frames'),
    ),
)


LOCATION = Message(
    'Location',
    'A unique place in the program, usually an instruction address with the source lines it '
    'stands for',
    (
        Field(1, 'id', 'uint64', False,
              'Unique nonzero id, referred to by `Sample.location_id`'),
        Field(2, 'mapping_id', 'uint64', False,
              'Id of the Mapping holding `address`; 0 = none'),
        Field(3, 'address', 'uint64', False,
              'Instruction address in the profiled process (for a caller: the return address '
              'minus one, as pprof writes); 0 = none'),
        Field(4, 'line', 'Line', True,
              'Source lines of this address: several when functions were inlined, the last '
              'being the caller into which the others were inlined'),
        Field(5, 'is_folded', 'bool', False,
              'Identical code folded into one address by the linker: the function of the '
              'address is a guess'),
    ),
)


LINE = Message(
    'Line',
    'One source line of a Location',
    (
        Field(1, 'function_id', 'uint64', False,
              'Id of the Function; 0 = none'),
        Field(2, 'line', 'int64', False,
              'Line number in the source file; 0 = unknown'),
        Field(3, 'column', 'int64', False,
              'Column in the source line; 0 = unknown'),
    ),
)


FUNCTION = Message(
    'Function',
    'A function of the program',
    (
        Field(1, 'id', 'uint64', False,
              'Unique nonzero id, referred to by `Line.function_id`'),
        Field(2, 'name', 'int64', False,
              'String index of the name in human-readable form (e.g. demangled)'),
        Field(3, 'system_name', 'int64', False,
              'String index of the name as the system knows it (e.g. a mangled C++ symbol); 0'
              ' = none'),
        Field(4, 'filename', 'int64', False,
              "String index of the source file's path"),
        Field(5, 'start_line', 'int64', False,
              'Line number where the function starts; 0 = unknown'),
    ),
)


MESSAGES = (PROFILE, VALUE_TYPE, SAMPLE, LABEL, MAPPING, LOCATION, LINE, FUNCTION)
"""Every message of ``profile.proto``, in the upstream file's order (the profile first)."""
PROTO = ProtoFile(PROTO_FILE, PACKAGE, MESSAGES)
"""``profile.proto`` as one record (for ``protobuf_plain.message_classes``)."""
