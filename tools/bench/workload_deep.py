"""Benchmark workload: deep, changing stacks (recursion through many distinct functions).

Profiled by ``tools/bench.py`` as ``real-deep``:
``python3.15 -m profiling.sampling run -a -r 20khz --binary -o OUT workload_deep.py SECONDS``.
Gives deep stacks (20-120 frames) in two GIL-sharing threads that change often.
"""

import sys
import threading
import time


def _make_levels(n):
    """n distinct functions that call each other in a ring, so stacks have many frame kinds."""
    namespace = {}
    for i in range(n):
        exec(
            f"def level_{i}(depth, work):\n"
            f"    if depth == 0:\n"
            f"        return sum(k * k for k in range(work))\n"
            f"    total = 0\n"
            f"    for branch in range(2 if depth % 20 == 0 else 1):\n"
            f"        total += LEVELS[(depth * 7 + branch + {i}) % {n}](depth - 1, work)\n"
            f"    return total\n",
            namespace,
        )
    levels = [namespace[f"level_{i}"] for i in range(n)]
    for fn in levels:
        fn.__globals__["LEVELS"] = levels
    return levels


LEVELS = _make_levels(40)


def walk(node_depth):
    if node_depth == 0:
        return [i for i in range(200)]
    return [walk(node_depth - 1) for _ in range(2)][0]


def run(deadline, seed):
    depth = 30
    while time.monotonic() < deadline:
        LEVELS[seed % len(LEVELS)](depth, 200)
        walk(6)
        depth = 20 + (depth * 31 + seed) % 100
        seed += 1


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 4.0
    deadline = time.monotonic() + seconds
    helper = threading.Thread(target=run, args=(deadline, 11))
    helper.start()
    run(deadline, 3)
    helper.join()


if __name__ == "__main__":
    main()
