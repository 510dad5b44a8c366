"""The names of Cython's ``cython`` module that :mod:`.walk` uses, for running it uncompiled
where Cython is not installed (it is a build dependency only).

Compiled, ``import cython`` is resolved by the compiler and this module is never loaded.
Interpreted, the decorators do nothing, casts and declarations pass their value through, and
the C types are Python's ``int``; the annotations that name C types are never evaluated
(``from __future__ import annotations``).
"""

from __future__ import annotations

compiled = False

# C types, as far as the interpreter needs them (declare, typedef and cast take them)
bint = bool
uchar = uint = ulonglong = longlong = Py_ssize_t = int
int = int  # (C's int: the builtin's name in this module)


def _identity_decorator(*args, **kwargs):
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return args[0]
    return lambda f: f


cclass = cfunc = ccall = inline = final = _identity_decorator
boundscheck = wraparound = cdivision = exceptval = locals = _identity_decorator


class _NoGIL:
    """``nogil`` and ``gil``: decorators and context managers that do nothing here."""

    def __call__(self, f=None, **_kwargs):
        return f if f is not None else self

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        return False


nogil = gil = _NoGIL()


def cast(_type, value, typecheck=False):
    return value


def declare(_type=None, value=None, **_kwargs):
    return value


def typedef(_type, _name=None):
    return _type
