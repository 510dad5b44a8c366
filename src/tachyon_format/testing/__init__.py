"""Helpers for test suites that write or read profiles: ``assert_valid``,
``assert_profiles_equal``, ``ProfileBuilder``; hypothesis strategies in
``tachyon_format.testing.strategies`` (needs hypothesis); a pytest plugin in
``tachyon_format.testing.plugin`` (see docs/testing.md).

The names load on first use, so that the pytest plugin, which imports this package, costs
nothing at start-up (numpy loads with the first helper that needs it).
"""

from typing import TYPE_CHECKING

from .._lazy import lazy_attributes

if TYPE_CHECKING:
    from .builder import ProfileBuilder
    from .equality import assert_profiles_equal
    from .notation import Frame
    from .validity import assert_valid

__all__ = ["Frame", "ProfileBuilder", "assert_profiles_equal", "assert_valid"]

_LAZY = {"ProfileBuilder": "builder", "assert_profiles_equal": "equality", "Frame": "notation",
         "assert_valid": "validity"}

__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)
