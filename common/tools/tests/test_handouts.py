#!/usr/bin/env python3
"""The step handouts as a student receives them.

- Every relative link in every stepNN_*/README.md and NOTES.md resolves to a
  file of the student tree (the repository's files without solutions/ and .ci/).
- Each handout opens with its first screen: at most 40 lines before the first
  `## ` heading, naming `./lab test stepNN`; every file it names exists in the
  student tree, and every `build/<preset>/bin/<program>` it names is a program
  that the step's CMakeLists builds.
- Each handout has exactly one expected-results table between the markers

      <!-- results:begin source=PATH[,PATH] machine="..." date=YYYY-MM-DD[,...] command="..." -->
      | a Markdown table |
      <!-- results:end -->

  and the marker names its source, machine, date and command.
"""
import os
import pathlib
import re
import subprocess
import sys
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[3]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
CODE = re.compile(r"`([^`]+)`")
BEGIN = re.compile(r"^<!-- results:begin ((?:[a-z]+=(?:\"[^\"]*\"|\S+)\s+)+)-->\s*$")
END = re.compile(r"^<!-- results:end -->\s*$")
FIELD = re.compile(r"([a-z]+)=(\"[^\"]*\"|\S+)")
PATHLIKE = re.compile(r"^[\w.+-]+(/[\w.+*<>-]+)*\.(cpp|cu|hpp|cuh|h|py|toml|md|sh|txt|png)$|^[\w.-]+/[\w./-]+$")
BIN = re.compile(r"^build/[\w-]+/bin/([\w-]+)$")
NOT_IN_TREE = ("results/", "gpu-check-out/", "cpu-mpi-check-out/", "multi-gpu-check-out/", "third_party/")


def parse_marker(line):
    """The fields of a results:begin line, or None where it is not one."""
    m = BEGIN.match(line)
    if not m:
        return None
    return {k: v.strip('"') for k, v in FIELD.findall(m.group(1))}


def student_tree():
    try:
        # tracked files and new ones not yet added (a copy whose index lags its files)
        out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout
        files = out.splitlines()
    except (OSError, subprocess.CalledProcessError):  # a release tree: no .git
        files = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.is_file()
                 and not re.match(r"(build|results|\.lab|\.git)/", str(p.relative_to(ROOT)))]
    files = {f for f in files if not f.startswith(("solutions/", ".ci/"))}
    dirs = {str(pathlib.PurePosixPath(f).parents[i]) for f in files
            for i in range(len(pathlib.PurePosixPath(f).parents) - 1)}
    return files, dirs


def steps():
    return sorted(p for p in ROOT.glob("step[0-9][0-9]_*") if p.is_dir())


def programs(step):
    """The executables the step's CMakeLists builds (lab_add_step's and add_executable's)."""
    text = (step / "CMakeLists.txt").read_text() if (step / "CMakeLists.txt").exists() else ""
    for sub in step.rglob("CMakeLists.txt"):
        if sub.parent != step:
            text += sub.read_text()
    return set(re.findall(r"(?:lab_add_step|add_executable)\(\s*([\w-]+)", text))


def first_screen(lines):
    for n, line in enumerate(lines):
        if line.startswith("## "):
            return lines[:n]
    return lines


class Handouts(unittest.TestCase):
    files, dirs = student_tree()

    def in_tree(self, rel):
        rel = os.path.normpath(rel)
        return rel in self.files or rel in self.dirs

    def test_relative_links_resolve(self):
        for step in steps():
            for doc in ("README.md", "NOTES.md"):
                path = step / doc
                if not path.exists():
                    continue
                for n, line in enumerate(path.read_text().splitlines(), start=1):
                    for target in LINK.findall(line):
                        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                            continue
                        rel = os.path.relpath(os.path.normpath(step / target.split("#")[0]), ROOT)
                        with self.subTest(file=f"{step.name}/{doc}:{n}", link=target):
                            self.assertTrue(self.in_tree(rel), f"{step.name}/{doc}:{n}: link to {target}: "
                                            f"no such file in a student tree")

    def test_first_screen(self):
        for step in steps():
            name = step.name.split("_")[0]
            lines = (step / "README.md").read_text().splitlines()
            screen = first_screen(lines)
            with self.subTest(step=step.name):
                self.assertLessEqual(len(screen), 40, f"{step.name}/README.md: the first screen (the lines "
                                     f"before the first '## ') is {len(screen)} lines")
                self.assertTrue(any(f"./lab test {name}" in l for l in screen),
                                f"{step.name}/README.md: the first screen never says ./lab test {name}")
            built = programs(step)
            for n, line in enumerate(screen, start=1):
                if parse_marker(line):
                    continue  # the results marker names output files of the tools
                for span in CODE.findall(line):
                    for token in span.split():
                        token = token.rstrip(",;:")
                        if token.startswith("-") or token.startswith(NOT_IN_TREE) or "(" in token:
                            continue
                        b = BIN.match(token)
                        with self.subTest(file=f"{step.name}/README.md:{n}", path=token):
                            if b:
                                self.assertIn(b.group(1), built, f"{step.name}/README.md:{n}: {token}: "
                                              f"{step.name}'s CMakeLists builds no program {b.group(1)}")
                            elif PATHLIKE.match(token):
                                here = os.path.relpath(os.path.normpath(step / token), ROOT)
                                self.assertTrue(self.in_tree(token) or self.in_tree(here),
                                                f"{step.name}/README.md:{n}: {token}: not in a student tree")

    def test_one_results_table_each(self):
        for step in steps():
            lines = (step / "README.md").read_text().splitlines()
            begins = [n for n, l in enumerate(lines) if "results:begin" in l]
            with self.subTest(step=step.name):
                self.assertEqual(len(begins), 1, f"{step.name}/README.md: {len(begins)} results tables, want one")
                start = begins[0]
                fields = parse_marker(lines[start])
                self.assertIsNotNone(fields, f"{step.name}/README.md:{start + 1}: a results:begin line that "
                                     "does not parse")
                for key in ("source", "machine", "date", "command"):
                    self.assertTrue(fields.get(key), f"{step.name}/README.md:{start + 1}: results:begin "
                                    f"without {key}=")
                for date in fields["date"].split(","):
                    self.assertRegex(date, r"^\d{4}-\d\d-\d\d$")
                end = next((n for n in range(start + 1, len(lines)) if END.match(lines[n])), None)
                self.assertIsNotNone(end, f"{step.name}/README.md:{start + 1}: results:begin without results:end")
                table = lines[start + 1:end]
                self.assertGreaterEqual(len(table), 3, "a header, a rule and at least one row")
                self.assertTrue(all(l.startswith("|") and l.endswith("|") for l in table),
                                f"{step.name}/README.md: only table rows between the markers")
                widths = {l.count("|") - l.count("\\|") for l in table}
                self.assertEqual(len(widths), 1, f"{step.name}/README.md: rows of different widths")


if __name__ == "__main__":
    sys.exit(unittest.main(verbosity=1))
