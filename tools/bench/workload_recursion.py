"""Benchmark workload: deep recursion (stacks of up to some 230 frames) in three threads.

Profiled by ``tools/bench.py`` as ``real-recursion``:
``python3.15 -m profiling.sampling run -a --binary -o OUT workload_recursion.py SECONDS``.
Recursive algorithms as programs write them (a tree built and walked, mutual recursion over
a nested document, a memo-less partition count), reaching depths near the profiler's cap
of 256 frames, so records list and keep long stacks.
"""

import sys
import threading
import time

sys.setrecursionlimit(10_000)


def build(depth, width):
    if depth == 0:
        return []
    return [build(depth - 1, 1) for _ in range(width)] if depth % 50 else [build(depth - 1, 2)]


def walk(tree, depth=0):
    total = depth
    for child in tree:
        total += walk(child, depth + 1)
    return total


def document(depth):
    return {"v": depth} if depth == 0 else {"items": [document(depth - 1)], "n": depth}


def visit_dict(node):
    if "items" in node:
        return node["n"] + visit_list(node["items"])
    return node["v"]


def visit_list(items):
    return sum(visit_dict(item) for item in items)


def partitions(n, k):
    if n == 0:
        return 1
    if n < 0 or k == 0:
        return 0
    return partitions(n - k, k) + partitions(n, k - 1)


def run(deadline, depth_range):
    lo, hi = depth_range
    depth = lo
    while time.monotonic() < deadline:
        walk(build(depth, 1))
        visit_dict(document(depth))
        partitions(depth // 10 + 18, 12)
        depth = lo + (depth * 37 + 11) % (hi - lo)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
    deadline = time.monotonic() + seconds
    threads = [threading.Thread(target=run, args=(deadline, r))
               for r in ((120, 230), (60, 200))]
    for t in threads:
        t.start()
    run(deadline, (150, 225))
    for t in threads:
        t.join()


if __name__ == "__main__":
    main()
