"""Benchmark workload: a few threads doing mixed CPU work while others mostly wait.

Profiled by ``tools/bench.py`` as ``real-threads``:
``python3.15 -m profiling.sampling run -a -r 20khz --binary -o OUT workload_threads.py SECONDS``.
Gives a REPEAT-heavy profile (waiting threads) with churn from the busy ones.
"""

import hashlib
import json
import re
import sys
import threading
import time


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def parse_json():
    text = json.dumps([{"a": i, "b": [str(j) for j in range(20)]} for i in range(500)])
    for _ in range(3):
        json.loads(text)


def scan_regex():
    pattern = re.compile(r"(\w+)@(\w+)\.com")
    pattern.findall("foo@bar.com baz " * 5000)


def hash_blocks():
    h = hashlib.sha256()
    for i in range(5000):
        h.update(str(i).encode())


def sort_records():
    records = [(i * 7919 % 1009, str(i)) for i in range(20000)]
    sorted(records, key=lambda r: (r[0], r[1]))


def busy(deadline, jobs):
    while time.monotonic() < deadline:
        for job in jobs:
            job()


def waiter(deadline, cond):
    with cond:
        while time.monotonic() < deadline:
            cond.wait(0.05)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 4.0
    deadline = time.monotonic() + seconds
    cond = threading.Condition()
    threads = [
        threading.Thread(target=busy, args=(deadline, (lambda: fib(18), scan_regex))),
        threading.Thread(target=busy, args=(deadline, (hash_blocks, sort_records))),
        threading.Thread(target=busy, args=(deadline, (parse_json, lambda: fib(16)))),
    ]
    threads += [threading.Thread(target=waiter, args=(deadline, cond)) for _ in range(3)]
    for t in threads:
        t.start()
    busy(deadline, (sort_records, parse_json, lambda: fib(17)))
    for t in threads:
        t.join()


if __name__ == "__main__":
    main()
