"""Benchmark workload: a server-like program, many threads of which few run.

Profiled by ``tools/bench.py`` as ``real-server``:
``python3.15 -m profiling.sampling run -a --binary -o OUT workload_server.py SECONDS``.
Six workers take jobs from a queue fed by a producer (JSON, regular expressions, hashing,
sorting, compression, text formatting, a small expression parser); seventeen more threads
wait as a server's threads do (on events, conditions, sockets, sleeps). Gives long REPEAT
runs from the idle threads beside churning worker stacks.
"""

import contextlib
import hashlib
import json
import queue
import re
import socket
import sys
import threading
import time
import zlib


def parse_json(n):
    text = json.dumps([{"id": i, "tags": [str(j) for j in range(12)], "ok": i % 3 == 0}
                       for i in range(n)])
    return len(json.loads(text))


def scan_regex(n):
    pattern = re.compile(r"(\w+)@(\w+)\.(com|org)")
    return len(pattern.findall("alice@example.com bob@site.org carol " * n))


def hash_blocks(n):
    h = hashlib.sha256()
    for i in range(n):
        h.update(str(i).encode())
    return h.hexdigest()


def sort_records(n):
    records = [(i * 7919 % 1009, str(i)) for i in range(n)]
    return sorted(records, key=lambda r: (r[0], r[1]))[0]


def compress(n):
    data = ("GET /index.html HTTP/1.1\r\nHost: example.com\r\n\r\n" * n).encode()
    return len(zlib.decompress(zlib.compress(data, 6)))


def render(n):
    rows = [f"<tr><td>{i}</td><td>{i * i:>8}</td><td>{'x' * (i % 7)}</td></tr>"
            for i in range(n)]
    return len("<table>" + "".join(rows) + "</table>")


def evaluate(text):
    """A recursive-descent evaluator of + - * / and parentheses."""
    tokens = re.findall(r"\d+|[-+*/()]", text)
    pos = 0

    def expr():
        nonlocal pos
        value = term()
        while pos < len(tokens) and tokens[pos] in "+-":
            op = tokens[pos]
            pos += 1
            value = value + term() if op == "+" else value - term()
        return value

    def term():
        nonlocal pos
        value = factor()
        while pos < len(tokens) and tokens[pos] in "*/":
            op = tokens[pos]
            pos += 1
            right = factor()
            value = value * right if op == "*" else value // (right or 1)
        return value

    def factor():
        nonlocal pos
        token = tokens[pos]
        pos += 1
        if token == "(":
            value = expr()
            pos += 1
            return value
        return int(token)

    return expr()


def nested(depth):
    return "1" if depth == 0 else f"({nested(depth - 1)} + {depth} * 2)"


def parse_expressions(n):
    return sum(evaluate(nested(d % 40)) for d in range(n))


JOBS = [(parse_json, 300), (scan_regex, 2000), (hash_blocks, 3000), (sort_records, 8000),
        (compress, 2000), (render, 3000), (parse_expressions, 60)]


def worker(jobs, results):
    while True:
        job = jobs.get()
        if job is None:
            return
        fn, n = job
        results.append(fn(n))


def producer(deadline, jobs, workers):
    i = 0
    while time.monotonic() < deadline:
        jobs.put(JOBS[i % len(JOBS)])
        i += 1
        if jobs.qsize() > 2 * workers:
            time.sleep(0.002)
    for _ in range(workers):
        jobs.put(None)


def wait_event(deadline, event):
    while time.monotonic() < deadline:
        event.wait(0.2)


def wait_condition(deadline, cond):
    with cond:
        while time.monotonic() < deadline:
            cond.wait(0.1)


def wait_socket(deadline, sock):
    sock.settimeout(0.25)
    while time.monotonic() < deadline:
        with contextlib.suppress(TimeoutError):
            sock.recv(1)


def sleeper(deadline):
    while time.monotonic() < deadline:
        time.sleep(0.05)


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
    deadline = time.monotonic() + seconds
    jobs, results = queue.Queue(), []
    workers = [threading.Thread(target=worker, args=(jobs, results), name=f"worker-{i}")
               for i in range(6)]
    idle = []
    event, cond = threading.Event(), threading.Condition()
    pairs = [socket.socketpair() for _ in range(4)]
    for _i in range(5):
        idle.append(threading.Thread(target=wait_event, args=(deadline, event)))
    for _i in range(4):
        idle.append(threading.Thread(target=wait_condition, args=(deadline, cond)))
    for a, _ in pairs:
        idle.append(threading.Thread(target=wait_socket, args=(deadline, a)))
    for _i in range(4):
        idle.append(threading.Thread(target=sleeper, args=(deadline,)))
    threads = [*workers, *idle,
               threading.Thread(target=producer, args=(deadline, jobs, len(workers)))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for a, b in pairs:
        a.close()
        b.close()


if __name__ == "__main__":
    main()
