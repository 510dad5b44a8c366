"""Four threads with different call patterns: recursion, parsing, hashing, and waiting."""

import hashlib
import json
import queue
import re
import threading


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def recursive_worker():
    for _ in range(12):
        fib(27)


def parse_worker():
    document = json.dumps([{"id": i, "tags": [str(j) for j in range(15)]} for i in range(3000)])
    pattern = re.compile(r"\"(\w+)\":")
    for _ in range(50):
        json.loads(document)
        pattern.findall(document)


def hash_worker(jobs, results):
    # Blocks on the queue between jobs, so wall and cpu samples differ for this thread.
    while (job := jobs.get()) is not None:
        digest = hashlib.sha256()
        for i in range(job):
            digest.update(i.to_bytes(4, "little"))
        results.put(digest.hexdigest())


def main():
    jobs, results = queue.Queue(), queue.Queue()
    threads = [
        threading.Thread(target=recursive_worker, name="recursive"),
        threading.Thread(target=parse_worker, name="parse"),
        threading.Thread(target=hash_worker, args=(jobs, results), name="hash"),
    ]
    for thread in threads:
        thread.start()
    for _ in range(16):
        jobs.put(60000)
        results.get()
        fib(17)
    jobs.put(None)
    for thread in threads:
        thread.join()


if __name__ == "__main__":
    main()
