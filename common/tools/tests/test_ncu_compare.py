#!/usr/bin/env python3
"""ncu_compare.py on two small raw pages written like Nsight Compute's
(`ncu --import K.ncu-rep --page raw --csv`: a row of metric names, a row of
units, a row per kernel), no GPU or profiler needed: the fixed rows and the
stall rows side by side, '-' where a report lacks a metric, rows that are
zero everywhere left out, and one line with exit 2 for a file that is not
such a page.
"""
import pathlib
import subprocess
import sys
import tempfile
import unittest

TOOL = pathlib.Path(__file__).resolve().parents[1] / "ncu_compare.py"


def page(path, values):
    names = ["ID", "Kernel Name"] + list(values)
    units = ["", ""] + ["" for _ in values]
    kernel = ["0", f"kernel_{path.stem}"] + [str(v) for v in values.values()]
    path.write_text("\n".join(",".join(f'"{x}"' for x in row) for row in (names, units, kernel)) + "\n")
    return path


def run(*args):
    return subprocess.run([sys.executable, str(TOOL), *map(str, args)], capture_output=True, text=True)


class NcuCompare(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        d = pathlib.Path(self.dir.name)
        self.a = page(d / "ncu_mine_8192.raw.csv", {
            "launch__registers_per_thread": 255, "gpu__time_duration.sum": "19,472",
            "sm__pipe_tensor_op_dmma_cycles_active.avg.pct_of_peak_sustained_active": 87.8,
            "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio": 1.179,
            "smsp__average_warps_issue_stalled_drain_per_issue_active.ratio": 0})
        self.b = page(d / "ncu_cublas_8192.raw.csv", {
            "launch__registers_per_thread": 246, "gpu__time_duration.sum": "18,117",
            "sm__pipe_tensor_op_dmma_cycles_active.avg.pct_of_peak_sustained_active": 98.3,
            "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio": 0.198,
            "smsp__average_warps_issue_stalled_drain_per_issue_active.ratio": 0})

    def tearDown(self):
        self.dir.cleanup()

    def test_side_by_side(self):
        r = run(self.a, self.b)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        self.assertIn("mine_8192: kernel_ncu_mine_8192.raw", lines[0])
        row = {line.split()[0] + " " + line.split()[1]: line.split() for line in lines[2:] if line.strip()}
        self.assertEqual(row["registers /"][-2:], ["255", "246"])
        self.assertEqual(row["duration (ns)"][-2:], ["19472", "18117"])  # thousands separators read
        self.assertEqual(row["stall barrier"][-2:], ["1.179", "0.198"])
        self.assertTrue(any("dmma_cycles_active" in line for line in lines))
        self.assertFalse(any("drain" in line for line in lines), "a row of zeros is left out")

    def test_missing_metric_is_a_dash(self):
        d = pathlib.Path(self.dir.name)
        c = page(d / "ncu_small_8192.raw.csv", {"launch__registers_per_thread": 64})
        r = run(self.a, c)
        self.assertEqual(r.returncode, 0, r.stderr)
        dur = [line for line in r.stdout.splitlines() if line.startswith("duration")][0].split()
        self.assertEqual(dur[-2:], ["19472", "-"])

    def test_not_a_raw_page(self):
        d = pathlib.Path(self.dir.name)
        bad = d / "bad.csv"
        bad.write_text("step,variant\nstep06,dmma\n")
        r = run(bad)
        self.assertEqual(r.returncode, 2)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1)
        self.assertIn("bad.csv", r.stderr)
        r = run(d / "missing.csv")
        self.assertEqual(r.returncode, 2)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1)


if __name__ == "__main__":
    unittest.main()
