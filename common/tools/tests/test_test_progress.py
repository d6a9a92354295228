#!/usr/bin/env python3
"""test_progress.py's line: counts, the longest-running tests, and the hint
for a test that has run far longer than it usually takes."""
import pathlib
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
import test_progress  # noqa: E402


class Progress(unittest.TestCase):
    def feed(self, p, lines, now=0.0):
        for line in lines:
            p.feed(line, now)

    def test_counts_and_the_longest_running(self):
        p = test_progress.Progress()
        self.feed(p, ["    Start  1: a.correctness", "    Start  2: b.performance",
                      "1/5 Test  #1: a.correctness ..........   Passed    2.00 sec"])
        self.assertEqual(p.line(30.0), "lab: tests 1/5 done; running: b.performance (30 s)")
        self.feed(p, ["2/5 Test  #2: b.performance ..........***Failed    2.00 sec"])
        self.assertEqual(p.line(31.0), "lab: tests 2/5 done (1 failed)")

    def test_a_test_far_past_its_usual_time_says_so(self):
        with tempfile.TemporaryDirectory() as d:
            costs = pathlib.Path(d) / "CTestCostData.txt"
            costs.write_text("step04_simd.student.performance 3 11.2\nstep04_simd.student.correctness 3 40\n---\nx\n")
            p = test_progress.Progress(test_progress.read_costs(costs))
            q = test_progress.Progress(test_progress.read_costs(costs))
        self.feed(p, ["    Start  7: step04_simd.student.performance"])
        self.assertNotIn("endless", p.line(50.0))  # under a minute: said nothing
        self.assertIn("(75 s; it usually takes 11 s: an endless loop?)", p.line(75.0))
        self.feed(q, ["    Start  8: step04_simd.student.correctness"])
        self.assertNotIn("endless", q.line(150.0))  # under five times its 40 s
        self.assertIn("endless loop?", q.line(201.0))
        self.assertEqual(test_progress.read_costs(costs), {})  # (gone with its folder)


if __name__ == "__main__":
    unittest.main()
