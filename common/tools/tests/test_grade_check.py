#!/usr/bin/env python3
"""lab_grade_check's GPU rules, run with stand-in programs (fake_serve.py) on
any machine: a GPU speed case times the reference and the student's variant
from outside with 1 and 1 + K calls and judges the difference; a step program
that says it cannot run here is believed only where the grader's reference
program says the same; a variant's Params reach the program.

    test_grade_check.py CHECKER   (lab_grade_check; ctest passes it)
"""
import json
import os
import pathlib
import sys
import tempfile
import unittest
import subprocess

HERE = pathlib.Path(__file__).resolve().parent
FAKE = HERE / "fake_serve.py"
CHECKER = None
# the seconds a speed case's K products are sized to: the stand-ins' products are
# sleeps of 5 to 40 ms, which a fraction of the grader's 1 to 1.5 s times as well.
# (0.35 s of the 20 ms reference: K 14 to 17, so that 1 + K is never the 21 calls
# that size K, which the first test tells apart)
WINDOW = "0.35"


class Checker(unittest.TestCase):
    def setUp(self):
        self.tmp = pathlib.Path(tempfile.mkdtemp())
        self.student = self.tmp / "student"  # a program of its own, so each side gets its own FAKE_MODE
        self.reference = self.tmp / "reference"
        for path, mode in ((self.student, "STUDENT"), (self.reference, "REFERENCE")):
            # (Python itself, not a shell that starts it: a CPU variant's program may start no other program)
            path.write_text(f"#!{sys.executable}\nimport os, runpy, sys\n"
                            f"os.environ['FAKE_MODE'] = os.environ.get('FAKE_{mode}', '')\n"
                            f"runpy.run_path({str(FAKE)!r}, run_name='__main__')\n")
            path.chmod(0o755)

    def check(self, student, reference=None, extra=(), kind="gemm"):
        js = self.tmp / "v.json"
        env = dict(os.environ, FAKE_STUDENT=student, FAKE_REFERENCE=reference or "done",
                   FAKE_LOG=str(self.tmp / "log"))
        cmd = [CHECKER, "--runner", self.student, "--step", "step06", "--variant", "simt", "--kind", kind,
               "--seed", "11", "--json", js, "--timeout", "300", "--window", WINDOW, *extra]
        if reference is not None:
            cmd += ["--reference-runner", self.reference]
        p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        return json.loads(js.read_text())["cases"]

    def test_speed_is_the_difference_of_one_and_many_calls(self):
        # 20 ms a product for the reference, 8 ms for the student's: 2.5x, though each process
        # takes a quarter of a second to start (timed whole, 1 + K products against 1 + K: under 2x)
        cases = self.check("product:0.008:0.25", "product:0.020:0.25", ["--speed", "cublas,24,2.0"])
        speed = cases[-1]
        self.assertTrue(speed["name"].startswith("speed: at least 2x cublasDgemm"), speed)
        self.assertTrue(speed["passed"], speed)
        ratio = float(speed["figures"].split("x")[0])
        self.assertGreater(ratio, 2.0, speed)
        self.assertLess(ratio, 3.5, speed)
        cases = self.check("product:0.016", "product:0.020", ["--speed", "fp64_peak,24,2.0"])  # 1.25x
        self.assertFalse(cases[-1]["passed"])
        self.assertIn("too slow", cases[-1]["why"])
        self.assertIn("the FP64 CUDA-core peak", cases[-1]["name"])
        repeats = {line.split()[1] for line in (self.tmp / "log").read_text().splitlines()}
        self.assertIn("repeat=1", repeats)
        self.assertIn("repeat=21", repeats)  # sizing K
        self.assertGreater(len(repeats), 2, repeats)  # and 1 + K

    def test_a_program_that_stalls_its_one_call_answers_gains_nothing(self):
        # twice as slow as the reference (40 ms a product against 20), but 2 s slower
        # where it sees a single call: 1 + K calls minus 1 call alone would read as
        # faster than the reference; the floor (its 1 + K products' time) says 0.5x
        cases = self.check("stall:0.040:2", "product:0.020", ["--speed", "cublas,24,1.0"])
        self.assertFalse(cases[-1]["passed"], cases[-1])
        self.assertIn("too slow", cases[-1]["why"])
        self.assertLess(float(cases[-1]["why"].split("too slow: ")[1].split("x")[0]), 0.6, cases[-1])

    def test_a_cpu_variants_program_may_start_no_other_program(self):
        # a program that starts another in its place (a vendor BLAS built and run behind the pipe) is killed
        cases = self.check("exec", None)
        self.assertTrue(cases and not any(c["passed"] for c in cases), cases)
        self.assertIn("start another program", cases[0]["why"])
        # a child it starts cannot run a program either (the program itself goes on, and answers here)
        cases = self.check("spawn", None)
        self.assertTrue(cases and not any("child program ran" in c["why"] for c in cases), cases[0])
        self.assertTrue(cases[0]["passed"], cases[0])

    def test_a_message_that_is_empty_or_not_text_still_fails(self):
        # a status that is not kDone with an empty message (an empty reason used to read as a pass)
        cases = self.check("no_variant:", None)
        self.assertTrue(cases and not any(c["passed"] for c in cases), cases)
        self.assertIn("no message", cases[0]["why"])

    def test_a_speed_case_on_host_matrices_pins_them_and_drops_the_cap(self):
        # step07's: cuBLASXt against the variant, both on pinned host matrices; the correctness
        # cases keep the variant's 40 KiB cap, the timed calls run with the default Params
        cases = self.check("product:0.010", "product:0.012", ["--param", "mem=40960", "--speed", "cublasxt,24,1.1"])
        speed = cases[-1]
        self.assertTrue(speed["passed"], speed)
        self.assertIn("cuBLASXt (block 8192)", speed["name"])
        self.assertIn("pinned host matrices", speed["name"])
        lines = (self.tmp / "log").read_text().splitlines()
        reference = [line for line in lines if line.startswith("cublasxt ")]
        timed = [line for line in lines if line.startswith("simt ") and "mem=0 " in line]
        cases_ = [line for line in lines if line.startswith("simt ") and "mem=40960 " in line]
        self.assertTrue(reference and timed and cases_, lines)
        self.assertEqual(len(reference) + len(timed) + len(cases_), len(lines), lines)
        for line in reference + timed:
            self.assertIn("tile=[0, 0, 0] mem=0 gpus=[] pinned=1 refill_a=1", line)
        for line in cases_:
            self.assertIn("pinned=0 refill_a=0", line)
        self.assertTrue(any("repeat=1 " in line for line in timed) and any("repeat=1 " not in line for line in timed))

    def test_a_kernel_that_remembers_its_answer_fails_the_speed_case(self):
        # the repeated calls multiply fresh numbers each time: the first answer again is wrong,
        # and so is the first answer scaled (what a kernel could make of inputs only doubled)
        for cheat in ("stale:0", "scaled:0"):
            cases = self.check(cheat, "product:0.005", ["--speed", "cublas,24,1.0"])
            self.assertFalse(cases[-1]["passed"], cheat)
            self.assertRegex(cases[-1]["why"], r"the timed product is wrong .* after \d+ calls")
        cases = self.check("scaled:0", None, ["--speed", "transposed_dot,24,0.001"])  # a CPU speed case too
        self.assertFalse(cases[-1]["passed"])
        self.assertRegex(cases[-1]["why"], r"the timed product is wrong .* after \d+ calls")

    def test_a_gpu_speed_case_needs_the_reference(self):
        js = self.tmp / "v.json"
        p = subprocess.run([str(CHECKER), "--runner", str(self.student), "--step", "step05", "--variant", "tiled",
                            "--seed", "1", "--json", str(js), "--speed", "naive_coalesced,24,1.1"],
                           capture_output=True, text=True, env=dict(os.environ, FAKE_STUDENT="product:0"))
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertIn("needs --reference-runner", p.stderr)

    def test_a_window_that_is_no_time_is_refused(self):
        for bad in ("0", "-1", "nan", "61", "soon"):
            p = subprocess.run([str(CHECKER), "--runner", str(self.student), "--step", "step05", "--variant", "tiled",
                                "--json", str(self.tmp / "v.json"), "--window", bad], capture_output=True, text=True)
            self.assertEqual(p.returncode, 2, (bad, p.stderr))
            self.assertIn(f"--window: '{bad}'", p.stderr)
            self.assertFalse((self.tmp / "v.json").exists())

    def test_no_device_is_believed_only_when_the_reference_agrees(self):
        # a variant that needs nothing: never believed
        cases = self.check("no_device:no CUDA device visible")
        self.assertGreater(len(cases), 10)
        self.assertFalse(any(c["passed"] or c.get("skipped") for c in cases))
        self.assertIn("it says it cannot run here (no CUDA device visible), but this variant needs nothing",
                      cases[0]["why"])
        # no reference program (no GPU on the grading host): the variant is skipped with its reason
        cases = self.check("no_device:no CUDA device visible", None, ["--needs", "gpu"])
        self.assertEqual(len(cases), 1)
        self.assertTrue(cases[0].get("skipped"), cases)
        self.assertEqual(cases[0]["why"], "no CUDA device visible")
        # the reference cannot run it either: skipped
        cases = self.check("no_device:no FP64 tensor cores", "no_device:cc 7.0", ["--needs", "fp64_tensor_cores"])
        self.assertTrue(cases[0].get("skipped"), cases)
        self.assertIn("fp64_tensor_cores", (self.tmp / "log").read_text())
        # the reference runs it: the student's claim fails every case, so no share moves to other tests
        cases = self.check("no_device:no FP64 tensor cores", "done", ["--needs", "fp64_tensor_cores"])
        self.assertGreater(len(cases), 10)
        self.assertFalse(any(c["passed"] or c.get("skipped") for c in cases))
        self.assertIn("it says it cannot run here (no FP64 tensor cores), but the grader's own program",
                      cases[0]["why"])

    def test_a_gpu_variant_not_built_is_the_machines_lack_only_where_the_grader_has_no_gpu_program(self):
        # no reference program (no CUDA or no GPU on the grading host): skipped with its reason
        cases = self.check("no_variant:no student variant 'simt' in step06", None, ["--needs", "gpu"])
        self.assertEqual(len(cases), 1)
        self.assertTrue(cases[0].get("skipped"), cases)
        self.assertEqual(cases[0]["why"], "not built here (this build has no CUDA): no student variant 'simt' in step06")
        # a variant that needs nothing, or a grader that can run the GPU: every case fails
        for extra, reference in (([], None), (["--needs", "gpu"], "done")):
            cases = self.check("no_variant:no student variant 'simt' in step06", reference, extra)
            self.assertGreater(len(cases), 10)
            self.assertFalse(any(c["passed"] or c.get("skipped") for c in cases), (extra, reference))

    def test_params_reach_the_program(self):
        self.check("product:0", None, ["--param", "mem=40960", "--param", "gpus=0,0", "--param", "tile=16,16"])
        lines = (self.tmp / "log").read_text().splitlines()
        self.assertTrue(lines)
        for line in lines:
            self.assertIn("tile=[16, 16, 0] mem=40960 gpus=[0, 0] pinned=0", line)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: test_grade_check.py CHECKER")
    CHECKER = pathlib.Path(sys.argv.pop(1)).resolve()
    unittest.main(verbosity=1)
