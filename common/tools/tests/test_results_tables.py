#!/usr/bin/env python3
"""The expected-results tables are what the committed CSVs give.

- Every marked table (the top README and each stepNN_*/README.md) parses: one
  results:begin marker with source, machine, date and command, table rows only,
  one results:end.
- Every source it names is a CSV under common/docs/results/ that exists and that
  runs.json describes (machine, date, command, and whether it was measured or
  transcribed).
- Regenerating each table from those CSVs gives the committed text, so a hand
  edit of a table (or a CSV changed without its tables) fails here.
"""
import csv
import pathlib
import subprocess
import sys
import unittest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
import results_tables as rt  # noqa: E402
from test_handouts import END, parse_marker  # noqa: E402

ROOT = rt.ROOT
FIRST = "step,variant,impl,m,n,k,threads,median_s,gflops".split(",")


def marked_block(path):
    lines = path.read_text().split("\n")
    begins = [i for i, l in enumerate(lines) if "results:begin" in l]
    if len(begins) != 1:
        return None, lines, len(begins)
    end = next((i for i in range(begins[0] + 1, len(lines)) if END.match(lines[i])), None)
    return (begins[0], end), lines, 1


class ResultsTables(unittest.TestCase):
    data = rt.Data()

    def test_every_table_parses_and_names_existing_sources(self):
        for rel in rt.TABLES:
            with self.subTest(file=rel):
                span, lines, count = marked_block(ROOT / rel)
                self.assertEqual(count, 1, f"{rel}: {count} results:begin markers, want one")
                start, end = span
                self.assertIsNotNone(end, f"{rel}: results:begin without results:end")
                fields = parse_marker(lines[start])
                self.assertIsNotNone(fields, f"{rel}:{start + 1}: the results:begin line does not parse")
                for key in ("source", "machine", "date", "command"):
                    self.assertTrue(fields.get(key), f"{rel}: results:begin without {key}=")
                rows = lines[start + 1:end]
                self.assertGreaterEqual(len(rows), 3, f"{rel}: a header, a rule and at least one row")
                self.assertTrue(all(l.startswith("|") and l.endswith("|") for l in rows), f"{rel}: only table rows")
                for src in fields["source"].split(","):
                    path = ROOT / src
                    self.assertTrue(path.is_file(), f"{rel}: source {src} does not exist")
                    self.assertEqual(path.parent, rt.RESULTS, f"{rel}: source {src} is not under common/docs/results")
                    self.assertIn(path.stem, self.data.runs, f"{rel}: {src} is not described in runs.json")
                    with open(path, newline="") as f:
                        self.assertEqual(next(csv.reader(f))[:9], FIRST, f"{src}: not a benchmark CSV")

    def test_runs_json_describes_every_csv(self):
        for path in sorted(rt.RESULTS.glob("*.csv")):
            with self.subTest(csv=path.name):
                run = self.data.runs.get(path.stem)
                self.assertIsNotNone(run, f"{path.name}: not in runs.json")
                for key in ("machine", "date", "command", "origin"):
                    self.assertTrue(run.get(key), f"runs.json: {path.stem} without {key}")
                self.assertRegex(run["date"], r"^\d{4}-\d\d-\d\d$")

    def test_committed_tables_are_what_the_csvs_give(self):
        for rel, fn in rt.TABLES.items():
            with self.subTest(file=rel):
                span, lines, _ = marked_block(ROOT / rel)
                committed = lines[span[0]:span[1] + 1]
                self.assertEqual(committed, rt.block(self.data, fn),
                                 f"{rel}: the table differs from what common/docs/results gives; edit the CSV "
                                 "and run common/tools/results_tables.py instead of editing the table")

    def test_a_hand_edit_is_caught(self):
        new = rt.block(self.data, rt.step06)
        text = "intro\n" + "\n".join(new) + "\nafter\n"
        self.assertEqual(rt.splice(text, new), text)
        edited = text.replace(new[3], new[3].replace("|", "| 1", 1))
        self.assertNotEqual(rt.splice(edited, new), edited)
        with self.assertRaises(ValueError):
            rt.splice("no markers here\n", new)

    def test_check_mode_passes_on_the_committed_tree(self):
        r = subprocess.run([sys.executable, str(HERE.parent / "results_tables.py"), "--check"], capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 0, r.stderr)


if __name__ == "__main__":
    sys.exit(unittest.main(verbosity=1))
