#!/usr/bin/env python3
"""How often an interrupt leaves subprocess.Popen's own lock held (procs.reap says why it
matters): N children that each sleep 4 ms, each waited for with Popen.wait(timeout), and a
SIGALRM timed at random within the first 2 ms of the wait raises KeyboardInterrupt, as Ctrl-C
or ab's SIGTERM handler does. Counts the waits after which Popen._waitpid_lock is still held:
a later proc.wait() would block on it for ever.

    .venv/bin/python scripts/experiments/popen-lock.py 20000
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys


def interrupt(*_: object) -> None:
    raise KeyboardInterrupt


def main(n: int) -> None:
    signal.signal(signal.SIGALRM, interrupt)
    held = interrupted = 0
    for _ in range(n):
        proc = None
        try:
            proc = subprocess.Popen(["sleep", "0.004"])
            signal.setitimer(signal.ITIMER_REAL, random.uniform(0.00005, 0.002))
            proc.wait(timeout=5)
            signal.setitimer(signal.ITIMER_REAL, 0)
        except KeyboardInterrupt:
            signal.setitimer(signal.ITIMER_REAL, 0)
            interrupted += 1
        if proc is not None:
            if proc._waitpid_lock.locked():
                held += 1
                proc._waitpid_lock.release()
            proc.kill()
            proc.wait()
    version = sys.version.split()[0]
    print(f"{n} waits, {interrupted} interrupted, {held} left Popen's lock held (Python {version})")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20000)
