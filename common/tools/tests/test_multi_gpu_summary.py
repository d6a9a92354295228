#!/usr/bin/env python3
"""multi_gpu_summary.py (multi-gpu-check's summary stage) on the CSVs of a 4-GPU run.

fixtures/multi_gpu_4/ is made by hand in the formats the programs write (no
GPU is needed): step07_g1/2/4.csv and step07_big_g4.csv as the step07
benchmark writes them (lab::append_csv), step07_probe_multi.csv as
step07_probe --model-gpus 8 writes it on 4 GPUs, step08_multi.csv with both
entries of step08_mpi_3d (note "data=ranks", then "data=root") and
step09_multi.csv with both min-plus shapes of step09_semiring_mpi. There are
no *_scaling.csv files (the plots stage's): the summary must not need them.
"""
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = pathlib.Path(__file__).resolve().parent
TOOLS = HERE.parent
ROOT = TOOLS.parents[1]
FIXTURE = HERE / "fixtures" / "multi_gpu_4"


def summary(folder):
    p = subprocess.run([sys.executable, str(TOOLS / "multi_gpu_summary.py"), str(folder)], capture_output=True,
                       text=True)
    return p


def line(text, *cells):
    """The lines of `text` that hold `cells` in order, separated only by blanks (a table row)."""
    pattern = r"^\s*" + r"\s+".join(re.escape(c) for c in cells) + r"(\s|$)"
    return [l for l in text.splitlines() if re.search(pattern, l)]


