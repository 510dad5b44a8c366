"""Build the optional compiled record walk (``region/walk.py``, Cython's pure-Python mode).

Everything else is declared in pyproject.toml. The extension is optional, as msgpack's
``_cmsgpack`` is: without Cython or a C compiler (or with ``TACHYON_FORMAT_PURE=1``), the
package installs without it and reads the sample region with its numpy decoder, with the
same results (``tachyon_format.decoder_info()`` says which one runs).
"""

import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

WALK = "tachyon_format.formats.tachyon.region.walk"
SOURCE = "src/tachyon_format/formats/tachyon/region/walk.py"
DIRECTIVES = {
    "language_level": 3,
    # the walk parses untrusted bytes: an index out of range must raise, never read or
    # write out of bounds (its own checks come first; these are the safety net)
    "boundscheck": True,
    "wraparound": False,
    "initializedcheck": True,
}


class OptionalBuildExt(build_ext):
    """A failed build of the walk is a warning: the numpy decoder runs instead."""

    def run(self):
        try:
            super().run()
        except Exception as exc:  # (no compiler, no Python headers, ...)
            self._skip(exc)

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as exc:
            self._skip(exc)

    @staticmethod
    def _skip(exc):
        print(f"warning: the compiled record walk was not built ({exc}); tachyon-format "
              "will use its numpy decoder", file=sys.stderr)


def extensions():
    if os.environ.get("TACHYON_FORMAT_PURE"):
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:
        print("warning: Cython is not installed; the compiled record walk is not built",
              file=sys.stderr)
        return []
    flags = os.environ.get("TACHYON_FORMAT_CFLAGS", "").split()
    try:
        return cythonize([Extension(WALK, [SOURCE], extra_compile_args=["-O2", *flags],
                                    extra_link_args=flags)],
                         compiler_directives=DIRECTIVES, quiet=True,
                         build_dir="build/cython")
    except Exception as exc:  # (a Cython too old or too new for the source)
        OptionalBuildExt._skip(exc)
        return []


setup(ext_modules=extensions(), cmdclass={"build_ext": OptionalBuildExt})
