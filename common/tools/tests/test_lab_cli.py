#!/usr/bin/env python3
"""./lab's own command line (and scaling.py's), given what a hurried student or TA types wrong.

Each bad command must stop at once (before any configure or build) with
exit status 1 and one line on stderr, "lab: error: ...", that names what was
wrong; nothing on stdout, and nothing made in the tree (no build folder for
a preset that does not exist, no recorded CSV). Run it as
python3 common/tools/tests/test_lab_cli.py (ctest: tools.lab_cli).
"""
import fcntl
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
LAB = ROOT / "lab"
ANSI = re.compile(r"\x1b\[[0-9;]*m")

# the arguments, and a word the error line must contain
BAD = [
    (["test", "step99"], "step99"),
    (["test", "step3"], "'step3' is not a step"),
    (["test", "-L", "step42"], "no step42"),
    (["test", "03"], "'03'"),
    (["test", "--preset"], "test --preset needs"),
    (["test", "--preset", "nope"], "no preset 'nope'"),
    (["test", "--preset", "-R"], "test --preset needs"),
    (["bench", "--size", "0"], "'0' is not a whole number"),
    (["bench", "--size", "abc"], "'abc' is not a whole number"),
    (["bench", "--threads"], "bench --threads needs"),
    (["bench", "--record", "../elsewhere"], "'../elsewhere' is not a name"),
    (["bench", "--frobnicate"], "unknown option '--frobnicate'"),
    (["grade", "--steps", "10"], "no step10"),
    (["grade", "--steps", "3"], "two-digit step numbers"),
    (["grade", "--steps"], "grade --steps needs"),
    (["grade", "--timeout", "0"], "--timeout"),
    (["grade", "--out"], "grade --out needs"),
    (["grade", "--submission", "/nonexistent/gemm-lab-submission"], "/nonexistent/gemm-lab-submission"),
    (["grade", "--merge"], "two or more"),
    (["release"], "which folder"),
    (["autograder"], "OUT.zip"),
    (["doctor", "--x"], "takes no arguments"),
    (["test", "--preset", "asan", "step05"], "builds no CUDA code"),
]


# what the bad commands above would make if they went on: a build folder and a
# configure log for the preset that does not exist, a recorded CSV outside the results
MADE_IF_THEY_WENT_ON = ["build/nope", "build/nope.configure.log", "common/docs/elsewhere-ladder.csv"]


class LabCli(unittest.TestCase):
    def run_lab(self, args):
        return subprocess.run([str(LAB)] + args, cwd=ROOT, capture_output=True, text=True, timeout=60)

    def test_the_command_to_run_again_reads_back_as_typed(self):
        # ./lab test prints the command to run again; a regex or a quoted word must survive it
        words = ["step01", "-R", "^step01_naive\\.student\\.correctness$", "it's", "", "a b", "--preset", "asan"]
        script = ('source <(sed -n "/^shell_words() {/,/^}/p" "$0"); line="$(shell_words "${@}")"; '
                  'echo "$line"; eval "set -- $line"; printf "%s\\0" "$@"')
        out = subprocess.run(["bash", "-c", script, str(LAB)] + words, capture_output=True, text=True, timeout=30)
        self.assertEqual(out.returncode, 0, out.stderr)
        line, _, back = out.stdout.partition("\n")
        self.assertEqual(back.split("\0")[:-1], words, line)
        self.assertTrue(line.startswith("step01 -R '^step01_naive"), line)

    def test_bad_commands_stop_with_one_line(self):
        before = {p for p in MADE_IF_THEY_WENT_ON if (ROOT / p).exists()}
        for args, word in BAD:
            with self.subTest(cmd="./lab " + " ".join(args)):
                r = self.run_lab(args)
                err = [ANSI.sub("", line) for line in r.stderr.splitlines() if line.strip()]
                self.assertEqual(r.returncode, 1, f"exit status {r.returncode}; stderr: {r.stderr[-500:]}")
                self.assertEqual(r.stdout, "", "a bad command printed on stdout")
                self.assertEqual(len(err), 1, f"not one line on stderr:\n{r.stderr[-800:]}")
                self.assertTrue(err[0].startswith("lab: error: "), err[0])
                self.assertIn(word, err[0])
        made = {p for p in MADE_IF_THEY_WENT_ON if (ROOT / p).exists()} - before
        self.assertFalse(made, "a bad command made files in the tree")

    def test_help_after_a_command_is_the_usage(self):
        # before: 'unknown option', or (test) ctest's help after a whole build
        for cmd in ("test", "bench", "grade", "release", "doctor", "autograder"):
            for flag in ("--help", "-h"):
                with self.subTest(cmd=f"./lab {cmd} {flag}"):
                    r = self.run_lab([cmd, flag])
                    self.assertEqual(r.returncode, 0, r.stderr[-300:])
                    self.assertTrue(r.stdout.startswith("usage: ./lab <command>"), r.stdout[:200])

    def test_unknown_command_shows_the_usage_then_the_error(self):
        r = self.run_lab(["frobnicate"])
        err = [ANSI.sub("", line) for line in r.stderr.splitlines() if line.strip()]
        self.assertEqual(r.returncode, 1)
        self.assertIn("usage: ./lab <command>", r.stderr)
        self.assertEqual(err[-1], "lab: error: unknown command 'frobnicate'")


