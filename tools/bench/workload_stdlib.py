"""Benchmark workload: many distinct functions of the standard library, in four threads.

Profiled by ``tools/bench.py`` as ``real-stdlib-raw`` (``--compression none``):
``python3.15 -m profiling.sampling run -a --binary --compression none -o OUT
workload_stdlib.py SECONDS``. Parsing and compiling Python source, diffing text, building
and parsing e-mail messages, decimal arithmetic: many files and functions, so the string and
frame tables are large and stacks change shape often.
"""

import ast
import decimal
import difflib
import email.message
import email.parser
import sys
import textwrap
import threading
import time

SOURCE = textwrap.dedent('''
    import os
    class Node:
        def __init__(self, value, children=()):
            self.value = value
            self.children = list(children)
        def total(self):
            return self.value + sum(c.total() for c in self.children)
    def make(depth):
        return Node(depth, [make(depth - 1) for _ in range(2)] if depth else [])
    RESULT = {k: v for k, v in zip("abcdef", range(6)) if v % 2}
''') * 20


def compile_source():
    tree = ast.parse(SOURCE)
    ast.unparse(tree)
    compile(tree, "<bench>", "exec")


def diff_text():
    a = [f"line {i} {'x' * (i % 13)}" for i in range(400)]
    b = [f"line {i} {'x' * (i % 11)}" for i in range(400)]
    list(difflib.unified_diff(a, b))


def mail():
    msg = email.message.EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = "a@example.com", "b@example.com", "report"
    msg.set_content("numbers: " + ", ".join(str(i) for i in range(2000)))
    email.parser.BytesParser().parsebytes(bytes(msg))


def decimals():
    decimal.getcontext().prec = 60
    total = decimal.Decimal(0)
    for i in range(1, 3000):
        total += decimal.Decimal(1) / decimal.Decimal(i)
    return total


def run(deadline, jobs):
    while time.monotonic() < deadline:
        for job in jobs:
            job()


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
    deadline = time.monotonic() + seconds
    threads = [threading.Thread(target=run, args=(deadline, jobs)) for jobs in (
        (compile_source, diff_text), (mail, decimals), (diff_text, mail))]
    for t in threads:
        t.start()
    run(deadline, (decimals, compile_source))
    for t in threads:
        t.join()


if __name__ == "__main__":
    main()
