"""``from tachyon_format import compat as _remote_debugging``: CPython's binary-format API.

The implementation is :mod:`tachyon_format.formats.tachyon.cpython_api`; this name is the stable
public one that the README documents.
"""

from tachyon_format.formats.tachyon.cpython_api import *  # noqa: F403
from tachyon_format.formats.tachyon.cpython_api import __all__  # noqa: F401