class GradeLock(unittest.TestCase):
    """A second ./lab grade of one grading folder waits for the first (each
    grade ends every process of the grading account; two at once spoiled each
    other's tests), and says so, before it builds anything."""

    @unittest.skipUnless(shutil.which("flock"), "no flock(1) here: ./lab grades without a lock")
    def test_a_second_grade_waits_for_the_first(self):
        work = Path(tempfile.mkdtemp())
        env = dict(os.environ, LAB_GRADE_DIR=str(work), LAB_GRADE_USER="gemm-lab-no-such-account")
        with open(work / ".grade.lock", "w") as held:
            fcntl.flock(held, fcntl.LOCK_EX)
            p = subprocess.Popen([str(LAB), "grade", "--steps", "01"], cwd=ROOT, env=env, text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
            try:
                time.sleep(3)
                self.assertIsNone(p.poll(), "the second grade did not wait")
            finally:
                os.killpg(p.pid, signal.SIGKILL)
                out = ANSI.sub("", p.communicate()[0])
        self.assertIn(f"another grade is running in {work}; this one waits for it to end", out)
        self.assertFalse((work / "release").exists(), "the waiting grade went on to make its release")
        shutil.rmtree(work)


def python_with_matplotlib():
    """A Python here that imports matplotlib, or None."""
    for exe in (sys.executable, shutil.which("python3"), "/usr/bin/python3"):
        if exe and os.access(exe, os.X_OK) and subprocess.run([exe, "-c", "import matplotlib"],
                                                             capture_output=True).returncode == 0:
            return exe
    return None


class PicturePython(unittest.TestCase):
    """The Python that draws the picture tests' PNGs is named by its path,
    also where the python3 first on PATH is the one with matplotlib (./lab's
    own python3 function once stood in for it, and CMake read the bare name as
    a file in the tree: the picture tests could not start)."""

    @unittest.skipUnless(python_with_matplotlib(), "no Python with matplotlib here")
    def test_doctor_names_matplotlibs_python_by_its_path(self):
        bin_dir = Path(tempfile.mkdtemp())
        try:
            # (a script, not a link: a venv's Python run through a link elsewhere is its base Python)
            wrapper = bin_dir / "python3"
            wrapper.write_text(f"#!/bin/sh\nexec '{python_with_matplotlib()}' \"$@\"\n")
            wrapper.chmod(0o755)
            env = dict(os.environ, PATH=f"{bin_dir}:{os.environ.get('PATH', '')}")
            r = subprocess.run([str(LAB), "doctor"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
            self.assertEqual(r.returncode, 0, r.stderr[-1000:])
            line = next((l for l in ANSI.sub("", r.stdout).splitlines() if l.split()[:1] == ["matplotlib"]), "")
            self.assertRegex(line, r"^ *matplotlib +yes +\S+ +/", f"./lab doctor's matplotlib line: {line!r}")
            self.assertIn(str(bin_dir / "python3"), line)
        finally:
            shutil.rmtree(bin_dir)


class Cores(unittest.TestCase):
    """./lab builds and runs ctest on the cores it may use, whatever OMP_NUM_THREADS
    says (GNU nproc answers OMP_NUM_THREADS where it is set: a job script's
    OMP_NUM_THREADS=1 built on one core, a 64 tested 64 at once on two)."""

    def test_doctor_counts_the_cores_not_omp_num_threads(self):
        env = {k: v for k, v in os.environ.items() if k not in ("LAB_JOBS", "OMP_NUM_THREADS", "OMP_THREAD_LIMIT")}
        cores = subprocess.run(["nproc"], env=env, capture_output=True, text=True, check=True).stdout.strip()
        env["OMP_NUM_THREADS"] = str(int(cores) + 5)
        r = subprocess.run([str(LAB), "doctor"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        header = ANSI.sub("", r.stdout).splitlines()[0] if r.stdout else ""
        self.assertIn(f", {cores} core{'' if cores == '1' else 's'} for builds and tests,", header, r.stderr[-1000:])

    def test_a_bad_lab_jobs_stops_with_one_line(self):
        for bad in ("abc", "0", "-2", "4 cores"):
            r = subprocess.run([str(LAB), "doctor"], cwd=ROOT, env=dict(os.environ, LAB_JOBS=bad),
                               capture_output=True, text=True, timeout=60)
            lines = ANSI.sub("", r.stderr).strip().splitlines()
            self.assertEqual((r.returncode, r.stdout), (1, ""), (bad, r.stderr))
            self.assertEqual(len(lines), 1, lines)
            self.assertIn(f"lab: error: LAB_JOBS='{bad}' is not a positive whole number", lines[0])

    def test_the_tests_threads_fit_the_cores_it_may_use(self):
        """On one core of a larger machine (a Slurm job's share, taskset), the
        configure counts one core: a test's OpenMP threads and ctest's PROCESSORS
        fit it, instead of 4 threads time-sharing it."""
        cmake, taskset = os.environ.get("CMAKE") or shutil.which("cmake"), shutil.which("taskset")
        if not cmake or not taskset or len(os.sched_getaffinity(0)) < 2:
            self.skipTest("needs cmake, taskset and two cores")
        with tempfile.TemporaryDirectory() as tmp:
            probe = Path(tmp) / "probe.cmake"
            probe.write_text(f'include("{ROOT}/common/cmake/LabSchedule.cmake")\n'
                             'message("cores=${LAB_HOST_CORES} threads=${LAB_TEST_THREADS}")\n')
            one = min(os.sched_getaffinity(0))
            r = subprocess.run([taskset, "-c", str(one), cmake, "-P", str(probe)],
                               env=dict(os.environ, OMP_NUM_THREADS="8"), capture_output=True, text=True, timeout=120)
        self.assertIn("cores=1 threads=1", r.stderr, r.stdout + r.stderr)


class ScalingCli(unittest.TestCase):
    """scaling.py (the strong-scaling picture) refuses a bad thread list or size
    with argparse's one line, before it makes its output folder."""

    def test_bad_lists(self):
        out = Path(os.environ.get("TMPDIR", "/tmp")) / f"lab-cli-scaling-{os.getpid()}"
        for args, word in ([["--threads", "a"], "'a' is not a thread count"],
                           [["--threads", "1,0"], "'0' is not a thread count"],
                           [["--table-threads", "16,x"], "--table-threads: 'x'"],
                           [["--table-sizes", "2048,"], "--table-sizes"],
                           [["--reps", "0"], "--reps: 0 is below 1"]):
            with self.subTest(args=args):
                r = subprocess.run([sys.executable, str(ROOT / "common/tools/scaling.py"), str(out)] + args,
                                   capture_output=True, text=True, timeout=60)
                self.assertEqual(r.returncode, 2, r.stderr[-500:])
                self.assertNotIn("Traceback", r.stderr)
                self.assertIn(word, r.stderr.splitlines()[-1])
                self.assertFalse(out.exists(), "the output folder was made before the arguments were checked")


if __name__ == "__main__":
    sys.exit(unittest.main())
