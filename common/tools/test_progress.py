#!/usr/bin/env python3
"""Progress of a ctest run, read from its log while it runs.

    test_progress.py LOG --pid PID [--every S]

./lab test sends ctest's output to a log and starts this beside it: every S
seconds (default 15) in which something changed, one line says how many tests
are done out of how many, how many failed, and the tests still running the
longest, e.g.

    lab: tests 41/87 done (1 failed); running: step08_mpi_3d.solution.correctness.np8 (63 s), +3 more

It ends when the process PID (ctest) is gone. It reads only what ctest
prints without -V: "Start  N: name" and "N/M Test  #N: name ....   Passed".
With --costs (ctest's CTestCostData.txt of earlier runs), a test that has run
five times as long as it usually takes, and a minute at least, says so:

    running: step04_simd.student.performance (75 s; it usually takes 11 s: an endless loop?)

A test ctest counted as failed that only waits for another step's TODOs
(the summary's WAIT) is counted as failed here too: the summary tells them apart.
"""
import argparse
import os
import re
import sys
import time

START = re.compile(r"^\s*Start\s+(\d+):\s+(\S+)")
DONE = re.compile(r"^\s*(\d+)/(\d+)\s+Test\s+#(\d+):\s+(\S+)\s.*?(Passed|\*\*\*|Failed|Not Run|Skipped|Exception)")


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def read_costs(path):
    """{test name: its average seconds} from ctest's CTestCostData.txt ("name runs
    seconds" lines, then "---" and the names that failed last time); {} without one."""
    costs = {}
    try:
        with open(path, errors="replace") as f:
            for line in f:
                if line.startswith("---"):
                    break
                parts = line.split()
                if len(parts) == 3:
                    try:
                        costs[parts[0]] = float(parts[2])
                    except ValueError:
                        pass
    except OSError:
        pass
    return costs


class Progress:
    def __init__(self, costs=None):
        self.costs = costs or {}  # name -> usual seconds
        self.running = {}  # name -> time first seen
        self.done = 0
        self.total = 0
        self.failed = 0

    def feed(self, line, now):
        m = START.match(line)
        if m:
            self.running.setdefault(m.group(2), now)
            return
        m = DONE.match(line)
        if m:
            self.done = max(self.done, int(m.group(1)))
            self.total = int(m.group(2))
            self.running.pop(m.group(4), None)
            if m.group(5) != "Passed" and "Skipped" not in line and "Not Run" not in line:
                self.failed += 1

    def overdue(self, name, seconds):
        """"; it usually takes N s: an endless loop?" once a test has run five times its usual time (a minute at least)."""
        usual = self.costs.get(name)
        if usual is None or seconds < max(60.0, 5 * usual):
            return ""
        return f"; it usually takes {usual:.0f} s: an endless loop?"

    def line(self, now):
        total = f"/{self.total}" if self.total else ""
        failed = f" ({self.failed} failed)" if self.failed else ""
        text = f"lab: tests {self.done}{total} done{failed}"
        if self.running:
            longest = sorted(self.running.items(), key=lambda kv: kv[1])
            shown = ", ".join(f"{name} ({now - t:.0f} s{self.overdue(name, now - t)})" for name, t in longest[:2])
            more = f", +{len(longest) - 2} more" if len(longest) > 2 else ""
            text += f"; running: {shown}{more}"
        return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("log")
    ap.add_argument("--pid", type=int, required=True, help="the ctest process: the report ends with it")
    ap.add_argument("--every", type=float, default=15.0, help="seconds between lines (default 15)")
    ap.add_argument("--costs", help="ctest's CTestCostData.txt: how long each test usually takes")
    a = ap.parse_args()
    if a.every <= 0:
        ap.error("--every must be positive")
    p = Progress(read_costs(a.costs) if a.costs else {})
    offset, last_said, last_text = 0, time.monotonic(), ""
    while alive(a.pid):
        time.sleep(1.0)
        now = time.monotonic()
        try:
            with open(a.log, "rb") as f:
                f.seek(offset)
                chunk = f.read()
        except FileNotFoundError:
            continue
        # a line still being written is read again next time
        cut = chunk.rfind(b"\n") + 1
        offset += cut
        for line in chunk[:cut].decode("utf-8", errors="replace").splitlines():
            p.feed(line, now)
        if now - last_said >= a.every and (p.done or p.running):
            text = p.line(now)
            if text != last_text:
                print(text, flush=True)
                last_text = text
            last_said = now
    return 0


if __name__ == "__main__":
    sys.exit(main())
