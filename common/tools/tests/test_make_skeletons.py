#!/usr/bin/env python3
"""make_skeletons.py on small made-up solution files: a hint of several lines
reaches the skeleton whole, the solution's own comments do not, misplaced
markers and a missing or differently worded test line are refused."""
import importlib.util
import pathlib
import subprocess
import sys
import tempfile
import unittest

TOOL = pathlib.Path(__file__).resolve().parents[1] / "make_skeletons.py"
spec = importlib.util.spec_from_file_location("make_skeletons", TOOL)
ms = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ms)

NAME = "solutions/step42_demo/demo.cpp"
HEADER = "// step42 — TODO for the student: a demo.\n// Test:   ./lab test step42\n"

THREE_LINE_HINT = HEADER + """void f() {
  // LAB:SOLUTION-BEGIN  first line of the hint,
  // LAB:HINT  the second line,
  // LAB:HINT  and the third: run_tile
  // The solution's own comment, which the student must not see.
  solve();
  // LAB:SKELETON
  LAB_TODO("step42 f: write it");
  // LAB:SOLUTION-END
}
"""


class Hints(unittest.TestCase):
    def test_three_line_hint_survives_whole(self):
        out = ms.skeleton_of(THREE_LINE_HINT, NAME)
        self.assertIn("  // TODO: first line of the hint,\n"
                      "  //       the second line,\n"
                      "  //       and the third: run_tile\n"
                      '  LAB_TODO("step42 f: write it");\n', out)
        self.assertNotIn("solution's own comment", out)
        self.assertNotIn("solve()", out)
        self.assertNotIn("LAB:", out.replace("LAB_TODO", ""))

    def test_one_line_hint_is_unchanged(self):
        text = HEADER + "  // LAB:SOLUTION-BEGIN  just one line\n  // more solution comment\n  x();\n" \
            "  // LAB:SKELETON\n  y();\n  // LAB:SOLUTION-END\n"
        out = ms.skeleton_of(text, NAME)
        self.assertIn("  // TODO: just one line\n  y();\n", out)
        self.assertNotIn("more solution comment", out)

    def test_hint_line_after_code_is_refused(self):
        text = HEADER + "  // LAB:SOLUTION-BEGIN  a hint\n  x();\n  // LAB:HINT  too late\n" \
            "  // LAB:SKELETON\n  // LAB:SOLUTION-END\n"
        with self.assertRaisesRegex(ms.MarkerError, "LAB:HINT not directly after"):
            ms.skeleton_of(text, NAME)

    def test_hint_line_outside_a_block_is_refused(self):
        with self.assertRaisesRegex(ms.MarkerError, "LAB:HINT not directly after"):
            ms.skeleton_of(HEADER + "// LAB:HINT  stray\n", NAME)

    def test_hint_line_without_a_first_line_is_refused(self):
        text = HEADER + "  // LAB:SOLUTION-BEGIN\n  // LAB:HINT  no first line\n" \
            "  // LAB:SKELETON\n  // LAB:SOLUTION-END\n"
        with self.assertRaisesRegex(ms.MarkerError, "has none"):
            ms.skeleton_of(text, NAME)

    def test_strip_keeps_line_numbers(self):
        stripped = ms.solution_of(THREE_LINE_HINT, NAME)
        self.assertEqual(len(stripped.splitlines()), len(THREE_LINE_HINT.splitlines()))
        self.assertNotIn("LAB:", stripped)
        self.assertIn("solve();", stripped)

    def test_a_planted_solution_names_no_lab_file(self):
        # nvcc lists a #line directive's file among an object's dependencies,
        # so a submission made of stripped solutions must carry none, or the
        # grader refuses its CUDA steps as compiled from the lab's solutions.
        with tempfile.TemporaryDirectory() as tmp:
            src = pathlib.Path(tmp, NAME)
            src.parent.mkdir(parents=True)
            src.write_text(THREE_LINE_HINT)
            built, planted = pathlib.Path(tmp, "built.cpp"), pathlib.Path(tmp, "planted.cpp")
            self.assertEqual(ms.strip(src, built), 0)
            self.assertEqual(ms.strip(src, planted, line=False), 0)
            self.assertTrue(built.read_text().startswith(f'#line 1 "{src.resolve()}"'))
            self.assertNotIn("#line", planted.read_text())
            self.assertNotIn(str(src), planted.read_text())
            self.assertEqual(planted.read_text(), ms.solution_of(THREE_LINE_HINT, NAME))

    def test_the_solutions_submission_names_no_lab_file(self):
        root = TOOL.parents[2]
        with tempfile.TemporaryDirectory() as tmp:
            rc = subprocess.run([sys.executable, str(TOOL), "--solutions", tmp]).returncode
            self.assertEqual(rc, 0)
            files = [f for f in pathlib.Path(tmp).rglob("*") if f.is_file()]
            self.assertTrue(any(f.suffix == ".cu" for f in files))
            for f in files:
                text = f.read_text()
                self.assertNotIn("#line", text, f)
                self.assertNotIn(str(root / "solutions"), text, f)


class TestLine(unittest.TestCase):
    def test_the_template_line_passes(self):
        ms.header_test_line(THREE_LINE_HINT, NAME)

    def test_missing_test_line_is_refused(self):
        text = THREE_LINE_HINT.replace("// Test:   ./lab test step42\n", "")
        with self.assertRaisesRegex(ms.MarkerError, r"no test line; add: // Test:   \./lab test step42"):
            ms.header_test_line(text, NAME)

    def test_other_wording_is_refused(self):
        text = THREE_LINE_HINT.replace("./lab test step42", "ctest --test-dir build/both -L step42")
        with self.assertRaisesRegex(ms.MarkerError, "must read exactly"):
            ms.header_test_line(text, NAME)

    def test_files_without_a_marked_block_need_none(self):
        ms.header_test_line("// given code\nint x;\n", NAME)


if __name__ == "__main__":
    sys.exit(unittest.main(verbosity=1))
