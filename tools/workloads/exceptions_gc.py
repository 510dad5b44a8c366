"""Exceptions raised and handled, reference cycles for the GC, C code calling back into Python."""

import gc
import re
import zlib


class Node:
    def __init__(self, parent=None):
        self.parent = parent
        self.children = [self]  # a cycle, so only the cyclic GC can free it


def make_garbage():
    for _ in range(30000):
        Node(Node())
    gc.collect()


def checked_int(text):
    try:
        return int(text)
    except ValueError as exc:
        # Time spent here is spent with an exception being handled (exception mode).
        try:
            raise LookupError(text) from exc
        except LookupError:
            return sum(ord(ch) for ch in text)


def callbacks_from_c():
    words = [f"w{i % 97}x{i}" for i in range(20000)]
    words.sort(key=lambda word: word[::-1])
    text = " ".join(words[:5000])
    re.sub(r"w(\d+)", lambda match: match.group(1).upper(), text)
    return zlib.compress(text.encode() * 20, 9)


def cleanup_while_handling():
    try:
        raise RuntimeError("cleanup")
    except RuntimeError:
        # Work done while an exception is being handled: this is what exception mode samples.
        make_garbage()
        callbacks_from_c()


def main():
    for _ in range(3):
        cleanup_while_handling()
        total = sum(checked_int(token) for token in ("12", "x7", "3", "nope") * 6000)
        callbacks_from_c()
    return total


if __name__ == "__main__":
    main()
