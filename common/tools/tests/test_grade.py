#!/usr/bin/env python3
"""grade.py on small JUnit fixtures: fair points, colour stripped, timeouts,
graded-separately steps, merging, and grading.toml read as TOML."""
import json
import pathlib
import subprocess
import sys
import tempfile
import unittest

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

    def test_points_file_is_toml_and_checked(self):
        bad = self.tmp / "bad.toml"
        bad.write_text("[points]\nstep01 = 'many'\n")
        p = run("score", FIX / "partial.xml", "--points", bad, ok=False)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("step01", p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1)
        inline = self.tmp / "inline.toml"
        inline.write_text('points = { step01 = 5, step02 = 10.0, step05 = 10, step08 = 15 }\n')
        data, _ = self.score(FIX / "partial.xml", inline)
        self.assertEqual(data["score"], 17.5)

    def test_summary_is_short_and_names_the_todo(self):
        p = run("summary", FIX / "skeleton.xml", ok=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("not implemented yet: the triple loop", p.stdout)
        self.assertIn("Step01.Square", p.stdout)
        self.assertIn("1 passed, 3 failed, 1 skipped", p.stdout)

    def test_submission_takes_only_the_students_files(self):
        root = self.tmp / "root"
        for rel, body in {"common/student_files.txt": "# list\nstep01_naive/naive.cpp\nstep04_simd/pack.cpp\n",
                          "step01_naive/naive.cpp": "skeleton", "step01_naive/tests/t.cpp": "test",
                          "step04_simd/pack.cpp": "pack skeleton", "common/grading.toml": "[points]\n"}.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(body)
        sub = self.tmp / "sub"
        for rel, body in {"naive.cpp": "mine", "step01_naive/tests/t.cpp": "rigged",
                          "common/grading.toml": "[points]\nstep01 = 1000\n"}.items():
            (sub / rel).parent.mkdir(parents=True, exist_ok=True)
            (sub / rel).write_text(body)
        tree, ignored = self.tmp / "tree", self.tmp / "ignored.txt"
        p = run("prepare", root, tree, "--submission", sub, "--ignored", ignored)
        self.assertEqual((tree / "step01_naive/naive.cpp").read_text(), "mine")
        self.assertEqual((tree / "step01_naive/tests/t.cpp").read_text(), "test")
        self.assertEqual((tree / "common/grading.toml").read_text(), "[points]\n")
        self.assertEqual((tree / "step04_simd/pack.cpp").read_text(), "pack skeleton")  # missing: the skeleton
        self.assertEqual(ignored.read_text().split(), ["common/grading.toml", "step01_naive/tests/t.cpp"])
        self.assertIn("step04_simd/pack.cpp: not in the submission", p.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=1)