class FourGpuRun(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        p = summary(FIXTURE)
        assert p.returncode == 0, p.stderr
        cls.out = p.stdout

    def has(self, *cells):
        self.assertEqual(len(line(self.out, *cells)), 1, f"no single line with {cells} in:\n{self.out}")

    def test_needs_no_plots_stage(self):
        self.assertEqual(list(FIXTURE.glob("*_scaling.csv")), [])
        self.assertNotIn("left out", self.out)
        self.assertNotIn("missing", self.out)

    def test_step07_at_every_count_with_the_bounds(self):
        # GPUs, variant, s, TFLOP/s, speed-up, the bounds' ratio, goal, verdict, bound, with sharing,
        # % of the bound, check
        self.has("1", "streams", "1.426", "49.35", "-", "-", "-", "55.8", "-", "88 %", "pass")
        self.has("1", "multigpu", "1.424", "49.42", "1.00x", "1.00x", "-", "55.8", "-", "89 %", "pass")
        self.has("2", "multigpu", "0.749", "93.95", "1.90x", "-", "1.90x", "met", "-", "-", "-", "pass")
        self.has("4", "multigpu", "0.400", "175.92", "3.56x", "4.00x", "3.20x", "met", "223.3", "223.3", "79 %",
                 "pass")
        self.assertNotIn("above the ratio of the probe's bounds", self.out)
        self.assertIn("n = 65536 on 4 GPUs: 3.212 s, 175.26 TFLOP/s, 3.55x the 1-GPU rate at n = 32768; "
                      "bound 223.3, with sharing 223.3 TFLOP/s: 0.785 of it (goal 0.92): MISSED; pass", self.out)

    def test_the_bound_at_the_panel_rate(self):
        self.assertIn("device-resident cublasDgemm 16384x16384x2048 (the plan's panel products, beta = 1), all GPUs "
                      "at once (slowest): 50.2 TFLOP/s", self.out)
        self.assertIn("n = 65536 on 4 GPUs against the bound with sharing and the products at the rate of the plan's "
                      "panel products: 201.0 TFLOP/s, 0.872 of it", self.out)
        # the plan's tile with panels of other depths (step07_probe --depths)
        self.assertIn("device-resident cublasDgemm 16384x16384x4096 (beta = 1), 4 GPU(s) at once (slowest): 54.6 "
                      "TFLOP/s", self.out)
        # the panel products back to back for seconds (step07_probe --sustain): the ceiling of a long call
        self.assertIn("sustained panel products, all GPUs at once (slowest median): 52.0 TFLOP/s", self.out)
        self.assertIn("n = 65536 on 4 GPUs against the bound with sharing and the panel products at their sustained "
                      "rate: 208.0 TFLOP/s, 0.843 of it", self.out)
        # the main tables keep the square rate's bounds
        self.has("65536", "4", "223.3", "223.3", "1.00x")

    def test_probe_rates_and_bounds_with_and_without_sharing(self):
        self.assertIn("pinned H2D, all GPUs at once (sum): 200.0 GB/s", self.out)
        self.assertIn("peer copy, one pair (GPU 0 to 1): 371.2 GB/s", self.out)
        self.assertIn("peer copy, all pairs at once (sum): 1440.0 GB/s", self.out)
        self.has("32768", "1", "55.8", "-", "-")
        self.has("32768", "4", "223.3", "223.3", "1.00x")
        self.has("65536", "4", "223.3", "223.3", "1.00x")

    def test_the_8_gpu_paper_table(self):
        paper = self.out.split("on paper, a host of such GPUs")[1]
        self.assertTrue(line(paper, "32768", "8", "364.1", "446.6", "1.23x"), self.out)
        self.assertTrue(line(paper, "65536", "8", "446.6", "446.6", "1.00x"), self.out)

    def test_step08_blocks_born_on_the_gpus(self):
        self.has("1", "1x1x1", "1.3870", "50.73", "1.00x", "-", "0.0 %", "pass")
        self.has("2", "1x2x1", "0.7300", "96.40", "1.90x", "1.80x", "met", "3.3 %", "pass")
        self.has("4", "2x2x1", "0.4120", "170.80", "3.37x", "3.20x", "met", "5.1 %", "pass")

    def test_step08_rank0_entry_against_step07(self):
        # GPUs, host memory, s, TFLOP/s, step07's TFLOP/s on as many GPUs, ratio, goal, verdict, with more GPUs
        self.has("1", "pageable", "4.472", "15.74", "49.42", "0.32x", "0.70x", "MISSED", "-", "pass")
        self.has("2", "pageable", "2.600", "27.06", "93.95", "0.29x", "0.70x", "MISSED", "ok", "pass")
        self.has("4", "pageable", "1.620", "43.44", "175.92", "0.25x", "0.70x", "MISSED", "ok", "pass")
        self.assertIn("never slower with more GPUs: met", self.out)

    def test_step09_both_shapes(self):
        lecture, big = self.out.split("step09 min-plus, the lecture's shape")[1].split("step09 min-plus, n = 16384")
        self.assertIn("(M, K, N) = (8192, 8192, 2048)", lecture)
        self.assertTrue(line(lecture, "4", "2x2x1", "0.0090", "30.54", "2.90x", "3.20x", "MISSED", "10.9 %"))
        self.assertTrue(line(lecture, "2", "1x2x1", "0.0139", "19.78", "1.88x", "-", "6.1 %"))
        self.assertTrue(line(big, "4", "2x2x1", "0.2180", "40.35", "3.83x", "3.20x", "met", "4.1 %"))

    def test_the_verdicts(self):
        self.assertIn("goals: 6 met, 5 missed", self.out)
        self.assertIn("MISSED: step07 n = 65536 on 4 GPUs: 0.785 of the bound with sharing (goal 0.92)", self.out)
        self.assertIn("MISSED: step09 min-plus (8192, 8192, 2048) on 4 GPUs: 2.900x (goal 3.2x)", self.out)
        self.assertIn("MISSED: step08 rank-0 entry on 1 GPU: 0.318x step07's rate (goal 0.7x)", self.out)


class Variants(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = pathlib.Path(self.tmp.name)
        for f in FIXTURE.iterdir():
            shutil.copy(f, self.dir)

    def tearDown(self):
        self.tmp.cleanup()

    def edit(self, name, old, new):
        path = self.dir / name
        text = path.read_text()
        self.assertEqual(text.count(old), 1, old)
        path.write_text(text.replace(old, new))

    def test_rank0_entry_slower_with_more_gpus_is_flagged(self):
        # the 4-rank run of the rank-0 entry takes 5.1 s: slower than on 2 GPUs (2.6 s) and on 1 (4.472 s);
        # its matrices were pinned (--host-memory pinned), which the host column says
        self.edit("step08_multi.csv", "16,1.62,43437.4964,1.62,1.62,1,", "16,5.1,13797.7929,5.1,5.1,1,")
        self.edit("step08_multi.csv", "p=4 layout=2x2x1 data=root ", "p=4 layout=2x2x1 data=root host=pinned ")
        out = summary(self.dir).stdout
        self.assertTrue(line(out, "4", "pinned", "5.100", "13.80", "175.92", "0.08x", "0.70x", "MISSED",
                             "SLOWER", "than", "on", "2", "GPUs", "(5.100", "s", ">", "2.600", "s)"), out)
        self.assertIn("never slower with more GPUs: MISSED (FLAGGED: slower on 4 GPUs)", out)
        self.assertIn("MISSED: step08 rank-0 entry never slower with more GPUs", out)
        self.assertIn("goals: 5 met, 6 missed", out)

    def test_a_goal_above_the_ratio_of_the_bounds_is_said(self):
        # the slowest GPU at 42 TFLOP/s while all four multiply: 168.0 on 4 GPUs, 3.01x the bound on 1
        self.edit("step07_probe_multi.csv", '"bound pinned n=32768 on 4 GPUs",-1,223.3200,',
                  '"bound pinned n=32768 on 4 GPUs",-1,168.0000,')
        self.edit("step07_probe_multi.csv", '"bound pinned, sharing n=32768 on 4 GPUs",-1,223.3200,',
                  '"bound pinned, sharing n=32768 on 4 GPUs",-1,168.0000,')
        out = summary(self.dir).stdout
        self.assertTrue(line(out, "4", "multigpu", "0.400", "175.92", "3.56x", "3.01x", "3.20x", "met"), out)
        self.assertIn("the goal on 4 GPUs (3.2x) is above the ratio of the probe's bounds (3.009x: 168.0 against "
                      "55.8 TFLOP/s on 1 GPU): met only where that call comes closer to its bound than the call on "
                      "1 GPU", out)

    def test_a_rerun_keeps_its_last_row(self):
        path = self.dir / "step09_multi.csv"
        rows = path.read_text().splitlines()
        again = [r for r in rows if r.startswith("step09,minplus_mpi,solution,8192,2048,8192") and "p=4 " in r][0]
        path.write_text("\n".join(rows + [again.replace(",0.009,30541.", ",0.0085,32338.")]) + "\n")
        out = summary(self.dir).stdout
        self.assertTrue(line(out, "4", "2x2x1", "0.0085", "32.34", "3.07x", "3.20x", "MISSED"), out)
        self.assertFalse(line(out, "4", "2x2x1", "0.0090"), out)

    def test_missing_files_are_named(self):
        (self.dir / "step09_multi.csv").unlink()
        (self.dir / "step07_probe_multi.csv").unlink()
        out = summary(self.dir).stdout
        self.assertIn("step09_multi.csv: missing (the step09 stage writes it): its tables are left out", out)
        self.assertIn("step07_probe_multi.csv: missing; the probe stage writes it", out)
        self.assertTrue(line(out, "4", "2x2x1", "0.4120", "170.80", "3.37x", "3.20x", "met"), out)

    def test_probe_csv_of_the_earlier_version(self):
        # before the descriptions were quoted, a comma in one split it over two fields
        path = self.dir / "step07_probe_multi.csv"
        path.write_text(path.read_text().replace('"', ""))
        out = summary(self.dir).stdout
        self.assertIn("pinned H2D, all GPUs at once (sum): 200.0 GB/s", out)
        self.assertTrue(line(out, "32768", "8", "364.1", "446.6", "1.23x"), out)


class FaithfulFixtures(unittest.TestCase):
    """The fixtures' formats are the programs' own (so a change there fails here)."""

    def test_benchmark_csv_header(self):
        src = (ROOT / "common/src/bench_output.cpp").read_text()
        header = re.search(r'kCsvHeader =\s*"([^"]+)"', src).group(1)
        for name in ("step07_g1.csv", "step07_big_g4.csv", "step08_multi.csv", "step09_multi.csv"):
            self.assertEqual((FIXTURE / name).read_text().splitlines()[0], header, name)

    def test_notes_and_variants(self):
        s08 = (ROOT / "step08_mpi_3d/main.cpp").read_text()
        self.assertIn('"p=" + std::to_string(p) + " layout=" + r.layout + " data="', s08)
        self.assertIn('(s.data_on_root ? "root" : "ranks")', s08)
        self.assertIn('" overhead=" + std::to_string(f.overhead)', s08)
        s09 = (ROOT / "step09_semiring/mpi/main.cpp").read_text()
        self.assertIn('rec.variant = r.variant + "_mpi"', s09)
        self.assertIn('"p=" + std::to_string(p) + " layout=" + r.layout + " local=" + r.local', s09)

    def test_probe_rows(self):
        probe = (ROOT / "step07_streams_multigpu/probe.cpp").read_text()
        for what in ('"peer copy, one pair (GPU "', '"peer copy, all pairs at once (sum)"', '"bound pinned"',
                     '", sharing"', '" (on paper)"', '"pinned H2D, all GPUs at once (sum)"', '" at the panel rate"',
                     '" at the sustained rate"', '"sustained panel products, all GPUs at once (slowest median)"',
                     "(the plan's panel products, beta = 1), all GPUs at once (slowest)", '" (beta = 1), "',
                     '" GPU(s) at once (slowest)"'):
            self.assertIn(what, probe)
        lines = (FIXTURE / "step07_probe_multi.csv").read_text().splitlines()
        self.assertEqual(lines[0], "what,gpu,value,unit")
        self.assertTrue(all(re.fullmatch(r'"[^"]+",-?\d+,\d+\.\d{4},(GB/s|TFLOP/s)', l) for l in lines[1:]))


if __name__ == "__main__":
    unittest.main()
