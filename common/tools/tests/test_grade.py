#!/usr/bin/env python3
"""grade.py on small JUnit fixtures: fair points, colour stripped, timeouts,
graded-separately steps, cases skipped beside cases that ran, merging, and
grading.toml read as TOML."""
import importlib.util
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

HERE = pathlib.Path(__file__).resolve().parent
GRADE = HERE.parent / "grade.py"
FIX = HERE / "fixtures"


def run(*args, ok=True):
    p = subprocess.run([sys.executable, str(GRADE), *map(str, args)], capture_output=True, text=True)
    if ok and p.returncode != 0:
        raise AssertionError(f"grade.py {' '.join(map(str, args))} failed:\n{p.stdout}{p.stderr}")
    return p


class Grade(unittest.TestCase):
    def setUp(self):
        self.tmp = pathlib.Path(tempfile.mkdtemp())
        self.base = self.tmp / "base.json"
        run("baseline", FIX / "skeleton.xml", "-o", self.base)

    def score(self, junit, points=FIX / "points.toml", *extra):
        out = self.tmp / "r.json"
        run("score", junit, "--points", points, "--baseline", self.base, "--json", out, "--md", self.tmp / "r.md",
            *extra)
        data = json.loads(out.read_text())
        return data, {r["step"]: r for r in data["extra_data"]["lab_steps"]}

    def test_untouched_skeleton_scores_zero(self):
        data, steps = self.score(FIX / "skeleton.xml")
        self.assertEqual(data["score"], 0)
        self.assertIn("0.0 / 40.0 points (30.0 reachable on this machine)", data["output"])

    def test_cases_passing_on_the_skeleton_earn_nothing(self):
        data, steps = self.score(FIX / "partial.xml")
        self.assertEqual(steps["step01"]["score"], 5.0)  # 2 of 2 graded cases; QuickReturn does not count
        self.assertEqual(steps["step02"]["score"], 5.0)  # timed out in the 3rd case: 1 of 2 graded
        self.assertEqual(steps["step08"]["score"], 7.5)  # colour stripped; a case failed on one rank failed
        self.assertEqual(data["score"], 17.5)
        step02 = next(t for t in data["tests"] if t["name"].startswith("step02"))
        self.assertIn("Step02/Shapes.Odd/0", step02["output"])
        self.assertNotIn("\x1b", json.dumps(data))
        self.assertNotIn("NON-XML-CHAR", data["output"])

    def test_a_step_that_cannot_run_here_is_graded_separately(self):
        data, steps = self.score(FIX / "partial.xml")
        self.assertEqual(steps["step05"]["status"], "separately")
        self.assertIn("--steps 05", steps["step05"]["command"])
        self.assertIn("Graded separately", data["output"])

    def test_steps_option_grades_only_those(self):
        data, steps = self.score(FIX / "partial.xml", FIX / "points.toml", "--steps", "01,02")
        self.assertEqual(sorted(steps), ["step01", "step02"])
        self.assertEqual(data["score"], 10.0)

    def merged_step08(self, cpu, gpu, score, *extra):
        """Both orders of merging the two reports (as JSON, step08's row set to
        `score` in the second): step08's merged rows."""
        for row in gpu["extra_data"]["lab_steps"]:
            if row["step"] == "step08":
                row.update(score=score)
        a, b = self.tmp / "a.json", self.tmp / "b.json"
        a.write_text(json.dumps(cpu))
        b.write_text(json.dumps(gpu))
        rows = []
        for order in ((a, b), (b, a)):
            run("merge", *order, "--json", self.tmp / "m.json", *extra)
            merged = json.loads((self.tmp / "m.json").read_text())
            rows.append(next(r for r in merged["extra_data"]["lab_steps"] if r["step"] == "step08"))
        return rows

    def test_merge_takes_each_step_where_it_was_graded(self):
        cpu, _ = self.score(FIX / "partial.xml")
        a = self.tmp / "a.json"
        a.write_text(json.dumps(cpu))
        gpu = json.loads(a.read_text())
        for row in gpu["extra_data"]["lab_steps"]:
            if row["step"] == "step05":
                row.update(status="graded", score=10.0)
            else:
                row.update(status="separately", score=0.0)
        b = self.tmp / "b.json"
        b.write_text(json.dumps(gpu))
        run("merge", a, b, "--json", self.tmp / "m.json")
        merged = json.loads((self.tmp / "m.json").read_text())
        self.assertEqual(merged["score"], 27.5)

    def test_merge_takes_a_step_graded_twice_where_more_of_its_tests_ran(self):
        # step09 on a CPU host: its GPU semirings skipped; on the GPU host they ran too
        cpu, _ = self.score(FIX / "partial.xml")
        gpu = json.loads(json.dumps(cpu))
        tests = [t for t in gpu["tests"] if t["name"].startswith("step08")]
        self.assertTrue(tests and all(t["status"] != "skipped" for t in tests), gpu["tests"])
        gpu["tests"].append(dict(tests[0], name=tests[0]["name"] + ".gpu", score=3.0, max_score=3.0, status="passed"))
        self.assertEqual([r["score"] for r in self.merged_step08(cpu, gpu, 12.0)], [12.0, 12.0])
        # as many ran in both: the first report counts
        self.assertEqual([r["score"] for r in self.merged_step08(cpu, json.loads(json.dumps(cpu)), 12.0)], [7.5, 12.0])

    def test_merge_prefers_a_step_that_did_not_compile_and_refuses_two_submissions(self):
        cpu, _ = self.score(FIX / "partial.xml")
        cpu["extra_data"]["lab_files"] = [{"file": "step08_mpi_3d/cube.cpp", "sha256": "aa"}]
        # the GPU host compiled a file the CPU host left out, and it failed: one test, no points
        gpu = json.loads(json.dumps(cpu))
        gpu["tests"] = [t for t in gpu["tests"] if not t["name"].startswith("step08")] + [
            {"name": "step08.checked", "score": 0.0, "max_score": 15.0, "status": "failed",
             "output": "did not compile; the compiler said first:\nsemiring_cuda.cu:9: error: x"}]
        self.assertEqual([r["score"] for r in self.merged_step08(cpu, gpu, 0.0, "--md", self.tmp / "m.md")],
                         [0.0, 0.0])
        a = self.tmp / "a.json"  # (the CPU report, as merged_step08 wrote it)
        self.assertIn("reachable in these reports", (self.tmp / "m.md").read_text())
        # another submission's report: refused in one line, nothing written
        other = json.loads(json.dumps(gpu))
        other["extra_data"]["lab_files"][0]["sha256"] = "bb"
        c = self.tmp / "c.json"
        c.write_text(json.dumps(other))
        (self.tmp / "m.json").unlink()
        p = run("merge", a, c, "--json", self.tmp / "m.json", ok=False)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("reports of different submissions: their step08_mpi_3d/cube.cpp differ", p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertFalse((self.tmp / "m.json").exists())

    def test_points_file_is_toml_and_checked(self):
        bad = self.tmp / "bad.toml"
        bad.write_text("[points]\nstep01 = 'many'\n")
        p = run("score", FIX / "partial.xml", "--points", bad, ok=False)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("step01", p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1)
        inline = self.tmp / "inline.toml"
        inline.write_text('points = { step01 = 5, step02 = 10.0, step05 = 10, step08 = 15 }\n')
        if importlib.util.find_spec("tomllib") or importlib.util.find_spec("tomli"):
            data, _ = self.score(FIX / "partial.xml", inline)
            self.assertEqual(data["score"], 17.5)
        else:  # Python < 3.11 without tomli: grade.py's own reader of grading.toml's subset, one line on the rest
            p = run("score", FIX / "partial.xml", "--points", inline, ok=False)
            self.assertNotEqual(p.returncode, 0)
            self.assertEqual(p.stderr.strip().splitlines(), [f"grade: error: {inline}:1: expected 'stepNN = points' under [points]"])

    def test_summary_is_short_and_names_the_todo(self):
        p = run("summary", FIX / "skeleton.xml", ok=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("not implemented yet: the triple loop", p.stdout)
        self.assertIn("Step01.Square", p.stdout)
        self.assertIn("1 passed, 3 failed, 1 skipped", p.stdout)

    def test_summary_names_the_todos_of_failed_tests_alone(self):
        # the instructor tree: the skeleton check passes by finding the TODO, and names it in parentheses
        check = ("as expected, the skeleton fails its tests: 3 failure lines, 1 'not implemented yet' "
                 "(first: not implemented yet: step01 dgemm: the j, p, i triple loop (see the handout))\n")
        p = run("summary", self.junit(("step01_naive.student.must_fail", "pass", check)))
        self.assertNotIn("not implemented yet", p.stdout)
        self.assertIn("1 passed, 0 failed", p.stdout)

    def test_tests_of_a_step_whose_file_calls_a_reference_count_as_failed(self):
        warn = ("lab: warning: step01_naive/naive.cpp:23: it calls lab::reference_gemm (a reference product of the "
                "harness): ./lab grade gives step01 no points while it does (a graded file computes the product "
                "with its own code)")
        p = run("summary", self.junit(("step01_naive.student.correctness", "pass", "[  PASSED  ] 3 tests.\n"),
                                      ("step02_transpose.student.correctness", "pass", "[  PASSED  ] 3 tests.\n")),
                "--refused", warn, ok=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("  FAIL step01_naive.student.correctness: its tests passed, but the grade gives step01 no "
                      "points: step01_naive/naive.cpp:23: it calls lab::reference_gemm", p.stdout)
        self.assertIn("1 passed, 1 failed, 0 skipped", p.stdout)

    def test_each_fixtures_first_failed_case_is_listed_first(self):
        out = "".join(f"[ RUN      ] Contract.Case{i}\n[  FAILED  ] Contract.Case{i} (0 ms)\n" for i in range(9))
        out += ("[ RUN      ] EveryIsa/MicroKernel.Keeps/avx512\n[  FAILED  ] EveryIsa/MicroKernel.Keeps/avx512 (0 ms)\n"
                "[ RUN      ] Ijk.Case0\n[  FAILED  ] Ijk.Case0 (0 ms)\n")
        p = run("summary", self.junit(("step01_naive.student.correctness", "fail", out)), ok=False)
        listed = [l.strip() for l in p.stdout.splitlines() if l.startswith("         ") and "." in l][:6]
        self.assertEqual(listed[:3], ["Contract.Case0", "EveryIsa/MicroKernel.Keeps/avx512", "Ijk.Case0"], p.stdout)
        self.assertIn("... and 5 more", p.stdout)

    def test_the_todos_a_test_did_not_reach_are_named_from_the_files(self):
        # step02's skeleton: its tests stop at transpose_scaled's TODO; dgemm's is still in the file
        out = ("[ RUN      ] S.Bad\nunknown file: Failure\nC++ exception with description \"not implemented yet: "
               "step02 transpose_scaled: At(p, i) = alpha * A(i, p) (see the handout)\" thrown.\n[  FAILED  ] S.Bad\n")
        p = run("summary", self.junit(("step02_transpose.student.correctness", "fail", out)), ok=False)
        self.assertIn("  not implemented yet: step02 transpose_scaled", p.stdout)
        self.assertIn("  and still in your files: step02 dgemm (step02_transpose/transpose.cpp)\n", p.stdout)

    def test_the_todos_left_are_those_a_build_here_compiles(self):
        # step04's skeleton: the NEON kernel's TODO is Arm's, the AVX kernels' x86's
        sys.path.insert(0, str(GRADE.parent))
        import grade
        root = self.tmp / "todos"
        files = ["step04_simd/pack.cpp", "step04_simd/kernel_avx2.cpp", "step04_simd/kernel_avx512.cpp",
                 "step04_simd/kernel_neon.cpp"]
        for rel in files:
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(f'void f() {{\n  LAB_TODO("step04 {rel}");\n}}\n')
        (root / "common").mkdir()
        (root / grade.STUDENT_FILES).write_text("\n".join(files) + "\n")
        x86 = {rel for rel, _ in grade.todos_left("step04_simd", root, machine="x86_64")}
        arm = {rel for rel, _ in grade.todos_left("step04_simd", root, machine="aarch64")}
        self.assertEqual(x86, {"step04_simd/pack.cpp", "step04_simd/kernel_avx2.cpp", "step04_simd/kernel_avx512.cpp"})
        self.assertEqual(arm, {"step04_simd/pack.cpp", "step04_simd/kernel_neon.cpp"})

    def test_a_speed_test_that_passed_shows_its_margin(self):
        out = ("[ RUN      ] Step02Speed.TwiceTheDots\nn = 512, 1 thread(s): transposed dot 18.80, step02 38.56 GFLOP/s "
               "(2.05x)\n[       OK ] Step02Speed.TwiceTheDots (1927 ms)\n[  PASSED  ] 1 test.\n")
        p = run("summary", self.junit(("step02_transpose.student.performance", "run", out),
                                      ("step02_transpose.student.correctness", "run", "[  PASSED  ] 3 tests.\n")))
        self.assertIn("  PASS step02_transpose.student.performance: n = 512, 1 thread(s): transposed dot 18.80, "
                      "step02 38.56 GFLOP/s (2.05x)\n", p.stdout)
        self.assertNotIn("PASS step02_transpose.student.correctness", p.stdout)
        gpu = ("[ RUN      ] Step06Perf.Simt\n  n=4096   simt       2.1 ms  65.10 TFLOP/s\n"
               "  n=4096: simt 71% of the CUDA-core peak, dmma 93% of cuBLAS\n[       OK ] Step06Perf.Simt (900 ms)\n")
        p = run("summary", self.junit(("step06_cuda_register_blocking.student.performance", "run", gpu)))
        self.assertIn("  PASS step06_cuda_register_blocking.student.performance: n=4096: simt 71% of the CUDA-core "
                      "peak, dmma 93% of cuBLAS\n", p.stdout)
        self.assertNotIn("65.10", p.stdout)

    def test_the_first_failure_shown_is_a_pieces_where_one_failed(self):
        # a whole product failed first, then the packing that broke it: the packing's message is shown
        out = ("[ RUN      ] Step04Kernels.MatchReference/c1\n/src/common/testing/contract.cpp:146: Failure\n"
               "wrong result for m=5:\n[  FAILED  ] Step04Kernels.MatchReference/c1 (0 ms)\n"
               "[ RUN      ] Step04Pack.PanelsOfBZeroPadded\n/src/step04_simd/tests/test_microkernel.cpp:140: Failure\n"
               "B panel 0, p 0, position 1\n[  FAILED  ] Step04Pack.PanelsOfBZeroPadded (0 ms)\n")
        p = run("summary", self.junit(("step04_simd.student.correctness", "fail", out)), ok=False)
        self.assertIn("the first failure (test_microkernel.cpp:140):", p.stdout)
        self.assertIn("| B panel 0, p 0, position 1", p.stdout)

    def test_summary_shows_the_first_failures_message(self):
        out = ("[ RUN      ] S.Good\n[       OK ] S.Good (0 ms)\n[ RUN      ] S.Bad\n"
               "/src/step09_semiring/tests/semiring_testing.hpp:148: Failure\nValue of: r.ok\n  Actual: false\n"
               "Expected: true\nwrong result:\n3 of 9 elements differ (mismatch):\n  C(1, 0) = nan, want -inf exactly\n"
               "Google Test trace:\n/src/t.hpp:117: minplus m3 n3, seed 7\n"
               "/src/step09_semiring/tests/semiring_testing.hpp:152: Failure\nNaN at C(1, 0)\n"
               "[  FAILED  ] S.Bad (0 ms)\n")
        p = run("summary", self.junit(("step09_semiring.student.correctness", "fail", out)), ok=False)
        first = p.stdout.split("the first failure (semiring_testing.hpp:148):\n")
        self.assertEqual(len(first), 2, p.stdout)
        shown = [l.strip() for l in first[1].splitlines() if l.strip().startswith("|")]
        self.assertEqual(shown, ["| wrong result:", "| 3 of 9 elements differ (mismatch):",
                                 "| C(1, 0) = nan, want -inf exactly", "| during: minplus m3 n3, seed 7"])
        # several traces: a line each, a hint of 200 characters whole
        hint = "a NaN sum must be skipped: " + "x" * 173
        two = out.replace("seed 7\n", f"seed 7\n/src/t.cpp:207: {hint}\n/src/t.cpp:206: avx2\n")
        p = run("summary", self.junit(("step09_semiring.student.correctness", "fail", two)), ok=False)
        shown = [l.strip() for l in p.stdout.split("the first failure (semiring_testing.hpp:148):\n")[1].splitlines()
                 if l.strip().startswith("| during")]
        self.assertEqual(shown, ["| during: minplus m3 n3, seed 7", f"| during: {hint}", "| during: avx2"])
        # a wrong result's block map comes whole, after at most four lines of the message
        mapped = ("[ RUN      ] C.Small\n/src/common/testing/contract.cpp:146: Failure\nwrong result for m=2:\n"
                  "4 of 4 elements of C (2 x 2) are outside the bound:\n" +
                  "".join(f"C({i},0) = 1, want 0\n" for i in range(4)) +
                  "block map (1 x 1 elements per character; '.' right, 'X' wrong, 'N' NaN/Inf):\n  X.\n  XX\n"
                  "Google Test trace:\n/src/step03_tiling/tests/test_tiling.cpp:40: tiles mc 1, nc 1, kc 1\n"
                  "[  FAILED  ] C.Small (0 ms)\n")
        p = run("summary", self.junit(("step03_tiling.student.correctness", "fail", mapped)), ok=False)
        shown = [l.strip() for l in p.stdout.split("the first failure (contract.cpp:146):\n")[1].splitlines()
                 if l.strip().startswith("|")]
        self.assertEqual(shown, ["| wrong result for m=2:", "| 4 of 4 elements of C (2 x 2) are outside the bound:",
                                 "| C(0,0) = 1, want 0", "| C(1,0) = 1, want 0",
                                 "| block map (1 x 1 elements per character; '.' right, 'X' wrong, 'N' NaN/Inf):",
                                 "| X.", "| XX", "| during: tiles mc 1, nc 1, kc 1"])
        # an EXPECT_EQ with a message: the message, then the operands on one line; without one: the operands
        eq = ("[ RUN      ] W.Same\n/src/test_ways.cpp:244: Failure\nExpected equality of these values:\n  0\n"
              "  std::memcmp(a, b, n)\n    Which is: 8\nways jc 1 x ic 2 give other bits: a race?\n"
              "[  FAILED  ] W.Same (1 ms)\n")
        bare = ("[ RUN      ] W.Count\n/src/test_x.cpp:9: Failure\nExpected equality of these values:\n  3\n"
                "  count\n    Which is: 4\n[  FAILED  ] W.Count (1 ms)\n")
        p = run("summary", self.junit(("step04_simd.student.correctness", "fail", eq),
                                      ("step03_tiling.student.correctness", "fail", bare)), ok=False)
        self.assertIn("the first failure (test_ways.cpp:244):\n         | ways jc 1 x ic 2 give other bits: a race?\n"
                      "         | compared: 0 and std::memcmp(a, b, n) = 8\n", p.stdout)
        self.assertIn("the first failure (test_x.cpp:9):\n         | Expected equality of these values:\n"
                      "         | 3\n         | count\n         | Which is: 4\n", p.stdout)
        # the same first failure in two programs (step08 at 2 and 3 ranks) is shown once
        p = run("summary", self.junit(("step03_tiling.student.correctness", "fail", bare),
                                      ("step03_tiling.student.performance", "fail", bare)), ok=False)
        self.assertEqual(p.stdout.count("Which is: 4"), 1, p.stdout)
        self.assertIn("the first failure (test_x.cpp:9): the same as in step03_tiling.student.correctness", p.stdout)
        # the same program at other rank counts failing at the same line on other sizes: shown once too
        def at(m):
            return (f"[ RUN      ] S.Bad\n/src/test_x.cpp:9: Failure\nwrong result for m={m}:\n"
                    f"C(0,0) = 1, want 0\n[  FAILED  ] S.Bad (1 ms)\n")
        p = run("summary", self.junit(("step08_mpi_3d.student.correctness.np2", "fail", at(2)),
                                      ("step08_mpi_3d.student.correctness.np3", "fail", at(3))), ok=False)
        self.assertEqual(p.stdout.count("C(0,0) = 1, want 0"), 1, p.stdout)
        self.assertIn("the first failure (test_x.cpp:9): the same as in step08_mpi_3d.student.correctness.np2",
                      p.stdout)
        # a TODO's failure names the TODO instead
        p = run("summary", FIX / "skeleton.xml", ok=False)
        self.assertNotIn("the first failure", p.stdout)

    def test_summary_counts_cases_as_googletest_does_and_names_other_steps_todos(self):
        own = "\n".join(f"[ RUN      ] S.C{i}\n[  FAILED  ] S.C{i} (0 ms)" for i in range(3))
        # ctest cut the middle of a long output: GoogleTest's own totals survive at its end
        own += "\n...[cut]...\n[==========] 704 tests from 9 test suites ran. (5 ms total)\n" \
               "[  PASSED  ] 153 tests.\n[  FAILED  ] 551 tests, listed below:\n"
        other = "not implemented yet: step08 choose_grid: the factorization\n[ RUN      ] M.P\n[  FAILED  ] M.P (1 ms)"
        junit = self.tmp / "j.xml"
        junit.write_text(
            '<testsuite><testcase name="step09_semiring.student.correctness" status="fail">'
            f'<failure message="Failed"/><system-out>{own}</system-out></testcase>'
            '<testcase name="step09_semiring.student.mpi.np2" status="fail">'
            f'<failure message="Failed"/><system-out>{other}</system-out></testcase></testsuite>')
        p = run("summary", junit, ok=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("step09_semiring.student.correctness (Failed): 551 of 704 cases failed", p.stdout)
        self.assertIn("WAIT step09_semiring.student.mpi.np2: needs step08", p.stdout)
        self.assertIn("0 passed, 1 failed, 0 skipped; 1 more wait for step08", p.stdout)
        self.assertNotIn("not implemented yet: step08", p.stdout.split("WAIT")[0])
        # a case of its own that failed for a reason of its own is shown, not hidden behind the wait
        mine = other + ("\n[ RUN      ] Step08ChooseGrid.Ties\n/src/step08_mpi_3d/tests/test_grid.cpp:61: Failure\n"
                        "Expected equality of these values:\n[  FAILED  ] Step08ChooseGrid.Ties (0 ms)")
        p = run("summary", self.junit(("step08_mpi_3d.student.correctness.np1", "fail",
                                       mine.replace("step08 choose_grid", "step04 five_loops"))), ok=False)
        self.assertNotIn("WAIT", p.stdout)
        self.assertIn("FAIL step08_mpi_3d.student.correctness.np1", p.stdout)
        self.assertIn("Step08ChooseGrid.Ties", p.stdout)

    def test_a_lost_gpu_context_reads_as_one_failure(self):
        # 10 cases pass, 2 give wrong results, the 13th loses the GPU context, 3 more do not run
        out = [f"[ RUN      ] Contract/S.M/c{i}\n[       OK ] Contract/S.M/c{i} (1 ms)" for i in range(10)]
        out += [f"[ RUN      ] Contract/S.M/c{i}\nwrong result for m=33\n[  FAILED  ] Contract/S.M/c{i} (1 ms)"
                for i in (10, 11)]
        out += ["[ RUN      ] Contract/S.M/c12\ndgemm threw for a valid call: cudaErrorIllegalAddress\n"
                "the GPU context is now lost (cudaErrorIllegalAddress): ...\n[  FAILED  ] Contract/S.M/c12 (1 ms)"]
        out += [f"[ RUN      ] Contract/S.M/c{i}\nnot run: the GPU context was lost in Contract/S.M/c12 "
                f"(cudaErrorIllegalAddress)\n[  FAILED  ] Contract/S.M/c{i} (0 ms)" for i in (13, 14, 15)]
        out += ["[----------] Global test environment tear-down\ncontext_watch.cpp:64: Failure\nFailed\n"
                "the GPU context was lost in Contract/S.M/c12 (cudaErrorIllegalAddress): the 3 GPU tests after it "
                "did not run and count as failed; fix that test first: compute-sanitizer --tool memcheck /b/t "
                "--gtest_filter='Contract/S.M/c12'\n[==========] 16 tests from 1 test suite ran. (5 ms total)\n"
                "[  PASSED  ] 10 tests.\n[  FAILED  ] 6 tests, listed below:\n"]
        junit = self.tmp / "j.xml"
        junit.write_text('<testsuite><testcase name="step05_cuda_shared.student.correctness" status="fail">'
                         f'<failure message="Failed"/><system-out>{chr(10).join(out)}</system-out></testcase>'
                         '</testsuite>')
        p = run("summary", junit, ok=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("(Failed): 3 of 13 cases run failed; then the GPU context was lost in Contract/S.M/c12 "
                      "(cudaErrorIllegalAddress), and the 3 GPU cases after it did not run", p.stdout)
        self.assertIn("compute-sanitizer --tool memcheck /b/t --gtest_filter='Contract/S.M/c12'", p.stdout)
        self.assertIn("Contract/S.M/c12", p.stdout.split("compute-sanitizer")[1])  # listed with the real failures
        self.assertNotIn("Contract/S.M/c13", p.stdout)
        self.assertIn("0 passed, 1 failed, 0 skipped", p.stdout)
        # graded: the cases that did not run earn nothing
        data, steps = self.score(junit)
        self.assertEqual(steps["step05"]["status"], "graded")
        self.assertEqual(steps["step05"]["score"], 6.25)  # 10 of 16 cases
        self.assertIn("`step05_cuda_shared.student.correctness`: the GPU context was lost in Contract/S.M/c12",
                      data["output"])

    def test_a_crash_names_its_rank_signal_and_test_and_the_asan_command(self):
        run_case = "[ RUN      ] Step08Cube.EveryGrid\n"
        junit = self.junit(
            ("step08_mpi_3d.student.correctness.np2", "fail",
             run_case + "mpiexec noticed that process rank 1 with PID 0 on node vm exited on\nsignal 11 "
             "(Segmentation fault)."),
            ("step08_mpi_3d.student.correctness.np3", "fail",
             run_case + "MPI_ABORT was invoked on rank 2 in communicator MPI_COMM_WORLD\nwith errorcode 3."),
            ("step03_tiling.student.correctness", "fail", "[ RUN      ] Contract/S.M/c1\n"),
            ("step08_mpi_3d.student.correctness.np4", "fail", run_case),
            ("step08_mpi_3d.student.correctness.np6", "fail",
             run_case + "mpiexec has exited due to process rank 1 with PID 0 on\nnode vm exiting improperly. There "
             "are three reasons this could occur:"),
            ("step08_mpi_3d.student.correctness.np8", "fail",
             run_case + "The first process to do so was:\n\n  Process name: [[13458,1],5]\n  Exit code:    3\n"))
        log = self.tmp / "ctest.log"
        log.write_text("1/4 Test #3: step03_tiling.student.correctness ....***Exception: SegFault  0.52 sec\n"
                       "4/4 Test #4: step08_mpi_3d.student.correctness.np4 ...***Timeout  60.02 sec\n")
        p = run("summary", junit, "--log", log, ok=False)
        self.assertIn("rank 1 died with signal 11 (SIGSEGV) in test Step08Cube.EveryGrid", p.stdout)
        self.assertIn("find the line: LAB_CONFIGURE_ARGS=-DLAB_ENABLE_MPI=ON ASAN_OPTIONS=detect_leaks=0 "
                      "./lab test --preset asan step08 -R '^step08_mpi_3d\\.student\\.correctness\\.np2$'",
                      p.stdout)
        self.assertIn("rank 2 called MPI_Abort (error code 3) in test Step08Cube.EveryGrid", p.stdout)
        self.assertIn("the program died with signal 11 (SIGSEGV) in test Contract/S.M/c1", p.stdout)
        self.assertIn("find the line: ./lab test --preset asan step03 -R '^step03_tiling\\.student\\.correctness$'",
                      p.stdout)
        self.assertIn("timed out after 60 s in test Step08Cube.EveryGrid", p.stdout)
        self.assertIn("rank 1 ended before the others without MPI_Finalize (an exit() or a return from main in "
                      "the middle of the run?) in test Step08Cube.EveryGrid", p.stdout)
        self.assertIn("rank 5 exited with status 3 before the others finished in test Step08Cube.EveryGrid",
                      p.stdout)
        self.assertEqual(p.stdout.count("find the line"), 2)  # not for MPI_Abort, an early exit or a timeout

    def test_a_failed_test_under_mpi_is_not_an_early_exit(self):
        # every rank ran its tests to the end; status 1 is GoogleTest's for a failed test
        out = ("[ RUN      ] Step08ChooseGrid.Ties\nchoose_grid.cpp:40: Failure\n[  FAILED  ] Step08ChooseGrid.Ties (0 ms)\n"
               "[==========] 12 tests from 3 test suites ran. (5 ms total)\n[  FAILED  ] 1 test, listed below:\n"
               "Process name: [[4242,1],0]\n  Exit code:    1\n")
        log = self.tmp / "ctest.log"
        log.write_text("1/1 Test #1: step08_mpi_3d.student.correctness.np1 ...***Failed  0.5 sec\n")
        p = run("summary", self.junit(("step08_mpi_3d.student.correctness.np1", "fail", out)), "--log", log, ok=False)
        self.assertIn("Step08ChooseGrid.Ties", p.stdout)
        self.assertNotIn("exited with status", p.stdout)
        # cut short (no last line): the same status is news
        cut = out.replace("[==========] 12 tests from 3 test suites ran. (5 ms total)\n", "")
        p = run("summary", self.junit(("step08_mpi_3d.student.correctness.np1", "fail", cut)), "--log", log, ok=False)
        self.assertIn("rank 0 exited with status 1 before the others finished", p.stdout)

    def test_an_exception_that_reached_terminate_is_named(self):
        out = ("[ RUN      ] Step02TransposeScaled.EveryElementMovesAndIsScaled\nterminate called after throwing an "
               "instance of 'std::invalid_argument'\n  what():  transpose: bad block\n")
        log = self.tmp / "ctest.log"
        log.write_text("1/1 Test #1: step02_transpose.student.correctness ...Subprocess aborted***Exception:"
                       "   0.05 sec\n")
        p = run("summary", self.junit(("step02_transpose.student.correctness", "fail", out)), "--log", log, ok=False)
        self.assertIn("an exception (std::invalid_argument: transpose: bad block) reached std::terminate in test "
                      "Step02TransposeScaled.EveryElementMovesAndIsScaled: it was thrown where nothing can catch it, "
                      "most often inside an OpenMP parallel region", p.stdout)

    def test_an_abort_from_a_corrupted_heap_is_named(self):
        # ctest 3.25: "Subprocess aborted***Exception:"; glibc's own line says what it found
        out = ("[ RUN      ] Contract/S.M/c0\n[       OK ] Contract/S.M/c0 (0 ms)\n"
               "[ RUN      ] Step02TransposeScaled.EveryElementMovesAndIsScaled\ndouble free or corruption (out)\n")
        log = self.tmp / "ctest.log"
        log.write_text("1/2 Test #1: step02_transpose.student.correctness ...Subprocess aborted***Exception:"
                       "   0.05 sec\n")
        p = run("summary", self.junit(("step02_transpose.student.correctness", "fail", out)), "--log", log, ok=False)
        self.assertIn("the program died with signal 6 (SIGABRT) in test Step02TransposeScaled."
                      "EveryElementMovesAndIsScaled", p.stdout)
        self.assertIn("glibc found its heap broken ('double free or corruption (out)'): a write outside an "
                      "allocation, as past the end of a matrix, in this test or one before it", p.stdout)
        self.assertIn("find the line: ./lab test --preset asan step02", p.stdout)
        # a GPU step's program: compute-sanitizer on that program and case (asan builds no CUDA code)
        log = self.tmp / "test-student.log"
        log.write_text("1/1 Test #1: step05_cuda_shared.student.correctness ...***Exception: SegFault  0.5 sec\n")
        p = run("summary", self.junit(("step05_cuda_shared.student.correctness", "fail",
                                       "[ RUN      ] Contract/S.M/c3\n")), "--log", log, ok=False)
        self.assertIn("find the line: compute-sanitizer --tool memcheck build/student/step05_cuda_shared/"
                      "step05_cuda_shared_correctness_student --gtest_filter='Contract/S.M/c3'", p.stdout)

    def test_a_deadlock_names_its_rank_test_and_phase(self):
        # the words step08's watchdog prints (tests/mpi_test_main.cpp)
        out = ("[ RUN      ] Step08Multiply.BlocksWhereTheyLie\n\nstep08 tests: rank 0 made no progress for 30 s in "
               "test Step08Multiply.BlocksWhereTheyLie, last in grid 1x1x2, phase reduce: in MPI_Reduce on fibre_c "
               "(along z), rank at (0,0,0): a deadlock? (a rank waiting in a collective that another rank never "
               "entered)\n")
        p = run("summary", self.junit(("step08_mpi_3d.student.correctness.np2", "fail",
                                       "[==========] Running 71 tests from 9 test suites.\n" + out)), ok=False)
        self.assertIn("1 of 1 cases failed; it ended in its case 1 of 71: the others did not run", p.stdout)
        self.assertIn("rank 0 made no progress for 30 s in test Step08Multiply.BlocksWhereTheyLie (last in grid "
                      "1x1x2, phase reduce: in MPI_Reduce on fibre_c (along z), rank at (0,0,0)): a deadlock?", p.stdout)

    def test_a_deadlock_after_a_rank_threw_names_what_it_threw(self):
        out = ("[ RUN      ] Step08Multiply.BlocksWhereTheyLie\n"
               "step08 tests: rank 0 made no progress for 30 s in test Step08Multiply.BlocksWhereTheyLie, last in "
               "grid 1x1x2, phase broadcast: in MPI_Bcast on fibre_b (along x), rank at (0,0,0): a deadlock?\n"
               "step08 tests: rank 1 made no progress for 30 s in test Step08Multiply.BlocksWhereTheyLie, last in "
               "grid 1x1x2, phase broadcast: threw: planted: rank 1 gives up; waiting for the others to agree, "
               "rank at (0,0,1): a deadlock?\n")
        p = run("summary", self.junit(("step08_mpi_3d.student.correctness.np2", "fail", out)), ok=False)
        first = p.stdout.index("rank 1 made no progress")
        self.assertLess(first, p.stdout.index("rank 0 made no progress"))
        self.assertIn("threw: planted: rank 1 gives up", p.stdout)
        self.assertIn("rank 1 threw in the middle of a phase while other ranks were inside its collectives", p.stdout)

    def test_the_phase_and_an_mpi_error_of_step08_are_quoted_and_explained(self):
        phase = ("the first phase that went wrong: B broadcast: rank 1 at (1,0,0) starts its product with a wrong "
                 "B block (51 x 23)\n")
        out = ("[ RUN      ] Step08Multiply.Blocks\n" + phase + phase +
               "MPI Error in NBC subrequest 0x55 : 15\nNBC_Progress: an error 15 was found\n")
        p = run("summary", self.junit(("step08_mpi_3d.student.correctness.np2", "fail", out)), ok=False)
        self.assertEqual(p.stdout.count("the first phase that went wrong: B broadcast: rank 1"), 1)
        self.assertIn("the run ended in an MPI error in a collective (15: MPI_ERR_TRUNCATE", p.stdout)
        self.assertIn("in test Step08Multiply.Blocks", p.stdout)
        # Open MPI's own report of an error in MPI_Waitall (the non-blocking broadcasts), with its class
        waitall = ("[h:01] *** An error occurred in MPI_Waitall\n[h:01] *** reported by process [1,2]\n"
                   "[h:01] *** on communicator MPI COMMUNICATOR 5 SPLIT\n[h:01] *** MPI_ERR_TRUNCATE: message truncated\n")
        p = run("summary", self.junit(("step08_mpi_3d.student.correctness.np6", "fail", waitall)), ok=False)
        self.assertIn("the run ended in an MPI error in MPI_Waitall, where a phase's non-blocking collectives "
                      "(MPI_Ibcast, MPI_Ireduce) complete (15: MPI_ERR_TRUNCATE", p.stdout)

    def test_an_address_sanitizer_report_gives_its_access_and_line(self):
        out = ("[ RUN      ] Step08Multiply.Blocks\n==9==ERROR: AddressSanitizer: SEGV on unknown address 0x62 (pc 0x5 "
               "bp 0x7 sp 0x7 T0)\n    #0 0x55d7 in lab::step08::multiply_blocks&lt;double&gt;(Plan const&amp;) "
               "/src/step08_mpi_3d/cube.cpp:85\n")
        p = run("summary", self.junit(("step08_mpi_3d.student.correctness.np2", "fail", out)), ok=False)
        self.assertIn("AddressSanitizer: SEGV on unknown address 0x62 in test Step08Multiply.Blocks\n"
                      "           at step08_mpi_3d/cube.cpp:85 (multiply_blocks)\n", p.stdout)
        # the frames in the step's own files (not its tests), three at most, without the registers
        out = ("[ RUN      ] Step03Tiles.Any\n==7==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x629 at "
               "pc 0x55 bp 0x7f sp 0x7f\nREAD of size 8 at 0x629 thread T0\n"
               "    #0 0x55 in dot_2x2 /w/step03_tiling/tiling.cpp:57\n    #1 0x55 in block /w/step03_tiling/tiling.cpp:77\n"
               "    #2 0x55 in tiled_loops /w/step03_tiling/tiling.cpp:103\n"
               "    #3 0x55 in lab::step03::student::dgemm_tiled(double, lab::View&lt;double const&gt;) "
               "/w/step03_tiling/tiling.cpp:160\n    #4 0x55 in Step03Tiles_Any_Test::TestBody() "
               "/w/step03_tiling/tests/test_tiling.cpp:44\n\n0x629 is located 8 bytes after\nallocated by thread T0 here:\n"
               "    #0 0x7f in operator new(unsigned long) /usr/src/asan_new_delete.cpp:95\n")
        ub = ("[ RUN      ] Step08Cube.Any\n/w/step08_mpi_3d/cube.cpp:234:63: runtime error: store to null pointer "
              "of type 'double'\n")
        p = run("summary", self.junit(("step08_mpi_3d.student.correctness.np1", "fail", ub)), ok=False)
        self.assertIn("UndefinedBehaviorSanitizer: store to null pointer of type 'double' at step08_mpi_3d/cube.cpp:234 "
                      "in test Step08Cube.Any", p.stdout)
        p = run("summary", self.junit(("step03_tiling.student.correctness", "fail", out)), ok=False)
        self.assertIn("AddressSanitizer: heap-buffer-overflow on address 0x629 (READ of size 8) in test Step03Tiles.Any\n"
                      "           at step03_tiling/tiling.cpp:57 (dot_2x2), called from step03_tiling/tiling.cpp:77 "
                      "(block), called from step03_tiling/tiling.cpp:103 (tiled_loops)\n", p.stdout)

    def test_a_thread_sanitizer_report_gives_both_lines_and_the_memory(self):
        # (the report's lines as clang's ThreadSanitizer prints them; XML-escaped as in ctest's JUnit file)
        frames = ("    #0 .omp_outlined._debug__ /w/common/include/lab/matrix.hpp (t+0xea561) (BuildId: c4)\n"
                  "    #1 .omp_outlined. /w/step02_transpose/transpose.cpp:38:1 (t+0xea561)\n"
                  "    #2 __kmp_invoke_microtask &lt;null&gt; (libomp.so.5+0xd55a2) (BuildId: e9)\n"
                  "    #3 lab::step02::student::dgemm(double, lab::View&lt;double const&gt;, lab::View&lt;double&gt;) "
                  "/w/step02_transpose/transpose.cpp:38:1 (t+0xea323) (BuildId: c4)\n"
                  "    #4 Step02Threads_Any_Test::TestBody() /w/step02_transpose/tests/test_transpose.cpp:72:5 (t+0x1)\n")
        out = ("[ RUN      ] Step02Threads.Any\n==================\nWARNING: ThreadSanitizer: data race (pid=9016)\n"
               "  Write of size 8 at 0x7ffe5e89e418 by thread T1:\n" + frames + "\n"
               "  Previous write of size 8 at 0x7ffe5e89e418 by main thread:\n" + frames + "\n"
               "  Location is stack of main thread.\n\n  Thread T1 (tid=9020, running) created by main thread at:\n"
               "    #0 pthread_create &lt;null&gt; (t+0x6019d)\n\n"
               "SUMMARY: ThreadSanitizer: data race /w/common/include/lab/matrix.hpp in .omp_outlined._debug__\n")
        p = run("summary", self.junit(("step02_transpose.student.correctness", "fail", out)), ok=False)
        self.assertIn("ThreadSanitizer: a data race in test Step02Threads.Any: a write (8 bytes) by thread T1 and an "
                      "earlier write (8 bytes) by main thread, with no barrier or lock between them\n"
                      "           both at step02_transpose/transpose.cpp:38 (dgemm's parallel region)\n"
                      "           the memory: a variable on the main thread's stack", p.stdout)
        # two places, a heap block: step04's B panel read by a kernel before another thread packed it
        out = ("[ RUN      ] Step04Ways.Any\nWARNING: ThreadSanitizer: data race (pid=7)\n"
               "  Read of size 8 at 0x7b04 by thread T2:\n"
               "    #0 kernel /w/step04_simd/kernel_avx512.cpp:47:30 (t+0x1)\n"
               "    #1 run_tile /w/step04_simd/simd.cpp:40:3 (t+0x2)\n\n"
               "  Previous write of size 8 at 0x7b04 by main thread:\n"
               "    #0 lab::step04::student::pack_b(lab::View&lt;double const&gt;, int, double*) "
               "/w/step04_simd/pack.cpp:40:12 (t+0x3)\n\n"
               "  Location is heap block of size 3915776 at 0x7b04 allocated by main thread:\n"
               "    #0 operator new &lt;null&gt; (t+0x4)\n\nSUMMARY: ThreadSanitizer: data race in kernel\n")
        p = run("summary", self.junit(("step04_simd.student.correctness", "fail", out)), ok=False)
        self.assertIn("a read (8 bytes) by thread T2 and an earlier write (8 bytes) by main thread", p.stdout)
        self.assertIn("at step04_simd/kernel_avx512.cpp:47 (kernel), and at step04_simd/pack.cpp:40 (pack_b)\n",
                      p.stdout)
        self.assertIn("the memory: an array (a heap block of 3915776 bytes)", p.stdout)

    def test_threads_that_disagree_with_one_thread_point_to_the_tsan_preset(self):
        out = ("[ RUN      ] Step02Threads.SameBitsForAnyThreadCount\n"
               "/w/step02_transpose/tests/test_transpose.cpp:74: Failure\nValue of: same\n  Actual: false\n"
               "Expected: true\n3 threads give other bits than one thread: do threads share elements of C, or a "
               "variable (a sum declared outside the loop)?\n[  FAILED  ] Step02Threads.SameBitsForAnyThreadCount (3 ms)\n")
        junit = self.junit(("step02_transpose.student.correctness", "fail", out))
        hint = "a race? ./lab test --preset tsan step02 names the two lines that touch the same memory"
        for log, shown in (("test-student.log", True), ("test-tsan.log", False)):
            path = self.tmp / log
            path.write_text("")
            p = run("summary", junit, "--log", path, ok=False)
            self.assertIn("3 threads give other bits than one thread", p.stdout)
            self.assertEqual(hint in p.stdout, shown, p.stdout)
            # under the tsan preset, with no race named: say so, and what else gives other bits
            self.assertEqual("ThreadSanitizer saw no race in this run" in p.stdout, not shown, p.stdout)

    def test_wrong_elements_from_a_gpu_kernel_point_to_racecheck(self):
        out = ("[ RUN      ] Contract/Step05TiledContract.MatchesReference/m33_n33_k33\n"
               "/w/common/testing/contract.cpp:88: Failure\n3 of 1089 elements of C (33 x 33) are outside the bound\n"
               "[  FAILED  ] Contract/Step05TiledContract.MatchesReference/m33_n33_k33 (0 ms)\n")
        path = self.tmp / "test-student.log"
        path.write_text("")
        p = run("summary", self.junit(("step05_cuda_shared.student.correctness", "fail", out)), "--log", path, ok=False)
        self.assertIn("compute-sanitizer --tool racecheck build/student/step05_cuda_shared/"
                      "step05_cuda_shared_correctness_student --gtest_filter='Contract/Step05TiledContract."
                      "MatchesReference/m33_n33_k33'", p.stdout)

    def test_a_race_the_cuda_emulation_found_is_named_once(self):
        race = ("C++ exception with description \"a race between the streams: compute read panel 0 of buffer "
                "slot 0 before its copy completed: no wait on its event (found by the CUDA emulation when "
                "engine.cpp:391 queued it)\" thrown in the test body.\n")
        out = "".join(f"[ RUN      ] S.c{i}\n{race}[  FAILED  ] S.c{i} (1 ms)\n" for i in range(3))
        p = run("summary", self.junit(("harness.step07_emulated_student", "fail", out)), ok=False)
        self.assertEqual(p.stdout.count("a race between the streams: compute read panel 0 of buffer slot 0 before "
                                        "its copy completed: no wait on its event\n"), 1)

    def junit(self, *programs):
        """A JUnit report of ctest's: (name, ctest's status, output) a program."""
        body = ""
        for name, status, out in programs:
            mark = {"fail": '<failure message="Failed"/>',
                    "notrun": '<skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>'}.get(status, "")
            body += f'<testcase name="{name}" status="{status}">{mark}<system-out>{out}</system-out></testcase>'
        path = self.tmp / "j.xml"
        path.write_text(f"<testsuite>{body}</testsuite>")
        return path

    def test_a_test_whose_program_is_missing_failed(self):
        # ctest's JUnit files it as skipped ("Unable to find executable"); ctest itself, as failed
        path = self.tmp / "j.xml"
        path.write_text('<testsuite><testcase name="harness.step07_timeline" status="notrun">'
                        '<skipped message="Unable to find executable"/><system-out>Unable to find executable: '
                        '/lab/python3</system-out></testcase></testsuite>')
        p = run("summary", path, ok=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("FAIL harness.step07_timeline (its program was not found: /lab/python3)", p.stdout)
        self.assertIn("0 passed, 1 failed, 0 skipped", p.stdout)

    def test_a_program_with_passes_a_failure_and_skips_is_graded_per_case(self):
        # a GPU without FP64 tensor cores: the SIMT cases run (one fails), the DMMA cases skip
        out = gtest_run(passed=["Simt.A", "Simt.B"], failed=["Simt.C"],
                        skipped={"Dmma.A": NO_DMMA, "Dmma.B": NO_DMMA})
        junit = self.junit(("step05_cuda_shared.student.correctness", "fail", out))
        p = run("summary", junit, ok=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("FAIL step05_cuda_shared.student.correctness (Failed): 1 of 3 cases failed", p.stdout)
        self.assertIn("Simt.C", p.stdout)
        self.assertIn(f"and 2 cases skipped here ({NO_DMMA})", p.stdout)
        self.assertIn("0 passed, 1 failed, 0 skipped", p.stdout)
        data, steps = self.score(junit)
        self.assertEqual(steps["step05"]["status"], "graded")
        self.assertAlmostEqual(steps["step05"]["score"], 10 * 2 / 3, places=2)  # the skipped cases earn nothing
        self.assertIn("2/3 graded cases, 2 skipped here", data["output"])
        self.assertIn("    - failed: `Simt.C`", data["output"])
        self.assertIn(f"    - skipped here, not graded: `Dmma.A` and 1 more ({NO_DMMA})", data["output"])
        test = next(t for t in data["tests"] if t["name"].startswith("step05"))
        self.assertEqual(test["status"], "failed")
        self.assertIn(f"not graded: 2 cases skipped here ({NO_DMMA})", test["output"])

    def test_a_gpu_step_skipped_here_still_says_what_is_left_in_its_files(self):
        # no GPU: the untouched step05 and a finished one used to read alike ("SKIP")
        junit = self.junit(("step05_cuda_shared.student.correctness", "notrun",
                            "LAB-SKIP: no CUDA GPU is visible\n"))
        p = run("summary", junit)
        self.assertIn("SKIP step05_cuda_shared.student.correctness: no CUDA GPU is visible\n"
                      "         compiled; the TODOs still in its files:\n", p.stdout)
        self.assertIn("\n           step05_cuda_shared/tiled_shared.cu: step05 dgemm: write the body", p.stdout)
        # step07's TODOs are written over two lines: LAB_TODO(\n "...")
        p = run("summary", self.junit(("step07_streams_multigpu.student.correctness", "notrun",
                                       "LAB-SKIP: no CUDA GPU is visible\n")))
        self.assertIn("\n           step07_streams_multigpu/streams.cpp: ", p.stdout)
        # every one of its TODOs (sync.cpp's, the first to write, included), each message whole
        self.assertIn("step07_streams_multigpu/sync.cpp: step07 sync: ", p.stdout)
        self.assertIn("share_panels(alpha, A, B, beta, C, opts, {&multiply_block, &add_c}) (pinned", p.stdout)
        self.assertNotIn("... and", p.stdout)
        # step09's GPU tests: the TODOs of its CUDA files, not of its CPU kernels
        p = run("summary", self.junit(("step09_semiring.student.gpu", "notrun", "LAB-SKIP: no CUDA GPU is visible\n")))
        self.assertIn("step09_semiring/semiring_cuda.cu: step09 gemm_device: write the three", p.stdout)
        self.assertNotIn("kernel_avx512.cpp", p.stdout)

    def test_programs_skipped_for_one_reason_read_as_one_line(self):
        why = "no CUDA device visible (cudaGetDeviceCount: no driver)"
        junit = self.junit(("step06_cuda_register_blocking.solution.correctness", "notrun", f"LAB-SKIP: {why}\n"),
                           ("step08_mpi_3d.solution.device_mpi.np1", "notrun",
                            f"LAB-SKIP: step08 device tests: {why}\n"),
                           ("step08_mpi_3d.solution.device_mpi.np2", "notrun",
                            f"LAB-SKIP: step08 device tests: {why}\n"),
                           ("step09_semiring.solution.gpu", "notrun",
                            f"LAB-SKIP: the student tests were skipped here: {why}\n"),
                           ("step05_cuda_shared.student.correctness", "notrun", f"LAB-SKIP: {why}\n"),
                           ("step09_semiring.mpi.solution.cpu", "notrun", "LAB-SKIP: no MPI here\n"))
        p = run("summary", junit)
        self.assertIn(f"  SKIP 4 tests: {why}\n         step06_cuda_register_blocking (1), step08_mpi_3d (2), "
                      "step09_semiring (1)\n", p.stdout)
        self.assertEqual(p.stdout.count("SKIP"), 3, p.stdout)
        # a student's GPU step keeps its own line (what is left in its files), and a reason
        # fewer than three share keeps its test's name
        self.assertIn(f"SKIP step05_cuda_shared.student.correctness: {why}\n         compiled;", p.stdout)
        self.assertIn("SKIP step09_semiring.mpi.solution.cpu: no MPI here", p.stdout)
        self.assertIn("0 passed, 0 failed, 6 skipped", p.stdout)

    def test_a_partly_skipped_program_that_passed_is_graded_on_what_ran(self):
        out = gtest_run(passed=["Simt.A", "Simt.B"], skipped={"Dmma.A": NO_DMMA},
                        own_skips={"Avx512.A": "this CPU cannot run avx512"})
        junit = self.junit(("step05_cuda_shared.student.correctness", "run", out))
        p = run("summary", junit)
        self.assertIn(f"PASS step05_cuda_shared.student.correctness: 1 case skipped here (Dmma.A: {NO_DMMA}); "
                      "1 case skipped here (Avx512.A: this CPU cannot run avx512)", p.stdout)
        self.assertIn("1 passed, 0 failed, 0 skipped", p.stdout)
        data, steps = self.score(junit)
        self.assertEqual(steps["step05"]["status"], "graded")
        self.assertEqual(steps["step05"]["score"], 10.0)
        self.assertIn("PASS `step05_cuda_shared.student.correctness` (10.00 / 10.00, 2/2 graded cases, "
                      "2 skipped here)", data["output"])
        self.assertIn("skipped here, not graded: `Avx512.A` (this CPU cannot run avx512)", data["output"])

    def test_a_whole_program_skip_reads_skipped_with_its_reason(self):
        out = gtest_run(skipped={"Simt.A": "no CUDA GPU is visible", "Dmma.A": "no CUDA GPU is visible"})
        out += "LAB-SKIP: no CUDA GPU is visible\n"
        junit = self.junit(("step05_cuda_shared.student.correctness", "notrun", out))
        p = run("summary", junit)
        self.assertIn("SKIP step05_cuda_shared.student.correctness: no CUDA GPU is visible", p.stdout)
        self.assertIn("0 passed, 0 failed, 1 skipped", p.stdout)
        data, steps = self.score(junit)
        self.assertEqual(steps["step05"]["status"], "separately")
        self.assertEqual(steps["step05"]["why"], "no CUDA GPU is visible")
        self.assertIn("SKIP `step05_cuda_shared.student.correctness` (0.00 / 0.00, no CUDA GPU is visible)",
                      data["output"])

    def test_a_program_whose_graded_cases_all_skipped_is_graded_separately(self):
        # only a case that the untouched skeleton passes ran: nothing here can be graded
        out = gtest_run(passed=["Args.Throw"], skipped={"Dmma.A": NO_DMMA})
        junit = self.junit(("step05_cuda_shared.student.correctness", "run", out))
        base = self.tmp / "own_base.json"
        base.write_text(json.dumps({"tests": {"step05_cuda_shared.student.correctness":
                                              {"Args.Throw": "passed", "Dmma.A": "failed"}}}))
        out_json = self.tmp / "r.json"
        run("score", junit, "--points", FIX / "points.toml", "--baseline", base, "--json", out_json)
        steps = {r["step"]: r for r in json.loads(out_json.read_text())["extra_data"]["lab_steps"]}
        self.assertEqual(steps["step05"]["status"], "separately")
        self.assertEqual(steps["step05"]["why"], NO_DMMA)

    def lab_tree(self):
        """A miniature student release: two student files, their untouched copies."""
        root = self.tmp / "lab"
        for rel, body in {"lab": "#!/bin/sh\n", "common/student_files.txt": STUDENT_LIST,
                          "step01_naive/naive.cpp": "skeleton", "step01_naive/tests/t.cpp": "test",
                          "step04_simd/pack.cpp": "pack skeleton", "common/grading.toml": "[points]\n",
                          "common/skeletons/step01_naive/naive.cpp": "skeleton",
                          "common/skeletons/step04_simd/pack.cpp": "pack skeleton"}.items():
            write(root / rel, body)
        return root

    def pick(self, sub, *extra, ok=True):
        lab = self.lab_tree()
        staged, sources = self.tmp / "staged", self.tmp / "sources.json"
        p = run("pick", sub, "--lab", lab, "--staged", staged, "--sources", sources, *extra, ok=ok)
        if not ok:
            return p, None, None
        chosen = {rel: (staged / rel).read_text() for rel in ("step01_naive/naive.cpp", "step04_simd/pack.cpp")
                  if (staged / rel).is_file()}
        return p, chosen, json.loads(sources.read_text())

    def release_copy(self, where, naive="mine"):
        """A whole release folder as a student submits it: the lab's files, the
        untouched copies (common/skeletons and an older release's .lab/skeletons)."""
        for rel, body in {"lab": "#!/bin/sh\n", "common/student_files.txt": STUDENT_LIST,
                          "step01_naive/naive.cpp": naive, "step01_naive/tests/t.cpp": "test",
                          "step04_simd/pack.cpp": "pack skeleton",
                          ".lab/skeletons/step01_naive/naive.cpp": "skeleton",
                          "common/skeletons/step01_naive/naive.cpp": "skeleton"}.items():
            write(where / rel, body)

    def test_whole_release_folder_grades_the_file_at_its_path(self):
        sub = self.tmp / "sub"
        self.release_copy(sub)
        _, chosen, src = self.pick(sub)
        self.assertEqual(chosen, {"step01_naive/naive.cpp": "mine", "step04_simd/pack.cpp": "pack skeleton"})
        rows = {r["file"]: r for r in src["files"]}
        self.assertEqual(rows["step01_naive/naive.cpp"]["from"], "step01_naive/naive.cpp")
        self.assertFalse(rows["step01_naive/naive.cpp"]["unchanged"])
        self.assertTrue(rows["step04_simd/pack.cpp"]["unchanged"])
        self.assertTrue(any(i.startswith(".lab/: never graded") for i in src["ignored"]))

    def test_release_inside_a_top_folder_with_git(self):
        sub = self.tmp / "sub"
        self.release_copy(sub / "course" / "gemm-lab")
        write(sub / "course" / ".git" / "HEAD", "ref")
        write(sub / "notes.txt", "mine")
        _, chosen, src = self.pick(sub)
        self.assertEqual(chosen["step01_naive/naive.cpp"], "mine")
        self.assertEqual(src["root"], "course/gemm-lab")
        self.assertTrue(any("outside the lab's folder" in i for i in src["ignored"]))

    def test_a_zips_single_top_folder(self):
        sub = self.tmp / "sub"
        write(sub / "gemm-lab-main" / "step01_naive" / "naive.cpp", "mine")
        write(sub / "gemm-lab-main" / ".git" / "config", "x")
        _, chosen, src = self.pick(sub)
        self.assertEqual(chosen, {"step01_naive/naive.cpp": "mine"})
        self.assertEqual(src["root"], "gemm-lab-main")

    def test_flat_upload_matches_by_unique_name(self):
        sub = self.tmp / "sub"
        write(sub / "naive.cpp", "mine")
        write(sub / "pack.cpp", "pack skeleton")
        _, chosen, src = self.pick(sub)
        self.assertEqual(chosen, {"step01_naive/naive.cpp": "mine", "step04_simd/pack.cpp": "pack skeleton"})
        rows = {r["file"]: r for r in src["files"]}
        self.assertTrue(rows["step04_simd/pack.cpp"]["unchanged"])  # flagged for the student to see

    def test_a_student_files_name_at_another_path_is_named_not_graded(self):
        sub = self.tmp / "sub"
        write(sub / "a" / "naive.cpp", "mine")
        write(sub / "step04_simd" / "pack.cpp", "pack")
        _, chosen, src = self.pick(sub)
        self.assertEqual(chosen, {"step04_simd/pack.cpp": "pack"})
        self.assertIn("a/naive.cpp: named like the student file step01_naive/naive.cpp, but not at its path: not "
                      "graded", "\n".join(src["ignored"]))
        rows = {r["file"]: r for r in src["files"]}
        self.assertIn("has this file's name but not its path", " ".join(rows["step01_naive/naive.cpp"]["notes"]))

    def test_a_flat_file_named_like_two_steps_files_goes_by_its_lines(self):
        # kernel_avx2.cpp and kernel_avx512.cpp are step04's and step09's: the lab's own files decide
        lab = HERE.parents[2]
        mine = lab / "solutions" if (lab / "solutions").is_dir() else lab
        sub = self.tmp / "sub"
        write(sub / "kernel_avx2.cpp", (mine / "step09_semiring" / "kernel_avx2.cpp").read_text())
        write(sub / "kernel_avx512.cpp", (mine / "step04_simd" / "kernel_avx512.cpp").read_text())
        write(sub / "naive.cpp", "mine")
        staged, sources = self.tmp / "staged", self.tmp / "sources.json"
        run("pick", sub, "--lab", lab, "--staged", staged, "--sources", sources)
        got = sorted(p.relative_to(staged).as_posix() for p in staged.rglob("*") if p.is_file())
        self.assertEqual(got, ["step01_naive/naive.cpp", "step04_simd/kernel_avx512.cpp",
                               "step09_semiring/kernel_avx2.cpp"])
        self.assertEqual((staged / "step09_semiring/kernel_avx2.cpp").read_text(), (sub / "kernel_avx2.cpp").read_text())
        # lines of neither: not graded, and the report says why
        (sub / "kernel_avx2.cpp").write_text("int main() { return 0; }\n")
        shutil.rmtree(staged)
        run("pick", sub, "--lab", lab, "--staged", staged, "--sources", sources)
        self.assertFalse((staged / "step09_semiring/kernel_avx2.cpp").exists())
        self.assertFalse((staged / "step04_simd/kernel_avx2.cpp").exists())
        src = json.loads(sources.read_text())
        self.assertTrue(any(i.startswith("kernel_avx2.cpp: not graded: the name of step04_simd/kernel_avx2.cpp and "
                                         "step09_semiring/kernel_avx2.cpp") for i in src["ignored"]), src["ignored"])

    def test_a_stale_build_folder_is_never_graded(self):
        sub = self.tmp / "sub"
        self.release_copy(sub)
        write(sub / "build" / "student" / "step01_naive" / "naive.cpp", "skeleton")
        write(sub / "aaa" / "build" / "step01_naive" / "naive.cpp", "skeleton")
        _, chosen, src = self.pick(sub)
        self.assertEqual(chosen["step01_naive/naive.cpp"], "mine")
        self.assertTrue(any(i.startswith("build/: never graded") for i in src["ignored"]))

    def test_a_symbolic_link_is_not_followed(self):
        sub = self.tmp / "sub"
        self.release_copy(sub)
        (sub / "step01_naive" / "naive.cpp").unlink()
        secret = self.tmp / "solution.cpp"
        secret.write_text("the solution")
        (sub / "step01_naive" / "naive.cpp").symlink_to(secret)
        (sub / "linked").symlink_to(self.tmp)
        _, chosen, src = self.pick(sub)
        self.assertNotIn("step01_naive/naive.cpp", chosen)
        self.assertTrue(any("step01_naive/naive.cpp: a symbolic link" in i for i in src["ignored"]))
        self.assertTrue(any(i.startswith("linked/: a symbolic link") for i in src["ignored"]))
        row = next(r for r in src["files"] if r["file"] == "step01_naive/naive.cpp")
        self.assertIsNone(row["from"])
        self.assertIn("symbolic link", " ".join(row["notes"]))

    def test_two_copies_with_other_contents_the_path_wins_and_says_so(self):
        sub = self.tmp / "sub"
        self.release_copy(sub)
        write(sub / "naive.cpp", "skeleton")
        _, chosen, src = self.pick(sub)
        self.assertEqual(chosen["step01_naive/naive.cpp"], "mine")
        row = next(r for r in src["files"] if r["file"] == "step01_naive/naive.cpp")
        self.assertIn("differs and was not graded", " ".join(row["notes"]))

    def test_an_oversized_file_is_refused(self):
        sub = self.tmp / "sub"
        write(sub / "step01_naive" / "naive.cpp", "x" * ((1 << 20) + 1))
        _, chosen, src = self.pick(sub)
        self.assertEqual(chosen, {})
        self.assertTrue(any("refused" in i and "1.0 MiB" in i for i in src["ignored"]))

    def test_report_begins_with_what_was_graded(self):
        sub = self.tmp / "sub"
        self.release_copy(sub)
        (sub / "step04_simd" / "pack.cpp").unlink()
        self.pick(sub)
        md = self.tmp / "r.md"
        run("score", FIX / "partial.xml", "--points", FIX / "points.toml", "--baseline", self.base,
            "--sources", self.tmp / "sources.json", "--run-as", "as nobody", "--md", md)
        text = md.read_text()
        table = text.index("## What was graded")
        self.assertLess(table, text.index("| step | points |"))
        self.assertIn("| `step01_naive/naive.cpp` | `step01_naive/naive.cpp` | 4 B |", text)
        self.assertIn("| `step04_simd/pack.cpp` | untouched skeleton: not in the submission |", text)
        self.assertIn("as nobody", text)

    def test_prepare_writes_the_tree_and_never_through_a_link(self):
        lab = self.lab_tree()
        staged, tree = self.tmp / "staged", self.tmp / "tree"
        write(staged / "step01_naive" / "naive.cpp", "mine")
        outside = self.tmp / "outside.txt"
        outside.write_text("the grader's")
        (tree / "step01_naive").mkdir(parents=True)
        (tree / "step01_naive" / "naive.cpp").symlink_to(outside)
        run("prepare", lab, tree, "--staged", staged)
        self.assertEqual(outside.read_text(), "the grader's")
        self.assertFalse((tree / "step01_naive" / "naive.cpp").is_symlink())
        self.assertEqual((tree / "step01_naive/naive.cpp").read_text(), "mine")
        self.assertEqual((tree / "step04_simd/pack.cpp").read_text(), "pack skeleton")  # missing: the skeleton

    def test_near_misses_of_a_name_get_a_hint_and_nothing_else(self):
        for name in ("Naive.cpp", "naive (1).cpp", "naive-2.cpp"):
            with self.subTest(name=name):
                sub = self.tmp / name.replace(" ", "_")
                write(sub / name, "mine")
                _, chosen, src = self.pick(sub)
                self.assertEqual(chosen, {})
                self.assertTrue(any("did you mean step01_naive/naive.cpp?" in i for i in src["ignored"]), src["ignored"])
                row = next(r for r in src["files"] if r["file"] == "step01_naive/naive.cpp")
                self.assertIsNone(row["from"])
                self.assertTrue(any("did you mean" in n for n in row["notes"]))

    def test_the_skeleton_with_crlf_and_a_bom_is_unchanged(self):
        sub = self.tmp / "sub"
        write(sub / "step01_naive" / "naive.cpp", "")
        (sub / "step01_naive" / "naive.cpp").write_bytes(b"\xef\xbb\xbfskeleton\r\n")
        (self.lab_tree() / "common/skeletons/step01_naive/naive.cpp").write_text("skeleton\n")
        lab = self.tmp / "lab"
        run("pick", sub, "--lab", lab, "--staged", self.tmp / "staged", "--sources", self.tmp / "s.json")
        rows = {r["file"]: r for r in json.loads((self.tmp / "s.json").read_text())["files"]}
        self.assertTrue(rows["step01_naive/naive.cpp"]["unchanged"])

    def test_ten_thousand_ignored_files_make_a_short_report(self):
        sub = self.tmp / "sub"
        self.release_copy(sub)
        for i in range(10000):
            (sub / "junk").mkdir(exist_ok=True)
            (sub / "junk" / f"f{i:05d}.txt").write_text("x")
        p, chosen, _ = self.pick(sub)
        self.assertEqual(chosen["step01_naive/naive.cpp"], "mine")
        md, js = self.tmp / "r.md", self.tmp / "r.json"
        p = run("score", FIX / "partial.xml", "--points", FIX / "points.toml", "--baseline", self.base,
                "--sources", self.tmp / "sources.json", "--md", md, "--json", js)
        self.assertLess(len(md.read_text().splitlines()), 200)
        self.assertLess(js.stat().st_size, 100_000)
        self.assertLess(len(p.stdout.splitlines()), 30)
        self.assertIn("`junk/`: 10000 files, not a student file", md.read_text())

    def archive(self, kind, entries):
        """A submission archive: entries {name: bytes, or ("link", target)}."""
        import io
        import tarfile
        import zipfile
        path = self.tmp / f"sub.{kind}"
        if kind == "zip":
            with zipfile.ZipFile(path, "w") as z:
                for name, body in entries.items():
                    if isinstance(body, tuple):
                        info = zipfile.ZipInfo(name)
                        info.external_attr = (0o120777 << 16)
                        z.writestr(info, body[1])
                    else:
                        z.writestr(name, body)
        else:
            with tarfile.open(path, "w:gz") as t:
                for name, body in entries.items():
                    info = tarfile.TarInfo(name)
                    if isinstance(body, tuple):
                        info.type, info.linkname = tarfile.SYMTYPE, body[1]
                        t.addfile(info)
                    else:
                        info.size = len(body)
                        t.addfile(info, io.BytesIO(body))
        return path

    def test_archives_are_unpacked_and_graded(self):
        for kind in ("zip", "tar.gz"):
            with self.subTest(kind=kind):
                sub = self.archive(kind, {"gemm-lab-main/step01_naive/naive.cpp": b"mine", "gemm-lab-main/README": b"x"})
                _, chosen, src = self.pick(sub)
                self.assertEqual(chosen, {"step01_naive/naive.cpp": "mine"})
                self.assertIn("unpacked from", src["root_how"])

    def test_bad_archives_are_refused_in_one_line(self):
        big = b"0" * (1 << 20)
        cases = {"leaves the folder": {"../escape.cpp": b"x"},
                 "leaves the folder it": {"/etc/escape.cpp": b"x"},
                 "a link or a special file": {"naive.cpp": ("link", "/etc/passwd")},
                 "more than 100 MB": {f"f{i}": big for i in range(101)},
                 "more than 20000 entries": {f"f{i}": b"" for i in range(20001)}}
        for kind in ("zip", "tar.gz"):
            for why, entries in cases.items():
                with self.subTest(kind=kind, why=why):
                    p, _, _ = self.pick(self.archive(kind, entries), ok=False)
                    self.assertNotEqual(p.returncode, 0)
                    self.assertIn(why, p.stderr)
                    self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
                    self.assertFalse((self.tmp / "escape.cpp").exists())

    def test_checker_verdicts_score_and_a_step_that_did_not_compile(self):
        def variant(name, passed, failed, speed=None):
            cs = [{"name": c, "passed": True, "why": ""} for c in passed]
            cs += [{"name": c, "passed": False, "why": "wrong"} for c in failed]
            if speed is not None:
                cs.append({"name": "speed: at least 3x", "passed": speed, "why": "" if speed else "too slow"})
            return {"step": name[:6], "variant": name[7:], "kind": "gemm", "cases": cs}
        base = {"step01": {"variants": [variant("step01.a", ["bad"], ["x", "y"]), variant("step01.b", ["bad"], ["x"])],
                           "compile_error": None},
                "step02": {"variants": [variant("step02.t", ["bad"], ["x"], speed=False)], "compile_error": None}}
        now = {"step01": {"variants": [variant("step01.a", ["bad", "x"], ["y"]), variant("step01.b", ["bad", "x"], [])],
                          "compile_error": None},
               "step02": {"variants": [], "compile_error": ["step02_transpose/transpose.cpp:3:1: error: oops"]}}
        (self.tmp / "b.json").write_text(json.dumps(base))
        (self.tmp / "n.json").write_text(json.dumps(now))
        run("baseline", "--checked", self.tmp / "b.json", "-o", self.tmp / "base2.json")
        out = self.tmp / "c.json"
        # GoogleTest's verdicts for step01 and step02 (all passing) are not used: the checker checked them
        run("score", FIX / "partial.xml", "--checked", self.tmp / "n.json", "--points", FIX / "points.toml",
            "--baseline", self.tmp / "base2.json", "--steps", "01,02", "--json", out, "--md", self.tmp / "c.md")
        data = json.loads(out.read_text())
        steps = {r["step"]: r for r in data["extra_data"]["lab_steps"]}
        self.assertEqual(steps["step01"]["score"], 3.75)  # a: 1 of 2 cases, b: 1 of 1; "bad" passes on the skeleton
        self.assertEqual(steps["step02"]["score"], 0)
        self.assertIn("did not compile: step02_transpose/transpose.cpp:3:1: error: oops", self.tmp.joinpath("c.md").read_text())
        # the untouched skeleton's build cut short (killed half way: no error line of its own) would
        # fail every case and pay for those the skeleton passes: no baseline is kept; a step that
        # fails with an error of its own (a library that does not link here) is graded as it is
        run("baseline", "--checked", self.tmp / "n.json", "-o", self.tmp / "base3.json")
        now["step02"]["compile_error"] = ["(the build log names no error line)"]
        (self.tmp / "n.json").write_text(json.dumps(now))
        p = run("baseline", "--checked", self.tmp / "n.json", "-o", self.tmp / "base4.json", ok=False)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("the untouched skeleton's build stopped without an error", p.stderr)
        self.assertFalse((self.tmp / "base4.json").exists())

    def test_a_step_partly_graded_here_names_what_is_left_and_one_command(self):
        # step09 on a CPU host: its CPU semirings graded, its GPU ones not run; step05 not at all
        no_gpu = "no CUDA device visible (cudaGetDeviceCount: cudaErrorNoDevice)"
        gpu_variant = lambda step, v: {"step": step, "variant": v, "kind": "gemm", "cases": [
            {"name": "the variant on this machine", "passed": False, "skipped": True, "why": no_gpu}]}
        cpu = {"step": "step09", "variant": "minplus", "kind": "gemm",
               "cases": [{"name": "m3", "passed": True, "why": ""}, {"name": "m5", "passed": True, "why": ""}]}
        now = {"step05": {"variants": [gpu_variant("step05", "tiled")], "compile_error": None},
               "step09": {"variants": [cpu, gpu_variant("step09", "minplus_gpu")], "compile_error": None}}
        (self.tmp / "n.json").write_text(json.dumps(now))
        out = self.tmp / "c.json"
        run("score", "--checked", self.tmp / "n.json", "--points", FIX / "points.toml", "--steps", "05,09",
            "--json", out, "--md", self.tmp / "c.md")
        md = (self.tmp / "c.md").read_text()
        steps = {r["step"]: r for r in json.loads(out.read_text())["extra_data"]["lab_steps"]}
        self.assertEqual(steps["step09"]["status"], "graded")
        self.assertIn(no_gpu, steps["step09"]["partly"])
        self.assertIn(f"| graded on the tests that ran here; the others separately: {no_gpu} |", md)
        self.assertIn("    ./lab grade --submission DIR --steps 05,09 --out there/\n"
                      "    ./lab grade --merge THIS/results.json there/results.json\n", md)
        self.assertIn("- step09 (its ", md)

    @unittest.skipUnless(shutil.which("cmake"), "needs cmake")
    def test_a_step_this_build_cannot_make_is_not_blamed_on_another_steps_error(self):
        # a CPU-only build: step05 has no target; the student's step02 did not compile
        tree = self.tmp / "tree"
        for d in ("step02_transpose", "step05_cuda_shared"):
            (tree / d).mkdir(parents=True)
        proj = self.tmp / "proj"
        write(proj / "CMakeLists.txt", "cmake_minimum_required(VERSION 3.16)\nproject(p NONE)\n"
                                         "add_custom_target(step02_transpose)\n")
        build = tree / "build" / "student"
        subprocess.run(["cmake", "-S", proj, "-B", build], check=True, capture_output=True)
        log = self.tmp / "build.log"
        log.write_text("step02_transpose/transpose.cpp:3:1: error: oops\n")
        points = self.tmp / "p.toml"
        points.write_text('[points]\nstep02 = 10\nstep05 = 10\n[check]\nstep02 = "transpose"\n'
                          'step05 = "tiled+needs=gpu"\n')
        out = self.tmp / "v.json"
        run("check", "--checker", "/nonexistent/lab_grade_check", "--tree", tree, "--points", points,
            "--build-log", log, "--json", out)
        v = json.loads(out.read_text())
        self.assertIn("is not built here", v["step05"].get("skipped", ""), v["step05"])
        self.assertEqual(v["step02"]["compile_error"], ["step02_transpose/transpose.cpp:3:1: error: oops"])

    def test_with_steps_the_files_of_other_steps_say_they_were_not_graded(self):
        sys.path.insert(0, str(GRADE.parent))
        import grade
        row = {"from": "x", "how": "its path", "size": 10, "unchanged": True}
        sources = {"files": [dict(row, file="step01_naive/naive.cpp", unchanged=False),
                             dict(row, file="step04_simd/pack.cpp")]}
        table = "\n".join(grade.graded_files_table(sources, steps={"step01"}))
        self.assertIn("| `step04_simd/pack.cpp` | `x` | 10 B | **unchanged from the skeleton**; not graded in this run "
                      "(--steps) |", table)
        self.assertIn("| `step01_naive/naive.cpp` | `x` | 10 B |  |", table)

    @unittest.skipUnless(shutil.which("cmake") and shutil.which("c++"), "needs cmake and a C++ compiler")
    def test_a_student_file_that_includes_the_instructors_files_does_not_count_as_compiled(self):
        # the instructor's tree holds the grading tree; tiling.cpp reaches out of it to the solution
        for gen in (["-G", "Ninja"] if shutil.which("ninja") else []), ["-G", "Unix Makefiles"]:
            lab = self.tmp / ("lab" + str(len(gen[1]) if gen else 0))
            tree = lab / "build" / "grade" / "tree"
            write(lab / "solutions" / "step03_tiling" / "tiling.cpp", "int tiled() { return 1; }\n")
            write(tree / "common" / "student_files.txt", "step01_naive/naive.cpp\nstep03_tiling/tiling.cpp\n")
            write(tree / "common" / "given.hpp", "inline int given() { return 2; }\n")
            write(tree / "step01_naive" / "naive.cpp", '#include "../common/given.hpp"\nint naive() { return given(); }\n')
            write(tree / "step03_tiling" / "tiling.cpp",
                  '#include "../../../../solutions/step03_tiling/tiling.cpp"\n')
            write(tree / "CMakeLists.txt", "cmake_minimum_required(VERSION 3.16)\nproject(p CXX)\n"
                  "add_library(step01_naive STATIC step01_naive/naive.cpp)\n"
                  "add_library(step03_tiling STATIC step03_tiling/tiling.cpp)\n")
            build = tree / "build" / "student"
            subprocess.run(["cmake", "-S", tree, "-B", build, *gen], check=True, capture_output=True)
            subprocess.run(["cmake", "--build", build], check=True, capture_output=True)
            log = tree / "build" / "student.build.log"
            log.write_text("")
            run("includes", "--tree", tree, "--lab", lab, "--work", lab / "build" / "grade", "--log", log)
            lines = log.read_text().splitlines()
            self.assertEqual(len(lines), 1, (gen, lines))
            self.assertRegex(lines[0], r"^step03_tiling/tiling.cpp:1:1: error: it includes \S*/solutions/step03_tiling/"
                                       r"tiling.cpp, which is not part of the student's tree", gen)
            libs = sorted(p.name for p in build.rglob("lib*.a"))
            self.assertEqual(libs, ["libstep01_naive.a"], gen)  # step03's library went

    def test_a_checked_gpu_step_without_a_gpu_is_graded_separately(self):
        # step05's variant answered "no usable GPU" (one skipped case); step08's program is not built here
        no_gpu = {"step": "step05", "variant": "tiled", "kind": "gemm",
                  "cases": [{"name": "the variant on this machine", "passed": False, "skipped": True,
                             "why": "no CUDA device visible (cudaGetDeviceCount: cudaErrorNoDevice)"}]}
        now = {"step05": {"variants": [no_gpu], "compile_error": None},
               "step08": {"variants": [], "compile_error": None,
                          "skipped": "step08_mpi_3d is not built here (its toolkit was not found)"}}
        (self.tmp / "n.json").write_text(json.dumps(now))
        run("baseline", "--checked", self.tmp / "n.json", "-o", self.tmp / "base2.json")
        out = self.tmp / "c.json"
        run("score", "--checked", self.tmp / "n.json", "--points", FIX / "points.toml",
            "--baseline", self.tmp / "base2.json", "--steps", "05,08", "--json", out, "--md", self.tmp / "c.md")
        data = json.loads(out.read_text())
        steps = {r["step"]: r for r in data["extra_data"]["lab_steps"]}
        for step, why in (("step05", "no CUDA device visible"), ("step08", "step08_mpi_3d is not built here")):
            self.assertEqual(steps[step]["status"], "separately", steps[step])
            self.assertEqual(steps[step]["score"], 0)
            self.assertIn(why, steps[step]["why"])
            self.assertIn("--steps " + step[4:], steps[step]["command"])

    def test_a_program_that_ran_no_tests_where_the_skeleton_did_earns_nothing(self):
        xml = self.tmp / "quiet.xml"
        xml.write_text((FIX / "skeleton.xml").read_text())
        base = json.loads(self.base.read_text())["tests"]
        name = next(n for n, cs in base.items() if n.startswith("step01") and "(whole test)" not in cs)
        import re as _re
        text = _re.sub(r'(<testcase name="%s".*?<system-out>).*?(</system-out>)' % _re.escape(name), r"\1\2",
                       xml.read_text(), flags=_re.S)
        text = _re.sub(r'(<testcase name="%s"[^>]*status=)"fail"' % _re.escape(name), r'\1"run"', text)
        xml.write_text(text)
        data, steps = self.score(xml)
        self.assertEqual(steps["step01"]["score"], 0)


STUDENT_LIST = "# list\nstep01_naive/naive.cpp\nstep04_simd/pack.cpp\n"
NO_DMMA = "this GPU has no FP64 tensor cores (compute capability 7.5)"


def gtest_run(passed=(), failed=(), skipped=None, own_skips=None):
    """A GoogleTest program's output as the lab's harness prints it: skipped
    (harness's "skipped: <why>" line) and own_skips (GTEST_SKIP() << why) map
    each case to its reason."""
    lines = []
    for c in passed:
        lines += [f"[ RUN      ] {c}", f"[       OK ] {c} (1 ms)"]
    for c in failed:
        lines += [f"[ RUN      ] {c}", "wrong result for m=33", f"[  FAILED  ] {c} (1 ms)"]
    for c, why in (skipped or {}).items():
        lines += [f"[ RUN      ] {c}", f"skipped: {why}", "/lab/common/testing/context_watch.cpp:115: Skipped", "",
                  f"[  SKIPPED ] {c} (0 ms)"]
    for c, why in (own_skips or {}).items():
        lines += [f"[ RUN      ] {c}", "/lab/step04_simd/tests/test_simd.cpp:76: Skipped", why, "",
                  f"[  SKIPPED ] {c} (0 ms)"]
    n_skipped = len(skipped or {}) + len(own_skips or {})
    lines += [f"[==========] {len(passed) + len(failed) + n_skipped} tests from 2 test suites ran. (5 ms total)",
              f"[  PASSED  ] {len(passed)} tests."]
    if n_skipped:
        lines += [f"[  SKIPPED ] {n_skipped} tests, listed below:"]
        lines += [f"[  SKIPPED ] {c}" for c in [*(skipped or {}), *(own_skips or {})]]
    if failed:
        lines += [f"[  FAILED  ] {len(failed)} tests, listed below:"] + [f"[  FAILED  ] {c}" for c in failed]
    return "\n".join(lines) + "\n"


def write(path, body):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)


class CheckedMpiSteps(unittest.TestCase):
    """[check]'s name@npR variants (step08 under mpiexec) and the grid kind: read
    from grading.toml, refused in one line when malformed, and started with the
    build's own mpiexec."""

    def setUp(self):
        self.tmp = pathlib.Path(tempfile.mkdtemp())

    def test_rank_counts_and_the_grid_kind_are_read_and_bad_ones_refused(self):
        good = self.tmp / "good.toml"
        good.write_text('[points]\nstep08 = 15\n[check]\nstep08 = "dgemm@np1 dgemm@np8 choose_grid:grid"\n')
        self.assertEqual(run("checked", "--points", good).stdout.strip(), "08")
        for bad in ("dgemm@np0", "dgemm@4", "dgemm@np", "choose_grid:grids"):
            f = self.tmp / "bad.toml"
            f.write_text(f'[points]\nstep08 = 15\n[check]\nstep08 = "{bad}"\n')
            p = run("checked", "--points", f, ok=False)
            self.assertNotEqual(p.returncode, 0, bad)
            self.assertIn(bad, p.stderr)
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)

    def test_the_launch_is_the_builds_mpiexec_in_a_folder_of_its_own(self):
        import importlib.util
        spec = importlib.util.spec_from_file_location("grade", GRADE)
        grade = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(grade)
        tree = self.tmp / "tree"
        fake = self.tmp / "bin" / "mpiexec"
        write(fake, "#!/bin/sh\necho 'mpiexec (OpenRTE) 4.1.4'\n")
        fake.chmod(0o755)
        self.assertIsNone(grade.mpi_launch(tree, 4))  # no build: no MPI
        # the build's mpiexec, with the flags and environment its MPI tests get (CMake's cache)
        write(tree / "build" / "student" / "CMakeCache.txt",
              f"X:BOOL=ON\nMPIEXEC_EXECUTABLE:FILEPATH={fake}\n"
              "LAB_MPIEXEC_FLAGS:INTERNAL=--oversubscribe;--bind-to;none\n"
              "LAB_MPIEXEC_ENV:INTERNAL=OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_MCA_rmaps_base_oversubscribe=1\n")
        words = grade.mpi_launch(tree, 4)
        launch = [words[i + 1] for i in range(0, len(words), 2) if words[i] == "--launch"]
        env = [words[i + 1] for i in range(0, len(words), 2) if words[i] == "--env"]
        self.assertEqual(launch, [str(fake), "-n", "4", "--oversubscribe", "--bind-to", "none"])
        self.assertEqual(env, ["OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_MCA_rmaps_base_oversubscribe=1"])
        # the grader's own additions, unless its environment chooses already
        write(tree / "build" / "student" / "CMakeCache.txt",
              f"MPIEXEC_EXECUTABLE:FILEPATH={fake}\nLAB_MPIEXEC_FLAGS:INTERNAL=\n"
              "LAB_MPIEXEC_ENV:INTERNAL=OMPI_ALLOW_RUN_AS_ROOT=1\nLAB_MPIEXEC_GRADE_ENV:INTERNAL=OMPI_MCA_pml=ob1\n")
        for pml, want in ((None, ["OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_MCA_pml=ob1"]),
                          ("ucx", ["OMPI_ALLOW_RUN_AS_ROOT=1"])):
            with mock.patch.dict(os.environ):
                os.environ.pop("OMPI_MCA_pml", None)
                if pml:
                    os.environ["OMPI_MCA_pml"] = pml
                words = grade.mpi_launch(tree, 1)
            self.assertEqual([words[i + 1] for i in range(0, len(words), 2) if words[i] == "--env"], want, pml)
        # another MPI (no flags cached): the plain mpiexec
        write(tree / "build" / "student" / "CMakeCache.txt", f"MPIEXEC_EXECUTABLE:FILEPATH={fake}\n"
              "LAB_MPIEXEC_FLAGS:INTERNAL=\nLAB_MPIEXEC_ENV:INTERNAL=\n")
        self.assertEqual(grade.mpi_launch(tree, 2), ["--launch", str(fake), "--launch", "-n", "--launch", "2"])


class CheckerNotes(unittest.TestCase):
    """A case the checker ran twice (its launcher, mpiexec, died of a signal) says
    so beside its verdict, in the tests read from the checker and in grade.md."""

    def test_a_case_run_twice_is_noted(self):
        import importlib.util
        spec = importlib.util.spec_from_file_location("grade", GRADE)
        grade = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(grade)
        tmp = pathlib.Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, tmp)
        note = "run twice: its launcher mpiexec was killed by Segmentation fault on the first try"
        write(tmp / "checked.json", json.dumps({"step08": {"compile_error": None, "variants": [
            {"variant": "dgemm@np4", "cases": [{"name": "1x1x1", "passed": True, "why": ""},
                                               {"name": "100x37x129", "passed": True, "why": "", "note": note}]}]}}))
        tests, steps = grade.read_checked(tmp / "checked.json")
        self.assertEqual(steps, {"step08"})
        self.assertEqual(tests["step08.checked.dgemm@np4"]["result"], "passed")
        self.assertEqual(tests["step08.checked.dgemm@np4"]["notes"], [f"100x37x129: {note}"])


def stand_in_check(tmp, folder, cfg, cases, *extra):
    """`grade.py check` on a tree whose step program `folder` is a stub, with a
    stand-in checker that notes its arguments and writes a verdict of `cases`
    where --json says. -> the checker's argument lists, one per variant."""
    tree = tmp / "tree"
    (tree / folder).mkdir(parents=True)
    exe = tree / "build" / "student" / "bin" / folder
    write(exe, "#!/bin/sh\n")
    exe.chmod(0o755)
    calls, checker = tmp / "calls", tmp / "checker"
    write(checker, "#!/usr/bin/env python3\nimport json, sys\na = sys.argv[1:]\n"
                   f"open({str(calls)!r}, 'a').write(json.dumps(a) + '\\n')\n"
                   "j = a[a.index('--json') + 1]\n"
                   f"json.dump({{'variant': a[a.index('--variant') + 1], 'cases': {cases!r}}}, open(j, 'w'))\n")
    checker.chmod(0o755)
    run("check", "--checker", checker, *extra, "--tree", tree, "--points", cfg, "--json", tmp / "v.json")
    return [json.loads(line) for line in calls.read_text().splitlines()]


def one_step_config(tmp, step, check, speed=None):
    """A grading.toml of one step (10 points) with this [check] and [speed]."""
    f = tmp / "g.toml"
    f.write_text(f'[points]\n{step} = 10\n[check]\n{step} = "{check}"\n'
                 + (f'[speed]\n{step} = "{speed}"\n' if speed is not None else ""))
    return f


def flag_values(args, flag):
    """The values of every `flag` in an argument list."""
    return [args[i + 1] for i in range(len(args) - 1) if args[i] == flag]


class CheckedGpuSteps(unittest.TestCase):
    """[check]'s +param words (tile, mem, gpus, needs) and [speed]'s per-variant
    GPU references: read from grading.toml, refused in one line when malformed,
    and handed to the checker as --param, --needs, --speed and --reference-runner."""

    def setUp(self):
        self.tmp = pathlib.Path(tempfile.mkdtemp())

    def config(self, check, speed=None):
        return one_step_config(self.tmp, "step07", check, speed)

    def test_params_and_speeds_are_read_and_bad_ones_refused(self):
        good = self.config("sync+mem=40960 multigpu+mem=40960+gpus=0,0 dmma+needs=fp64_tensor_cores",
                           "naive_coalesced,2048,1.1 dmma=cublas,4096,0.5 multigpu=cublasxt,16384,1.2")
        self.assertEqual(run("checked", "--points", good).stdout.strip(), "07")
        for check, speed in (("sync+mem=4x", None), ("sync+gpus=", None), ("sync+needs=magic", None),
                             ("sync+tile=1,2,3,4", None), ("sync", "cublas,2048"), ("sync", "sgemm,2048,1.0"),
                             ("sync", "streams=cublas,2048,1.0"), ("sync", "")):
            p = run("checked", "--points", self.config(check, speed), ok=False)
            self.assertNotEqual(p.returncode, 0, (check, speed))
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)

    def test_the_checker_gets_each_variants_params_speed_and_the_reference(self):
        cfg = self.config("sync+mem=40960 multigpu+mem=40960+gpus=0,0+needs=fp64_tensor_cores",
                          "multigpu=cublas,4096,0.5")
        sync, multi = stand_in_check(self.tmp, "step07_streams_multigpu", cfg, [],
                                     "--reference-runner", "/grader/lab_grade_reference")
        self.assertEqual(flag_values(sync, "--param"), ["mem=40960"])
        self.assertEqual(flag_values(sync, "--speed"), [])
        self.assertEqual(flag_values(multi, "--param"), ["mem=40960", "gpus=0,0"])
        self.assertEqual(flag_values(multi, "--needs"), ["fp64_tensor_cores"])
        self.assertEqual(flag_values(multi, "--speed"), ["cublas,4096,0.5"])
        for args in (sync, multi):
            self.assertEqual(flag_values(args, "--reference-runner"), ["/grader/lab_grade_reference"])


class CheckedThreadedVariants(unittest.TestCase):
    """[check]'s threads=T and ways=JCxICxJR: the grader runs the variant
    again on several threads (OMP_NUM_THREADS; LAB_STEP04_WAYS for step04's
    loops), as a test of its own name, with no speed case; bad ones are
    refused in one line."""

    def setUp(self):
        self.tmp = pathlib.Path(tempfile.mkdtemp())

    def config(self, check, speed=None):
        return one_step_config(self.tmp, "step04", check, speed)

    def test_bad_thread_counts_and_ways_are_refused(self):
        self.assertEqual(run("checked", "--points", self.config("simd simd+threads=4 simd+ways=1x2x2+tile=32,42,24"))
                         .stdout.strip(), "04")
        for check in ("simd+threads=1", "simd+threads=65", "simd+threads=x", "simd+ways=0x1x1", "simd+ways=1x2",
                      "simd+ways=1x2x2x2", "simd+ways=100x1x1", "simd+threads=4+ways=1x2x2"):
            p = run("checked", "--points", self.config(check), ok=False)
            self.assertNotEqual(p.returncode, 0, check)
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)

    def test_the_checker_runs_them_on_their_threads_under_names_of_their_own(self):
        cfg = self.config("simd simd+ways=1x2x2+tile=32,42,24 simd+threads=3", "transposed_dot,1024,2.0")
        one, ways, three = stand_in_check(self.tmp, "step04_simd", cfg, [{"name": "1x1x1", "passed": True, "why": ""}])
        self.assertEqual(flag_values(one, "--env"), [])
        self.assertEqual(flag_values(one, "--speed"), ["transposed_dot,1024,2.0"])
        self.assertEqual(flag_values(ways, "--env"), ["LAB_STEP04_WAYS=1x2x2", "OMP_NUM_THREADS=4"])
        self.assertEqual(flag_values(ways, "--param"), ["tile=32,42,24"])
        self.assertEqual(flag_values(three, "--env"), ["OMP_NUM_THREADS=3"])
        for args in (ways, three):
            self.assertEqual(flag_values(args, "--speed"), [])
        self.assertEqual(len({flag_values(a, "--json")[0] for a in (one, ways, three)}), 3)
        sys.path.insert(0, str(GRADE.parent))
        import grade
        tests, _ = grade.read_checked(self.tmp / "v.json")
        self.assertEqual(sorted(tests), ["step04.checked.simd", "step04.checked.simd.t3",
                                         "step04.checked.simd.ways1x2x2"])

    def test_a_variant_on_several_threads_passes_whole_or_not_at_all(self):
        cases = [{"name": "1x1x1", "passed": True, "why": ""}, {"name": "64x64x64", "passed": False, "why": "wrong"}]
        cfg = self.config("simd simd+ways=2x2x2+tile=16,28,8")
        stand_in_check(self.tmp, "step04_simd", cfg, cases)
        verdicts = {v["variant"]: v for v in json.loads((self.tmp / "v.json").read_text())["step04"]["variants"]}
        self.assertEqual(verdicts["simd"]["cases"], cases)
        self.assertFalse(verdicts["simd"].get("all_or_nothing"))
        many = verdicts["simd.ways2x2x2"]
        self.assertTrue(many["all_or_nothing"])
        self.assertEqual(many["cases"][1]["why"], "on 8 threads in ways 2x2x2 (a wait left out, or rows or columns "
                                                  "that are not the thread's own?): wrong")
        # one case of two: half of the one-thread check's share, none of the other's
        run("score", "--checked", self.tmp / "v.json", "--points", cfg, "--json", self.tmp / "r.json")
        tests = {t["name"]: t for t in json.loads((self.tmp / "r.json").read_text())["tests"]}
        self.assertEqual(tests["step04.checked.simd"]["score"], 2.5)
        self.assertEqual(tests["step04.checked.simd.ways2x2x2"]["score"], 0.0)


class SpeedFigures(unittest.TestCase):
    """grading.toml's [speed] says the figures of each step's own speed test
    (tests/perf_*.cpp): the same reference loop, size and ratio, or the grade
    and ./lab test would ask different things of the same code."""

    def test_grading_toml_matches_the_steps_speed_tests(self):
        import re
        try:
            import tomllib
        except ModuleNotFoundError:  # Python < 3.11
            try:
                import tomli as tomllib
            except ModuleNotFoundError:
                self.skipTest("no TOML reader (Python < 3.11 without tomli)")
        root = HERE.parents[2]
        speed = tomllib.loads((root / "common" / "grading.toml").read_text())["speed"]
        self.assertTrue(speed)
        # a GPU reference: the perf test's ratio against the same kernel (its size: the test's default)
        gpu_ratio = {"naive_coalesced": (r"EXPECT_GT\(coalesced / tiled, ([\d.]+)\)", r"env_sizes\(\"LAB_PERF_N\", (\d+)\)"),
                     "cublas": (r"EXPECT_GT\(t\.cublas / t\.dmma, ([\d.]+)\)", r"out\.push_back\((\d+)\)"),
                     "fp64_peak": (r"EXPECT_GT\(simt_share, ([\d.]+)\)", r"out\.push_back\((\d+)\)")}
        for step, entries in speed.items():
            for figures in entries.split():
                ref, n, ratio = figures.split("=")[-1].split(",")
                folder = next(root.glob(step + "_*/tests"))
                found = []
                for f in sorted(folder.glob("perf_*.cpp")):
                    text = f.read_text()
                    for m in re.finditer(r"speedup\(\s*(\d+),\s*\"[^\"]*\",\s*&lab::speed::(\w+),[^;]*;.*?"
                                         r"EXPECT_GE\(speedup,\s*([\d.]+)\)", text, re.S):
                        found.append((m.group(2), int(m.group(1)), float(m.group(3))))
                    if ref in gpu_ratio:
                        sizes = [int(x) for x in re.findall(gpu_ratio[ref][1], text)]
                        found += [(ref, sizes[0] if sizes else 0, float(r))
                                  for r in re.findall(gpu_ratio[ref][0], text)]
                self.assertIn((ref, int(n), float(ratio)), found,
                              f"{step}: grading.toml says {figures}; its speed tests say {found}")


@unittest.skipUnless(shutil.which("g++") and shutil.which("nm"), "needs g++ and nm")
class ForbiddenCalls(unittest.TestCase):
    """grade.py calls: a student file whose product comes from the lab's
    reference, a fixed loop or a vendor BLAS fails its step; honest code passes."""

    def tree(self, body):
        tree = pathlib.Path(tempfile.mkdtemp())
        (tree / "common").mkdir()
        (tree / "common" / "student_files.txt").write_text("step01_naive/naive.cpp\n")
        (tree / "step01_naive").mkdir()
        (tree / "step01_naive" / "given.inc").write_text("inline int given_helper() { return 1; }\n")
        src = tree / "step01_naive" / "naive.cpp"
        src.write_text(body)
        obj_dir = tree / "build" / "step01_naive" / "CMakeFiles" / "step01_naive_student.dir"
        obj_dir.mkdir(parents=True)
        obj = obj_dir / "naive.cpp.o"
        subprocess.run(["g++", "-std=c++17", "-c", str(src), "-o", str(obj), "-MD", "-MF", str(obj) + ".d"],
                       check=True, cwd=tree)
        (tree / "build" / "bin").mkdir()
        (tree / "build" / "bin" / "step01_naive").write_text("a program")
        return tree

    HONEST = """#include <cmath>
namespace lab { struct MatView { double* p; }; void check_gemm_args(MatView); }
void my_gemm(lab::MatView c) { lab::check_gemm_args(c); c.p[0] = std::sqrt(c.p[0]); }
"""
    CHEAT = """namespace lab { struct MatView { double* p; };
void reference_gemm(double alpha, MatView C);
namespace speed { void transposed_dot(double alpha, MatView C); } }
extern "C" void cblas_dgemm(int, int, int, int, int, int, double);
void my_gemm(lab::MatView c) {
  lab::reference_gemm(1.0, c);
  lab::speed::transposed_dot(1.0, c);
  cblas_dgemm(0, 0, 0, 1, 1, 1, 1.0);
}
"""

    def test_honest_code_is_not_flagged(self):
        tree = self.tree(self.HONEST)
        p = run("calls", "--tree", tree, "--build", tree / "build", "--warn")
        self.assertEqual(p.stderr, "")

    def test_each_call_is_named_with_its_line(self):
        tree = self.tree(self.CHEAT)
        p = run("calls", "--tree", tree, "--build", tree / "build", "--warn")
        self.assertIn("step01_naive/naive.cpp:6: it calls lab::reference_gemm (a reference product of the harness)",
                      p.stderr)
        self.assertIn("step01_naive/naive.cpp:7: it calls lab::speed::transposed_dot", p.stderr)
        self.assertIn("step01_naive/naive.cpp:8: it calls cblas_dgemm (a vendor BLAS)", p.stderr)
        self.assertIn("./lab grade gives step01 no points", p.stderr)
        self.assertTrue((tree / "build" / "bin" / "step01_naive").exists())  # --warn removes nothing

    def test_grading_fails_the_step_as_not_compiled(self):
        tree = self.tree(self.CHEAT)
        log = tree / "build.log"
        run("calls", "--tree", tree, "--build", tree / "build", "--log", log)
        self.assertFalse((tree / "build" / "bin" / "step01_naive").exists())
        self.assertRegex(log.read_text(), r"^step01_naive/naive.cpp:6:1: error: it calls lab::reference_gemm")

    def test_names_are_shown_without_parameters(self):
        sys.path.insert(0, str(GRADE.parent))
        import grade
        self.assertEqual(grade.short_name("void lab::step09::reference_gemm<lab::step09::MinPlus>(lab::View<double "
                                          "const>, std::function<void (int)>)"),
                         "lab::step09::reference_gemm<lab::step09::MinPlus>")
        self.assertEqual(grade.short_name("lab::reference_gemm(double, lab::MatView)"), "lab::reference_gemm")
        self.assertEqual(grade.short_name("cblas_dgemm"), "cblas_dgemm")
        self.assertEqual(grade.short_name("lab::step05::student::dgemm_naive_coalesced(double, CUstream_st*)"),
                         "lab::step05::dgemm_naive_coalesced")

    def test_an_object_nm_cannot_read_in_time_is_named(self):
        tree = self.tree(self.HONEST)
        sys.path.insert(0, str(GRADE.parent))
        import grade
        obj = next((tree / "build").rglob("naive.cpp.o"))
        self.assertEqual(grade.nm_symbols(obj, timeout=1e-6), [("?", "nm could not read its object in 1e-06 s")])

    def test_an_included_source_of_the_lab_is_named(self):
        tree = self.tree('#include "given.inc"\nint f() { return given_helper(); }\n')
        p = run("calls", "--tree", tree, "--build", tree / "build", "--warn")
        self.assertIn("it includes step01_naive/given.inc, a source file of the lab's", p.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=1)
