"""What a hostile-input test may bound: CPU time and peak traced memory."""

from __future__ import annotations

import time
import tracemalloc


class Bounded:
    """CPU time (of every thread of the process, so that a busy machine does not count) and
    peak traced memory (numpy's arrays included) of what runs inside. The time bounds are
    hang guards, ten times and more what a run takes; speed is tools/bench.py's."""

    def __enter__(self) -> Bounded:
        tracemalloc.start()
        self._start = time.process_time()
        return self

    def __exit__(self, *exc_info) -> None:
        self.seconds = time.process_time() - self._start
        self.peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
