#!/usr/bin/env python3
"""gemm-lab's grading: from the grader's own checks (and ctest's JUnit
reports, for a step taken out of the checker's list) to points.

    grade.py check --checker BIN --tree TREE --points common/grading.toml --json V.json
                   [--reference-runner REF] [--steps 01,02] [--user ACCOUNT] [--timeout S]
                   [--build-log LOG]
                                              run lab_grade_check on each checked step's
                                              student variants (as ACCOUNT), one JSON of verdicts
    grade.py checked --points common/grading.toml   the steps the checker grades (NN,NN)
    grade.py pick SUBMISSION --lab ROOT --staged DIR --sources S.json
                                              choose the student's files of a submission,
                                              each from its own path under the submission's
                                              lab folder; say where each came from
    grade.py prepare ROOT TREE [--staged DIR]  write the grading tree: ROOT's files,
                                              the student's files from DIR
    grade.py score [JUNIT] [--checked V.json] --points common/grading.toml [--baseline BASE.json]
                   [--steps 01,02] [--sources S.json] [--md grade.md] [--json results.json]
    grade.py baseline [JUNIT] [--checked V.json] -o BASE.json   what the untouched skeleton passes
    grade.py merge A.json B.json ... [--md grade.md] [--json results.json]
    grade.py summary JUNIT                    a short report for ./lab test

Verdicts. For the steps in [check] of grading.toml, the cases are the
checker's (common/tools/grade_check.cpp): it makes the inputs, runs the
student's code in a process of the grading account and checks the outputs
itself, so nothing that process prints or writes counts; GoogleTest's verdicts
of those steps are not read (step08's run under mpiexec: rank 0 answers). GPU
speed cases time the grader's reference program (REF, lab_grade_reference) and
the student's variant alike from outside. A step left out of [check] is scored
from ctest's JUnit as below.

Fair points. A case earns points only when it FAILS on the
untouched skeleton (the baseline): cases that pass without student code
(quick returns, argument checks) earn nothing, so an untouched tree scores 0.
A step's points (grading.toml) are split evenly over its ctest tests that
have such cases, and a test earns the share of those cases that now pass.
A case that started and never finished (crash, timeout) failed. A case this
machine cannot run (GTEST_SKIP: a DMMA case on a GPU without FP64 tensor cores,
an AVX-512 kernel on an AVX2 CPU) earns nothing and is listed as skipped with
its reason; its test's share goes to the cases that ran. A test program ends
with "LAB-SKIP: <why>" only when none of its cases ran (ctest then reports it
skipped); a step whose tests cannot run here at all (no GPU, no MPI) is "graded
separately": the report names it, the command to grade it elsewhere, and the
maximum reachable here.
"""
import argparse
import collections
import concurrent.futures
import functools
import hashlib
import json
import os
import pathlib
import platform
import pwd
import re
import secrets
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

try:
    import tomllib  # Python >= 3.11
except ModuleNotFoundError:  # pragma: no cover - older Pythons (Ubuntu 22.04 has 3.10)
    try:
        import tomli as tomllib
    except ModuleNotFoundError:
        tomllib = None

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]|\[NON-XML-CHAR-0x1B\]\[[0-9;]*[A-Za-z]|\[NON-XML-CHAR-0x[0-9A-F]+\]")
CASE = re.compile(r"\[( RUN      |       OK |  FAILED  |  SKIPPED )\] ([A-Za-z_][\w/.]*\.[\w/]+)")
WHOLE = "(whole test)"
# The test harness's closing line after a lost GPU context (common/testing/context_watch.cpp)
LOST_CONTEXT = re.compile(r"the GPU context was lost (?:in (\S+)|outside any test) \((\w+)\): the (\d+) GPU tests? "
                          r"after it did not run[^\n]*?(?:fix that test first: ([^\n]*))?$", re.M)
STUDENT_FILES = "common/student_files.txt"
NO_ERROR_LINE = "(the build log names no error line)"  # a build that stopped, not one that failed


def fail(msg):
    sys.exit(f"grade: error: {msg}")


def clean(text):
    return ANSI.sub("", text or "")


# ---- inputs ------------------------------------------------------------------
def read_points(path):
    return read_config(path)[0]


CPU_REFERENCES = ("transposed_dot", "naive_ijk")
GPU_REFERENCES = ("naive_coalesced", "cublas", "fp64_peak", "cublasxt")  # served by lab_grade_reference
SPEED = re.compile(rf"(?:(\w+)=)?((?:{'|'.join(CPU_REFERENCES + GPU_REFERENCES)}),\d+,\d+(?:\.\d+)?)")
PARAM = re.compile(r"(tile=\d+(?:,\d+){0,2}|mem=\d+|gpus=\d+(?:,\d+){0,7}|needs=(?:gpu|fp64_tensor_cores)"
                   r"|threads=(?:[2-9]|[1-5]\d|6[0-4])|ways=(?:[1-9]\d?x){2}[1-9]\d?)")


def all_or_nothing(verdict, env):
    """A variant on several threads passes whole or not at all (score() reads the
    mark): a race fails some cases of a run, not always the same ones, and a
    regrade must not change the points. Its failed cases say what the threads were."""
    verdict["all_or_nothing"] = True
    threads = next((e.split("=", 1)[1] for e in env if e.startswith("OMP_NUM_THREADS=")), "?")
    ways = next((e.split("=", 1)[1] for e in env if e.startswith("LAB_STEP04_WAYS=")), None)
    setting = f"on {threads} threads" + (f" in ways {ways} (a wait left out, or rows or columns that are not "
                                         f"the thread's own?)" if ways else "")
    for c in verdict.get("cases", []):
        if not c.get("passed") and not c.get("skipped"):
            c["why"] = f"{setting}: {c.get('why', '')}"


def threaded(params):
    """A variant's threads= and ways= params (the grader's, not its Params) ->
    (the checker's --env words, the test name's suffix): OMP_NUM_THREADS
    (threads=, or jc * ic * jr for ways=; read_config allows one of the two)
    and LAB_STEP04_WAYS; ([], "") for a variant on one thread."""
    env, suffix = [], ""
    for x in params:
        name, _, value = x.partition("=")
        if name == "ways":
            jc, ic, jr = (int(w) for w in value.split("x"))
            env += [f"LAB_STEP04_WAYS={value}", f"OMP_NUM_THREADS={jc * ic * jr}"]
            suffix += f".ways{value}"
        elif name == "threads":
            env.append(f"OMP_NUM_THREADS={value}")
            suffix += f".t{value}"
    return [a for e in env for a in ("--env", e)], suffix


def read_config(path):
    """grading.toml -> (points {stepNN: n}, checked {stepNN: [(variant, kind, [param, ...]), ...]},
    speed {stepNN: {variant: "REFERENCE,N,RATIO"}})."""
    try:
        with open(path, "rb") as f:
            if tomllib is not None:
                data = tomllib.load(f)
            else:  # the tiny subset grading.toml uses: [points] and `stepNN = number`
                data, section = {}, None
                for number, raw in enumerate(f.read().decode().splitlines(), 1):
                    line = raw.split("#", 1)[0].strip()
                    if not line:
                        continue
                    if line.startswith("["):
                        section = data.setdefault(line.strip("[]").strip(), {})
                    elif "=" in line and section is not None:
                        key, value = (s.strip() for s in line.split("=", 1))
                        if len(value) >= 2 and value[0] == value[-1] == '"':
                            section[key] = value[1:-1]
                            continue
                        try:
                            section[key] = float(value)
                        except ValueError:
                            fail(f"{path}:{number}: {key} must be a number or a \"string\", got '{value}'")
                    else:
                        fail(f"{path}:{number}: expected 'stepNN = points' under [points]")
    except OSError as e:
        fail(f"cannot read {path}: {e}")
    except Exception as e:  # tomllib.TOMLDecodeError and friends
        fail(f"{path}: {e}")
    points = data.get("points")
    if not isinstance(points, dict):
        fail(f"{path}: no [points] table")
    for key, value in points.items():
        if not re.fullmatch(r"step\d\d", key) or isinstance(value, bool) or not isinstance(value, (int, float)) \
                or value < 0:
            fail(f"{path}: [points] {key} = {value!r}: expected stepNN = a number >= 0")
    checked, speed = {}, {}
    for key, value in (data.get("check") or {}).items():
        if not re.fullmatch(r"step\d\d", key) or not isinstance(value, str) or not value.split():
            fail(f"{path}: [check] {key} = {value!r}: expected stepNN = \"variant variant:kind ...\"")
        checked[key] = []
        for v in value.split():
            head, *params = v.split("+")
            name, _, kind = head.partition(":")
            if kind not in ("", "gemm", "minplus", "maxplus", "plustimes", "grid"):
                fail(f"{path}: [check] {key}: '{v}': the kind must be gemm, minplus, maxplus, plustimes or grid")
            if not re.fullmatch(r"\w+(@np[1-9]\d?)?", name):
                fail(f"{path}: [check] {key}: '{v}': expected a variant name, or name@npR (R ranks under mpiexec)")
            bad = [x for x in params if not PARAM.fullmatch(x)]
            if bad:
                fail(f"{path}: [check] {key}: '{v}': '{bad[0]}' is not tile=A[,B[,C]], mem=BYTES, gpus=I[,J...], "
                     f"needs=gpu|fp64_tensor_cores, threads=T (2 to 64) or ways=JCxICxJR (each 1 to 99)")
            if len({x.partition("=")[0] for x in params} & {"threads", "ways"}) > 1:
                fail(f"{path}: [check] {key}: '{v}': threads= and ways= together (ways= sets the threads)")
            checked[key].append((name, kind or "gemm", params))
    for key, value in (data.get("speed") or {}).items():
        entries = value.split() if isinstance(value, str) else []
        matches = [SPEED.fullmatch(e) for e in entries]
        names = [n for n, *_ in checked.get(key, [])]
        if key not in checked or not entries or not all(matches) \
                or any(m.group(1) and m.group(1) not in names for m in matches):
            fail(f"{path}: [speed] {key} = {value!r}: expected a step of [check] = \"[VARIANT=]REFERENCE,N,RATIO ...\" "
                 f"(REFERENCE: {', '.join(CPU_REFERENCES + GPU_REFERENCES)}; without VARIANT= the step's first variant)")
        speed[key] = {(m.group(1) or names[0]): m.group(2) for m in matches}
    return {k: float(v) for k, v in points.items()}, checked, speed


def lost_context(out):
    """A test program's lost GPU context: {culprit (None outside a test), error,
    not_run (GPU cases that did not run after it), memcheck (the command)}, or None."""
    m = LOST_CONTEXT.search(out)
    return m and {"culprit": m.group(1), "error": m.group(2), "not_run": int(m.group(3)), "memcheck": m.group(4)}


def lost_context_text(lost):
    where = f"in {lost['culprit']}" if lost["culprit"] else "outside any test"
    return f"the GPU context was lost {where} ({lost['error']}), and the {lost['not_run']} GPU cases after it did not run"


def skip_marker(out):
    """Why a whole test program was skipped: its "LAB-SKIP: <why>" line, or ""."""
    m = re.search(r"LAB-SKIP:\s*([^\n]*)", out)
    return m.group(1).strip() if m else ""


def skip_reasons(out):
    """{case: why} of the cases GoogleTest skipped: the harness's "skipped: <why>"
    line, or the message of a test's own GTEST_SKIP() << why (the line after
    GoogleTest's "<file>:<line>: Skipped")."""
    reasons, case, why, after_skip = {}, None, "", False
    for line in out.splitlines():
        m = CASE.search(line)
        if m:
            tag = m.group(1).strip()
            if tag == "RUN":
                case, why = m.group(2), ""
            elif tag == "SKIPPED" and m.group(2) == case:
                reasons[case] = why
            after_skip = False
            continue
        line = line.strip()
        if after_skip and line and not why:
            why = line
        after_skip = line.endswith(": Skipped")
        if line.startswith("skipped: ") and not why:
            why = line[len("skipped: "):].strip()
    return reasons


def skipped_here(cases, reasons):
    """The skipped cases grouped by reason, in order: [(why, [case, ...])]."""
    groups = {}
    for c in cases:
        groups.setdefault(reasons.get(c) or "no reason given", []).append(c)
    return list(groups.items())


def skipped_text(groups):
    """Skipped cases by reason; a case alone is named."""
    return "; ".join(f"1 case skipped here ({cs[0]}: {why})" if len(cs) == 1 else
                     f"{len(cs)} cases skipped here ({why})" for why, cs in groups)


def parse_cases(out):
    """GoogleTest's per-case lines -> {case: passed|failed|skipped}. Ranks of an
    MPI run may each print a case: any rank's failure fails it."""
    seen = {}
    for tag, case in CASE.findall(out):
        tag = tag.strip()
        state = seen.get(case)
        if tag == "RUN":
            seen.setdefault(case, "started")
        elif tag == "FAILED":
            seen[case] = "failed"
        elif tag == "OK" and state != "failed":
            seen[case] = "passed"
        elif tag == "SKIPPED" and state != "failed":
            seen[case] = "skipped"
    # started and never finished: it crashed or ran out of time
    return {c: ("failed" if s == "started" else s) for c, s in seen.items()}


def timed_out(log):
    """ctest's own log names the tests it ended for running too long (its JUnit does not)."""
    try:
        text = pathlib.Path(log).read_text(errors="replace") if log else ""
    except OSError:
        return {}
    return {m.group(1): m.group(2) for m in re.finditer(r"Test\s+#\d+: (\S+) \.*\s*\*+Timeout\s+([\d.]+) sec", text)}


def read_junit(path, log=None):
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        fail(f"cannot read the JUnit report {path}: {e}")
    tests = {}
    late = timed_out(log)
    for tc in root.iter("testcase"):
        name = tc.get("name", "?")
        status = tc.get("status", "run")
        out = clean("".join((e.text or "") for e in tc.iter("system-out")))
        bad = tc.find("failure")
        if bad is None:
            bad = tc.find("error")
        skipped = tc.find("skipped")
        missing = skipped is not None and "Unable to find executable" in (skipped.get("message") or "")
        if missing:  # (ctest files a test whose program is not there as not run; it failed)
            result = "failed"
        elif skipped is not None or status in ("disabled", "notrun") or "LAB-SKIP" in out:
            result = "skipped"
        elif bad is not None or status == "fail":
            result = "failed"
        else:
            result = "passed"
        why = clean(bad.get("message", "")) if bad is not None else ""
        if missing:
            why = "its program was not found: " + (out.split("executable:", 1)[-1].strip() or "?")
        if result == "failed" and re.search(r"timeout", why + out[-300:], re.I):
            why = "timed out"
        if result == "failed" and name in late:
            why = f"timed out after {float(late[name]):.0f} s"
        cases = parse_cases(out) if result != "skipped" else {}
        tests[name] = {"name": name, "result": result, "why": why, "cases": cases, "output": out,
                       "skip_reasons": skip_reasons(out) if result != "skipped" else {}}
    return tests


# ---- the grader's own checks (lab_grade_check) ------------------------------------------
def step_folders(tree):
    """{stepNN: its folder's name} in a lab tree."""
    return {d.name[:6]: d.name for d in pathlib.Path(tree).iterdir()
            if d.is_dir() and not d.is_symlink() and re.fullmatch(r"step\d\d_\w+", d.name)}


def compile_errors(log, folder, n=4):
    """The compiler's first error lines about one step's folder (its path up to the
    folder cut off), from a build log; else the log's first error lines (an
    earlier step it links did not compile)."""
    try:
        with open(log, "rb") as f:
            text = f.read(4 << 20).decode(errors="replace")
    except (OSError, TypeError):
        return []
    errors = [l.strip() for l in clean(text).splitlines() if re.search(r"\berror\b", l)]
    mine = [l[l.find(f"{folder}/"):] for l in errors if f"{folder}/" in l]
    picked = []
    for line in mine or [re.sub(r"^\S*/(?=step\d\d_)", "", l) for l in errors]:
        if line[:300] not in picked:
            picked.append(line[:300])
    return picked[:n]


def build_targets(build_dir):
    """The targets of the build system in build_dir (`cmake --build --target help`:
    "name: phony" with Ninja, "... name" with make), or None when it does not answer.
    ./lab reads the same list through `grade.py targets`."""
    try:  # (./lab exports the cmake it found as CMAKE, which need not be on PATH)
        p = subprocess.run([os.environ.get("CMAKE") or "cmake", "--build", str(build_dir), "--target", "help"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    except OSError:
        return None
    if p.returncode != 0:
        return None
    return sorted({re.sub(r"^\.\.\. ", "", line).split(":")[0].split(" ")[0] for line in p.stdout.splitlines()} - {""})


def has_target(build_dir, name):
    """Whether the build system in build_dir has a target `name` (a step's program
    is not one where its toolkit is missing)."""
    names = build_targets(build_dir)
    return names is None or name in names  # (no answer: assume it is, and report the build as failed)


def cmd_targets(args):
    """Print the build's targets whose names start with the prefix, one per line;
    exit status 1 when the build system does not answer."""
    names = build_targets(args.build)
    for name in names or []:
        if name.startswith(args.prefix):
            print(name)
    return 0 if names is not None else 1


MPI_CASE_TIMEOUT = 120  # seconds for one case under mpiexec (a product of at most 130 x 130 x 130)


def mpi_launch(tree, ranks):
    """The checker's --launch and --env words that start a step program under
    mpiexec with `ranks` ranks, as the build's MPI tests start theirs: its
    mpiexec, flags and environment from its CMake cache (LabDependencies.cmake
    puts them there; the checker gives each case a TMPDIR of its own). None:
    the build has no MPI."""
    cache = pathlib.Path(tree) / "build" / "student" / "CMakeCache.txt"
    try:
        text = cache.read_text(errors="replace")
    except OSError:
        text = ""

    def cached(name):
        m = re.search(rf"^{name}:[A-Z]+=(.*)$", text, re.M)
        return m.group(1).strip() if m else ""

    mpiexec = cached("MPIEXEC_EXECUTABLE")
    if not mpiexec or not os.access(mpiexec, os.X_OK):
        return None
    words = [mpiexec, "-n", str(ranks)] + [w for w in cached("LAB_MPIEXEC_FLAGS").split(";") if w]
    env = [e for e in cached("LAB_MPIEXEC_ENV").split(";") if e]
    # and the grader's own (LabDependencies.cmake: how an mpiexec starts sooner),
    # where the grader's environment does not choose already
    env += [e for e in cached("LAB_MPIEXEC_GRADE_ENV").split(";") if e and e.split("=")[0] not in os.environ]
    return [a for w in words for a in ("--launch", w)] + [a for e in env for a in ("--env", e)]


def cmd_check(args):
    """Run the grader's checker on every checked step's student variants; one JSON
    of verdicts ({stepNN: {"variants": [...], "compile_error": [lines] or None}})."""
    _, checked, speed = read_config(args.points)
    steps = parse_steps(args.steps)
    folders = step_folders(args.tree)
    account = []
    if args.user:
        try:
            pw = pwd.getpwnam(args.user)
        except KeyError:
            fail(f"--user {args.user}: no such account")
        account = ["--uid", str(pw.pw_uid), "--gid", str(pw.pw_gid)]
    out_dir = pathlib.Path(args.json).parent
    seed = secrets.randbits(40)  # drawn now: the submission has not seen it
    verdicts = {}
    for step, variants in sorted(checked.items()):
        if steps is not None and step not in steps:
            continue
        folder = folders.get(step, step)
        exe = pathlib.Path(args.tree) / args.bin / folder
        entry = verdicts[step] = {"variants": [], "compile_error": None}
        if not exe.is_file():
            # no such target: this build cannot make the step (whatever else failed to compile)
            if not has_target(exe.parent.parent, folder):
                entry["skipped"] = f"{folder} is not built here (CUDA or MPI was off or not found when " \
                                   f"the tree was configured)"
                continue
            entry["compile_error"] = compile_errors(args.build_log, folder) or [NO_ERROR_LINE]
            continue
        for i, (spec, kind, params) in enumerate(variants):
            variant, _, ranks = spec.partition("@np")
            launch = []
            if ranks or kind == "grid":  # an MPI program: under mpiexec (choose_grid on one rank)
                launch = mpi_launch(args.tree, int(ranks or 1))
                if launch is None:
                    entry["skipped"] = f"{folder} has no mpiexec in its build (MPI was off or not found)"
                    break
                # a deadlock (the common MPI mistake) ends its variant in 2 minutes, not --timeout
                launch += ["--case-timeout", str(min(args.timeout, MPI_CASE_TIMEOUT))]
            js = out_dir / f".check-{step}-{i}-{variant}-{ranks or 0}.json"
            js.unlink(missing_ok=True)
            env, suffix = threaded(params)  # a variant on several threads: its env, and a name of its own
            cmd = [args.checker, "--runner", str(exe.resolve()), "--step", step, "--variant", variant, "--kind", kind,
                   "--seed", str(seed + 7919 * i), "--json", str(js), "--timeout", str(args.timeout), *account,
                   *launch, *env]
            for x in params:  # the variant's Params; needs=: what the grader's program must lack to believe a skip
                if x.startswith("needs="):
                    cmd += ["--needs", x[6:]]
                elif not x.startswith(("threads=", "ways=")):
                    cmd += ["--param", x]
            sp = None if suffix else speed.get(step, {}).get(spec)  # speed: on one thread, as [speed] says
            if sp:
                cmd += ["--speed", sp]
            if args.reference_runner:
                cmd += ["--reference-runner", args.reference_runner]
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if p.returncode != 0 or not js.is_file():
                fail(f"the checker failed on {step} {spec}: {p.stdout.strip()[-500:]}")
            verdict = json.loads(js.read_text(errors="replace"))
            verdict["variant"] = (f"{variant}.np{ranks}" if ranks else variant) + suffix
            if suffix:
                all_or_nothing(verdict, env)
            entry["variants"].append(verdict)
            js.unlink()
    write_whole(args.json, json.dumps(verdicts, indent=1))
    return 0


def clip(text, most):
    """A checker's message on one line, cut at a word (never inside a number) with
    "..." where it is longer than `most`."""
    line = "; ".join(l.strip() for l in text.splitlines() if l.strip())
    if len(line) <= most:
        return line
    cut = line.rfind(" ", 0, most - 4)
    return line[:cut if cut > most // 2 else most - 4] + " ..."


def read_checked(path):
    """The checker's verdicts as tests, one per checked variant (its correctness
    cases) and one for its speed case, or one failed test for a step that did not
    compile. -> {test name: test}, {the steps it checked}."""
    try:
        data = json.loads(pathlib.Path(path).read_text())
    except (OSError, ValueError) as e:
        fail(f"cannot read the checker's verdicts {path}: {e}")
    tests = {}
    for step, entry in data.items():
        if entry.get("compile_error"):
            lines = entry["compile_error"]
            name = f"{step}.checked"
            tests[name] = {"name": name, "result": "failed", "why": "did not compile: " + lines[0], "cases": {},
                           "output": "did not compile; the compiler said first:\n" + "\n".join(lines),
                           "skip_reasons": {}}
            continue
        if entry.get("skipped"):  # its program is not built here (no CUDA, no MPI)
            name = f"{step}.checked"
            tests[name] = {"name": name, "result": "skipped", "why": entry["skipped"], "cases": {},
                           "output": "LAB-SKIP: " + entry["skipped"], "skip_reasons": {}}
            continue
        for v in entry["variants"]:
            skip = next((c for c in v["cases"] if c.get("skipped")), None)
            if skip:  # a GPU variant on a machine without a usable GPU
                name = f"{step}.checked.{v['variant']}"
                tests[name] = {"name": name, "result": "skipped", "why": skip["why"], "cases": {},
                               "output": "LAB-SKIP: " + skip["why"], "skip_reasons": {}}
                continue
            for part in ("checked", "speed"):
                cs = [c for c in v["cases"] if c["name"].startswith("speed:") == (part == "speed")]
                if not cs:
                    continue
                name = f"{step}.{part}.{v['variant']}"
                bad = [c for c in cs if not c["passed"]]
                figures = [c["figures"] for c in cs if c.get("figures") and c["passed"]]
                tests[name] = {"name": name, "result": "failed" if bad else "passed",
                               "why": clip(bad[0]["why"], 240) if bad else "; ".join(figures),
                               "cases": {c["name"]: "passed" if c["passed"] else "failed" for c in cs},
                               "output": "\n".join(f"[  FAILED  ] {c['name']}: {clip(c['why'], 300)}" for c in bad[:12]),
                               "skip_reasons": {}, "all_or_nothing": bool(v.get("all_or_nothing")),
                               # what the grader did beside the verdicts (a case it ran twice)
                               "notes": [f"{c['name']}: {c['note']}" for c in cs if c.get("note")]}
    return tests, set(data)


def read_evidence(junit, checked, log=None):
    """The tests to score: the checker's verdicts for the steps it checked, and
    ctest's JUnit (GoogleTest's verdicts) only for the other steps."""
    tests, mine = read_checked(checked) if checked else ({}, set())
    if junit:
        tests.update({n: t for n, t in read_junit(junit, log).items() if step_of(n) not in mine})
    return tests


def step_of(name):
    m = re.match(r"(step\d\d)", name)
    return m.group(1) if m else None


def parse_steps(text):
    if not text:
        return None
    steps = set()
    for s in text.split(","):
        s = s.strip()
        if not re.fullmatch(r"(step)?\d\d?", s):
            fail(f"--steps: '{s}' is not a step number (e.g. --steps 05,06,07)")
        steps.add("step%02d" % int(s.replace("step", "")))
    return steps


# ---- scoring -----------------------------------------------------------------------
def grade_command(step):
    return f"./lab grade --submission DIR --steps {step[4:]}"


def score(tests, points, baseline, steps=None):
    """-> (step rows, per-test results). baseline: {test: {case: status}} or None."""
    by_step = {}
    for t in tests.values():
        s = step_of(t["name"])
        if s and (steps is None or s in steps):
            by_step.setdefault(s, []).append(t)
    rows, results = [], []
    wanted = sorted(set(points) if steps is None else steps)
    for step in sorted(set(wanted) | set(by_step)):
        most = points.get(step, 0.0)
        ts = by_step.get(step, [])
        graded, cannot_run = [], {}
        for t in ts:
            if t["result"] == "skipped":
                continue
            base = None if baseline is None else baseline.get(t["name"])
            if base is not None and not base:
                base = {WHOLE: "failed"}
            # a program that printed no case where the skeleton's ran them did not run its tests
            cases = dict(t["cases"]) or {WHOLE: t["result"] if not base or WHOLE in base else "failed"}
            if not t["cases"] and base and WHOLE not in base and not t["why"]:
                t["why"] = "the program ended without running its tests"
            # a case counts only when the untouched skeleton did not pass it
            counted = sorted(c for c in set(cases) | set(base or {}) if (base or {}).get(c) != "passed")
            # ... and when it ran here: a case the machine cannot run (GTEST_SKIP) earns
            # nothing, is listed with its reason, and its share goes to the cases that ran
            skipped = [c for c in counted if cases.get(c) == "skipped"]
            gradable = [c for c in counted if cases.get(c) != "skipped"]
            if not gradable:
                if skipped:  # it ran, but none of its counted cases could
                    cannot_run[t["name"]] = skipped_here(skipped, t["skip_reasons"])
                continue
            won = [c for c in gradable if cases.get(c) == "passed"]
            graded.append((t, gradable, won, skipped_here(skipped, t["skip_reasons"])))
        status = "graded" if graded else "separately"
        if ts and not graded and any(t["result"] != "skipped" and t["name"] not in cannot_run for t in ts):
            status = "graded"  # it ran, but nothing in it fails on the skeleton
        share = most / len(graded) if graded else 0.0
        got = 0.0
        for t, gradable, won, skips in graded:
            s = share * len(won) / len(gradable)
            if t.get("all_or_nothing") and len(won) < len(gradable):
                s = 0.0  # several threads: whole or nothing (all_or_nothing)
            got += s
            lost = [c for c in gradable if c not in won]
            n_skipped = sum(len(cs) for _, cs in skips)
            results.append({"name": t["name"], "step": step, "score": round(s, 3), "max_score": round(share, 3),
                            "status": "passed" if not lost else "failed", "why": t["why"],
                            "cases": f"{len(won)}/{len(gradable)} graded cases"
                                     + (f", {n_skipped} skipped here" if n_skipped else "")
                                     + (", whole or nothing on several threads" if t.get("all_or_nothing") and lost
                                        else ""),
                            "failed_cases": lost, "skipped_cases": skips, "notes": t.get("notes", []),
                            "output": t["output"][-4000:], "lost_context": lost_context(t["output"])})
        reasons = []  # why each test that did not run here did not
        for t in ts:
            skips = cannot_run.get(t["name"])
            if t["result"] == "skipped" or skips:
                why = skip_marker(t["output"]) if not skips else skips[0][0]
                reasons.append(why)
                results.append({"name": t["name"], "step": step, "score": 0.0, "max_score": 0.0,
                                "status": "skipped", "why": why, "cases": "", "failed_cases": [],
                                "skipped_cases": skips or [], "output": t["output"][-1000:]})
        first_reason = next((w for w in reasons if w), "")
        why = ""
        if status == "separately":
            why = first_reason or ("no tests of this step ran here" if ts else "this step has no tests in this tree")
        # graded here on the tests that ran, while others of it could not (step09's GPU
        # semirings on a CPU host): its points went to those that ran, so say so
        partly = first_reason if status == "graded" and reasons else ""
        rows.append({"step": step, "score": round(got, 3) if status == "graded" else 0.0, "max_score": most,
                     "status": status, "why": why, "command": grade_command(step) if status == "separately" else "",
                     "tests": len(ts), **({"partly": partly} if partly else {})})
    return rows, results


def graded_files_table(sources, steps=None):
    """What was graded: each student file, where it came from, its size."""
    lines = ["## What was graded", ""]
    if sources.get("root") not in (None, ".", ""):
        lines += [f"The lab's folder in the submission: `{sources['root']}/` ({sources.get('root_how', '')}).", ""]
    lines += ["| student file | taken from the submission | size | |", "|---|---|---:|---|"]
    for row in sources.get("files", []):
        # --steps: those steps' files, and whatever else the submission holds
        if steps is not None and step_of(row["file"]) not in steps and row["from"] is None:
            continue
        if row["from"] is None:
            where, flag = "untouched skeleton: not in the submission", ""
        else:
            where = f"`{row['from']}`" + (" (by its name)" if row["how"].startswith("its name") else "")
            flag = "**unchanged from the skeleton**" if row["unchanged"] else ""
        if steps is not None and step_of(row["file"]) not in steps:
            flag = "; ".join(f for f in (flag, "not graded in this run (--steps)") if f)
        flag = "; ".join([flag] + row.get("notes", [])).strip("; ")
        lines.append(f"| `{row['file']}` | {where} | {size_text(row['size'])} | {flag} |")
    for line in sources.get("run_as", "").splitlines():
        lines += ["", line]
    return lines + [""]


def summarise_ignored(ignored, named=3, most=12):
    """The ignored files, one screen whatever was uploaded: each line as it is
    when there are few; else one line per folder and reason with a count and
    the first few named. Hints ("did you mean") always come whole, first."""
    hints = [f for f in ignored if "did you mean" in f]
    rest = [f for f in ignored if "did you mean" not in f]
    if len(rest) <= most:
        return hints + rest
    groups, counts = {}, [f for f in rest if ": " not in f]  # (lines that count files already)
    for f in rest:
        if ": " in f:
            path, why = f.split(": ", 1)
            top = path.split("/", 1)[0] + "/" if "/" in path.rstrip("/") else "./"
            groups.setdefault((top, why), []).append(path)
    lines = []
    for (top, why), paths in list(groups.items())[:most]:
        first = ", ".join(f"`{q}`" for q in paths[:named]) + (", ..." if len(paths) > named else "")
        lines.append(f"{top}: {len(paths)} file{'s' if len(paths) != 1 else ''}, {why} ({first})")
    if len(groups) > most:
        lines.append(f"... and {sum(len(v) for v in list(groups.values())[most:])} more files of "
                     f"{len(groups) - most} other folders and reasons")
    return hints[:most] + lines + counts


def report(rows, results, ignored=(), note="", sources=None, steps=None):
    total = sum(r["score"] for r in rows)
    possible = sum(r["max_score"] for r in rows)
    here = sum(r["max_score"] for r in rows if r["status"] == "graded")
    apart = [r for r in rows if r["status"] == "separately"]
    where = "in these reports" if note.startswith("Merged from ") else "on this machine"
    headline = f"{total:.1f} / {possible:.1f} points ({here:.1f} reachable {where})"
    lines = ["# gemm-lab grade", "", f"**{headline}**", ""]
    if sources:
        lines += graded_files_table(sources, steps)
    if note:
        lines += [note, ""]
    partly = [r for r in rows if r.get("partly")]
    lines += ["| step | points | status |", "|---|---:|---|"]
    for r in rows:
        st = "graded" if r["status"] == "graded" else f"graded separately: {r['why']}"
        if r.get("partly"):
            st = f"graded on the tests that ran here; the others separately: {r['partly']}"
        lines.append(f"| {r['step']} | {r['score']:.1f} / {r['max_score']:.1f} | {st} |")
    if apart or partly:
        both = ",".join(r["step"][4:] for r in apart + partly)
        lines += ["", "## Graded separately", "",
                  "These steps, or some of their tests, cannot run on this machine; grade them where they can, "
                  "then merge the two reports (each step is taken from the report where more of its tests ran):", "",
                  f"    ./lab grade --submission DIR --steps {both} --out there/",
                  "    ./lab grade --merge THIS/results.json there/results.json", ""]
        for r in apart:
            lines.append(f"- {r['step']} ({r['max_score']:.0f} points): {r['why']}")
        for r in partly:
            lines.append(f"- {r['step']} (its {r['max_score']:.0f} points went to its tests that ran here): "
                         f"{r['partly']}")
    if ignored:
        lines += ["", "## Ignored files of the submission", "",
                  "Only the files listed in common/student_files.txt are graded, each from its own path:", ""]
        lines += [f"- `{f.split(': ', 1)[0]}`: {f.split(': ', 1)[1]}" if ": " in f else f"- {f}"
                  for f in summarise_ignored(ignored)]
    lines += ["", "## Tests", ""]
    for r in results:
        mark = {"passed": "PASS", "failed": "FAIL", "skipped": "SKIP"}[r["status"]]
        cases = f", {r['cases']}" if r["cases"] else ""
        why = f", {r['why']}" if r.get("why") else ""
        lines.append(f"- {mark} `{r['name']}` ({r['score']:.2f} / {r['max_score']:.2f}{cases}{why})")
        for c in r["failed_cases"][:8]:
            lines.append(f"    - failed: `{c}`")
        if len(r["failed_cases"]) > 8:
            lines.append(f"    - ... and {len(r['failed_cases']) - 8} more")
        for why, cs in r.get("skipped_cases", []):
            more = f" and {len(cs) - 1} more" if len(cs) > 1 else ""
            lines.append(f"    - skipped here, not graded: `{cs[0]}`{more} ({why})")
        for note in r.get("notes", [])[:4]:
            lines.append(f"    - note: {note}")
    failing = [r for r in results if r["status"] == "failed"]
    if failing:
        lines += ["", "## What failed", ""]
        for r in failing:
            first = first_reasons(r["output"])
            if r.get("lost_context"):  # (its line is far from the end of a long output)
                first.insert(0, lost_context_text(r["lost_context"]))
            lines.append(f"- `{r['name']}`: " + ("; ".join(first) or r.get("why") or "see the ctest log"))
    return headline, "\n".join(lines) + "\n"


def first_reasons(out, n=3):
    picked = []
    for line in out.splitlines():
        line = line.strip()
        if ("not implemented yet" in line or "FAILED  ]" in line or "error" in line.lower()) \
                and line not in picked and not re.search(r"\[  FAILED  \] \d+ tests?,", line):
            picked.append(line)
        if len(picked) == n:
            break
    return picked


def gradescope(rows, results, headline, md, ignored):
    """Gradescope's results.json; the lab's per-step rows ride in extra_data (for --merge)."""
    tests = []
    for r in results:
        if r["status"] == "skipped":
            continue
        body = ""
        if r["failed_cases"]:
            body = "failed cases:\n" + "\n".join(f"  {c}" for c in r["failed_cases"]) + "\n\n"
        if r.get("skipped_cases"):
            body += "not graded: " + skipped_text(r["skipped_cases"]) + "\n\n"
        tests.append({"name": r["name"], "score": r["score"], "max_score": r["max_score"],
                      "status": r["status"], "output": body + r["output"]})
    for row in rows:
        if row["status"] == "separately":
            tests.append({"name": f"{row['step']} (graded separately: {row['why']})", "score": 0,
                          "max_score": 0, "output": f"grade it on a machine that can run it: {row['command']}"})
    return {"score": round(sum(r["score"] for r in rows), 3), "output": md, "tests": tests,
            "output_format": "md", "stdout_visibility": "visible",
            "extra_data": {"lab_steps": rows, "lab_ignored": summarise_ignored(ignored), "lab_headline": headline}}


def write(args, rows, results, ignored=(), note="", sources=None, steps=None):
    headline, md = report(rows, results, ignored, note, sources, steps)
    if args.md:
        write_whole(args.md, md)
    if args.json:
        data = gradescope(rows, results, headline, md, ignored)
        if sources:
            data["extra_data"]["lab_files"] = sources.get("files", [])
        write_whole(args.json, json.dumps(data, indent=2))
    print(f"grade: {headline}")
    for r in rows:
        if r["status"] == "separately":
            print(f"grade: {r['step']} graded separately ({r['why']}): {r['command']}")
    for f in summarise_ignored(ignored):
        print(f"grade: ignored: {f}")
    written = " and ".join(p for p in (args.md, args.json) if p)
    if written:
        print(f"grade: wrote {written}")


# ---- commands -------------------------------------------------------------------------
def cmd_score(args):
    points = read_points(args.points)
    tests = read_evidence(args.junit, args.checked, args.log)
    baseline = None
    if args.baseline:
        try:
            baseline = json.loads(pathlib.Path(args.baseline).read_text())["tests"]
        except (OSError, ValueError, KeyError) as e:
            fail(f"cannot read the baseline {args.baseline}: {e}")
    sources = None
    if args.sources:
        try:
            sources = json.loads(pathlib.Path(args.sources).read_text())
        except (OSError, ValueError) as e:
            fail(f"cannot read {args.sources}: {e}")
        if args.run_as:
            sources["run_as"] = args.run_as
    ignored = (sources or {}).get("ignored", [])
    note = "" if baseline is not None else \
        "(no baseline of the untouched skeleton: every case counts, also those that pass without student code)"
    steps = parse_steps(args.steps)
    rows, results = score(tests, points, baseline, steps)
    write(args, rows, results, ignored, note, sources, steps)
    return 0


def cmd_baseline(args):
    tests = read_evidence(args.junit, args.checked)
    # the lab's own skeleton always compiles: where it did not, the build was cut
    # short (killed, a full disk), and such a baseline would fail every case, so
    # that cases the skeleton passes would earn points in every later grade
    # (a step whose build failed with an error of its own, say a library that
    # does not link here, fails alike every time: it is graded as it is)
    cut = [t for t in tests.values() if t["why"].startswith("did not compile") and NO_ERROR_LINE in t["why"]]
    if cut:
        fail(f"the untouched skeleton's build stopped without an error ({cut[0]['name']} did not compile, and "
             "the build log names no error line): no baseline was kept; was the grade stopped, or the machine "
             "short of memory or disk? Grade again")
    base = {n: t["cases"] or {WHOLE: t["result"]} for n, t in tests.items() if t["result"] != "skipped"}
    pathlib.Path(args.output).write_text(json.dumps({"stamp": args.stamp or "", "tests": base}, indent=1))
    return 0


def cmd_merge(args):
    chosen, files = {}, {}
    for path in args.reports:
        try:
            data = json.loads(pathlib.Path(path).read_text())
            rows = data["extra_data"]["lab_steps"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            fail(f"{path} is not a report of ./lab grade (results.json): {e}")
        # one submission's reports only: each graded file the same bytes in all of them
        for f in data["extra_data"].get("lab_files", []):
            if f.get("sha256"):
                seen = files.setdefault(f["file"], (f["sha256"], path))
                if seen[0] != f["sha256"]:
                    fail(f"{path} and {seen[1]} are reports of different submissions: their {f['file']} differ")
        for row in rows:
            # a step graded anywhere wins over "graded separately"; of two graded ones, the one
            # where it did not compile (a GPU host compiles the CUDA files a CPU host leaves
            # out), else the one where more of its tests ran (step09's GPU semirings on the
            # GPU host), else the first
            tests = [t for t in data["tests"] if step_of(t["name"]) == row["step"]]
            ran = sum(1 for t in tests if t.get("status") != "skipped" and t.get("max_score", 0))
            if any(t["name"] == f"{row['step']}.checked" and "did not compile" in t.get("output", "") for t in tests):
                ran = float("inf")
            have = chosen.get(row["step"])
            if have is None or (have["row"]["status"] != "graded" and row["status"] == "graded") or \
                    (have["row"]["status"] == row["status"] == "graded" and ran > have["ran"]):
                chosen[row["step"]] = {"row": row, "tests": tests, "ran": ran}
    rows = [chosen[s]["row"] for s in sorted(chosen)]
    results = []
    for s in sorted(chosen):
        for t in chosen[s]["tests"]:
            if t.get("max_score", 0) or t.get("status"):
                # (the failed cases and their reasons are in the report's output: the first one as the why)
                out = t.get("output", "")
                why = "" if t["score"] >= t["max_score"] else next(
                    (l[len("[  FAILED  ] "):] for l in out.splitlines() if l.startswith("[  FAILED  ] ")),
                    out.strip().splitlines()[0] if out.strip() else "")
                results.append({"name": t["name"], "step": s, "score": t["score"], "max_score": t["max_score"],
                                "status": t.get("status", "skipped"), "why": clip(why, 240), "cases": "",
                                "failed_cases": [], "output": out})
    note = "Merged from " + ", ".join(f"`{p}`" for p in args.reports) + "."
    write(args, rows, results, note=note)
    return 0


GTEST_TOTAL = re.compile(r"\[==========\] (\d+) tests? from \d+ test suites? ran")
GTEST_PASSED = re.compile(r"\[  PASSED  \] (\d+) tests?\.")
GTEST_SKIPPED = re.compile(r"\[  SKIPPED \] (\d+) tests?, listed below:")


def gtest_totals(out):
    """GoogleTest's own count of a run: (cases started, passed, skipped), or None
    (its "ran" counts the skipped ones too). The output keeps its end (ctest
    cuts the middle of a long one), and every rank of an MPI run prints the same
    totals."""
    runs = [int(n) for n in GTEST_TOTAL.findall(out)]
    passed = [int(n) for n in GTEST_PASSED.findall(out)]
    skipped = [int(n) for n in GTEST_SKIPPED.findall(out)]
    if not runs:
        return None
    return max(runs), (min(passed) if passed else 0), (max(skipped) if skipped else 0)


def failed_not_by_a_todo(out):
    """The cases whose own output has a failure and no TODO in it: a mistake of their own.
    (A case with nothing between its lines failed on what another rank printed.)"""
    return [m.group(1) for m in re.finditer(r"^\[ RUN      \] (\S+)\n(.*?)^\[  FAILED  \] \1\b", out, re.M | re.S)
            if re.search(r"^\S+:\d+: Failure$", m.group(2), re.M) and "not implemented yet" not in m.group(2)]


def waits_for(test, todos):
    """The other steps whose unfinished TODOs fail this step's test (step09's
    MPI tests run step08's cube): {stepNN} when every TODO it hit is theirs,
    and no case failed for a reason of its own (step08's choose_grid needs no step04)."""
    own = step_of(test["name"])
    steps = {step_of(m) for m in todos}
    if not own or not steps or None in steps or own in steps or failed_not_by_a_todo(test["output"]):
        return set()
    return steps


# ---- crashes, MPI aborts and timeouts in ./lab test's summary ------------------
# Which rank died of what, in which test, from the run's own words: the step's
# test main (step08: "rank 1 died with signal 11 (SIGSEGV) in Suite.Case"),
# mpiexec's report (Open MPI, MPICH), MPI_Abort's, the MPI watchdog's, and
# ctest's log (a crash of a program outside mpiexec, a timeout).
SIGNALS = {2: "SIGINT", 4: "SIGILL", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL", 11: "SIGSEGV", 15: "SIGTERM"}
CTEST_EXCEPTION = {"SegFault": 11, "Subprocess aborted": 6, "Subprocess killed": 9, "Illegal": 4, "Numerical": 8,
                   "Bus error": 7, "Interrupt": 2}
# glibc's malloc on finding its bookkeeping overwritten (then it aborts)
HEAP = re.compile(r"^((?:double free or corruption|free\(\): |malloc\(\): |malloc_consolidate\(\): |"
                  r"corrupted size vs\. prev_size|corrupted double-linked list|munmap_chunk\(\): invalid|"
                  r"realloc\(\): invalid)[^\n]*)$", re.M)
RANK_DIED = re.compile(r"rank (\d+) died with signal (\d+) \((\w+)\) in (\S+)")
OMPI_SIGNAL = re.compile(r"process rank (\d+) with PID \S+ on node \S+ exited on\s+signal (\d+)")
MPICH_SIGNAL = re.compile(r"RANK (\d+) PID \d+ RUNNING AT \S+\s*=\s*KILLED BY SIGNAL: (\d+)")
MPI_ABORT = re.compile(r"MPI_ABORT was invoked on rank (\d+) in communicator \S+\s+with errorcode (-?\d+)")
# a rank that left early: Open MPI's words for an exit without MPI_Finalize, and for a non-zero status
OMPI_IMPROPER = re.compile(r"process rank (\d+) with PID \S+ on\s+node \S+ exiting improperly")
OMPI_EXIT = re.compile(r"Process name: \[\[\d+,\d+\],(\d+)\]\s+Exit code:\s+(\d+)")
# an exception nothing caught: libstdc++'s words before it aborts
TERMINATE = re.compile(r"terminate called after throwing an instance of '([^']+)'\n\s*what\(\):\s*([^\n]*)")
MPICH_EXIT = re.compile(r"RANK (\d+) PID \d+ RUNNING AT \S+\s*=\s*EXIT STATUS: (\d+)")
MPI_ERROR = re.compile(r"MPI Error in NBC subrequest \S+ : (\d+)|An error occurred in (MPI_\w+)"
                       r"(?:(?:.*\n){0,4}?.*?\*\*\* (MPI_ERR_\w+))?")
ASAN = re.compile(r"ERROR: AddressSanitizer: (\S+(?: on [^(\n]*?)?)\s*(?:\(|\n)")
ASAN_FRAME = re.compile(r"^\s*#\d+ 0x[0-9a-f]+ in (.*?) (\S+\.(?:cpp|hpp|cu|cuh|h|inc):\d+)(?::\d+)?$", re.M)
UBSAN = re.compile(r"^(\S+?):(\d+):\d+: runtime error: ([^\n]*)", re.M)
ASAN_ACCESS = re.compile(r"\s*((?:READ|WRITE) of size \d+)")
# --preset tsan: the first report, its two accesses (each with its stack) and the memory's kind
TSAN = re.compile(r"WARNING: ThreadSanitizer: ([^\n(]+?)\s*\(pid=\d+\)")
TSAN_ACCESS = re.compile(r"^ *(Previous |Atomic |Previous atomic )?(read|write) of size (\d+) at 0x[0-9a-f]+ by "
                         r"(main thread|thread T\d+)[^:\n]*:\n((?: *#\d+ [^\n]*\n?)*)", re.M | re.I)
TSAN_FRAME = re.compile(r"^ *#\d+ (.*?) (\S+\.(?:cpp|hpp|cu|cuh|h|inc|cc)):(\d+)(?::\d+)? \(", re.M)
TSAN_LOCATION = re.compile(r"^ *Location is (stack of (?:main thread|thread T\d+)|heap block of size (\d+)|"
                           r"global '([^']*)')", re.M)
PHASE = re.compile(r"the first phase that went wrong: ([^\n]*)")
RACE = re.compile(r"a race between the streams: (.*?) \(found by the CUDA emulation")
WATCHDOG = re.compile(r"rank (\d+) made no progress for (\d+) s in (?:test )?(\S+), last in ([^\n]*?): a deadlock")


def short_path(path):
    """A source path from its step's folder on (step03_tiling/tiling.cpp:57), else its file name."""
    m = re.search(r"(?:^|/)((?:step\d\d_\w+|common)/.*)$", path)
    return m.group(1) if m else path.rsplit("/", 1)[-1]


def short_function(name):
    """A C++ function's name without its arguments, template arguments and namespaces."""
    name = name.replace("(anonymous namespace)::", "")
    name = re.sub(r"&lt;.*&gt;|<.*>", "", name.replace("&amp;", "&")).split("(")[0].strip()
    return name.rsplit("::", 1)[-1] or name


def case_in_progress(out):
    """The GoogleTest case a program was in when it ended: started, never finished."""
    open_case = None
    for tag, case in CASE.findall(out):
        open_case = case if tag.strip() == "RUN" else (None if case == open_case else open_case)
    return open_case


def ctest_ending(name, log):
    """How ctest saw the test end, from its log: ("signal", n), ("timeout", seconds) or None."""
    try:
        text = pathlib.Path(log).read_text(errors="replace") if log else ""
    except OSError:
        return None
    # "***Exception: SegFault  0.05 sec", "Subprocess aborted***Exception:   0.05 sec" (SIGABRT,
    # as a double free's) or "***Timeout 600.01 sec"
    m = re.search(r"Test\s+#\d+: " + re.escape(name) + r" \.*\s*(?:(Subprocess \w+)\*+Exception:|"
                  r"\*+Exception: ([A-Za-z ]+?)|\*+(Timeout))\s+([\d.]+) sec", text)
    if not m:
        return None
    if m.group(3):
        return ("timeout", float(m.group(4)))
    return ("signal", CTEST_EXCEPTION.get((m.group(1) or m.group(2)).strip(), 0))


def build_of(log):
    """The build folder of a ./lab test run, from its log (results/test-<preset>.log)."""
    preset = re.search(r"test-(\w+)\.log$", str(log or ""))
    return f"build/{preset.group(1) if preset else 'student'}"


def asan_command(test, log=None):
    """The command that rebuilds this test's step under AddressSanitizer and runs it;
    for a GPU step's program (the asan preset builds no CUDA code), compute-sanitizer's."""
    build = build_of(log)
    gpu = re.fullmatch(r"(step0[5-7]_\w+)\.(student|solution)\.(correctness|performance)", test["name"])
    if gpu:
        case = case_in_progress(test["output"])
        return (f"compute-sanitizer --tool memcheck {build}/{gpu.group(1)}/{gpu.group(1)}_{gpu.group(3)}_"
                f"{gpu.group(2)}" + (f" --gtest_filter='{case}'" if case else ""))
    if re.search(r"\.(gpu|device_\w+)(\.|$)", test["name"]):  # step08's and step09's GPU programs
        return (f"compute-sanitizer --tool memcheck on its program, on a GPU host (ctest --test-dir {build} "
                f"-R '^{re.escape(test['name'])}$' -V shows the command)")
    step = step_of(test["name"]) or ""
    mpi = ".np" in test["name"] or "mpiexec" in test["output"]
    env = "LAB_CONFIGURE_ARGS=-DLAB_ENABLE_MPI=ON ASAN_OPTIONS=detect_leaks=0 " if mpi else ""
    return f"{env}./lab test --preset asan{' ' + step if step else ''} -R '^{re.escape(test['name'])}$'"


def tsan_place(stack):
    """Where in the step's code a ThreadSanitizer stack is: its first frame in a step's
    folder (not its tests) with a line, named by the step's function around it."""
    frames = [(f.group(1), f.group(2), f.group(3)) for f in TSAN_FRAME.finditer(stack)]
    ours = [f for f in frames if re.search(r"(^|/)step\d\d_\w+/(?!tests/)", f[1])] or frames[:1]
    if not ours:
        return None
    fn, path, line = ours[0]
    # an OpenMP region is an outlined function: name the function that holds it
    named = next((short_function(f[0]) for f in ours if not f[0].startswith(".omp_outlined")), None)
    what = (f"{named}'s parallel region" if named else "a parallel region") if fn.startswith(".omp_outlined") \
        else short_function(fn)
    return f"{short_path(path)}:{line} ({what})"


def tsan_lines(m, out, where):
    """What a ThreadSanitizer report says, in three lines: the race, the two lines, the memory."""
    end = out.find("SUMMARY: ThreadSanitizer", m.end())
    report = out[m.end():end if end > 0 else len(out)]
    accesses = list(TSAN_ACCESS.finditer(report))[:2]
    kind = m.group(1).strip()
    if len(accesses) < 2:
        return [f"ThreadSanitizer: {kind}{where}"]
    said = []
    for a in accesses:
        atomic = "atomic " if a.group(1) and "atomic" in a.group(1).lower() else ""
        said.append(f"{'an earlier ' if a.group(1) and a.group(1).lower().startswith('previous') else 'a '}"
                    f"{atomic}{a.group(2).lower()} ({a.group(3)} bytes) by {a.group(4)}")
    lines = [f"ThreadSanitizer: a {kind}{where}: {said[0]} and {said[1]}, with no barrier or lock between them"]
    places = [tsan_place(a.group(5)) for a in accesses]
    if places[0] and places[0] == places[1]:
        lines.append(f"  both at {places[0]}")
    elif any(places):
        lines.append("  at " + ", and at ".join(p or "(a line outside the step)" for p in places))
    loc = TSAN_LOCATION.search(report)
    if loc and loc.group(1).startswith("stack"):
        lines.append(f"  the memory: a variable on the {loc.group(1)[len('stack of '):]}'s stack that every thread "
                     "shares: one declared before the parallel region (a loop counter? a sum?) and written in it; "
                     "declare it inside the loop")
    elif loc and loc.group(2):
        lines.append(f"  the memory: an array (a heap block of {loc.group(2)} bytes): two threads touch the same "
                     "element: do their shares overlap, or does one read what another writes before a barrier?")
    elif loc and loc.group(3) is not None:
        lines.append(f"  the memory: the global or static variable '{loc.group(3)}', which every thread shares")
    return lines


def race_hint(test, shown, log, case=None):
    """The command that names a race: for a CPU step whose threads disagree with one
    thread, the tsan preset; for a GPU kernel with wrong elements, racecheck."""
    gpu = re.fullmatch(r"(step0[56]_\w+)\.(student|solution)\.(correctness)|(step09_\w+)\.(student|solution)\.(gpu)",
                       test["name"])
    if gpu:
        step, impl, kind = gpu.group(1) or gpu.group(4), gpu.group(2) or gpu.group(5), gpu.group(3) or gpu.group(6)
        return (f"wrong elements from a kernel? a missing __syncthreads() is a race that compute-sanitizer names, "
                f"with its lines: compute-sanitizer --tool racecheck {build_of(log)}/{step}/{step}_{kind}_{impl}"
                + (f" --gtest_filter='{case}'" if case else ""))
    step = step_of(test["name"]) or ""
    if not re.fullmatch(r"step0[1-4]|step09", step) or not any("than one thread" in l for l in shown):
        return ""
    if re.search(r"test-tsan\.log$", str(log or "")):  # run under ThreadSanitizer already, and it named none
        return ("ThreadSanitizer saw no race in this run: look for a tile or block that two threads both compute, "
                "or that none does (their shares of the loop)")
    return f"a race? ./lab test --preset tsan {step} names the two lines that touch the same memory"


def crash_lines(test, log):
    """Lines that say which rank died of what, in which test, and how to find the line (and
    the races step07's CUDA emulation found)."""
    out, lines = test["output"], []
    case = case_in_progress(out)
    where = f" in test {case}" if case else ""

    def died(rank, sig, in_case=None):
        name = SIGNALS.get(sig, f"signal {sig}")
        w = f" in test {in_case}" if in_case else where
        who = f"rank {rank}" if rank is not None else "the program"
        lines.append(f"{who} died with signal {sig} ({name}){w}")

    seen = set()
    for m in RANK_DIED.finditer(out):
        seen.add(int(m.group(1)))
        died(int(m.group(1)), int(m.group(2)), m.group(4))
    for rx in (OMPI_SIGNAL, MPICH_SIGNAL):
        for m in rx.finditer(out):
            if int(m.group(1)) not in seen:
                seen.add(int(m.group(1)))
                died(int(m.group(1)), int(m.group(2)))
    for m in MPI_ABORT.finditer(out):
        lines.append(f"rank {m.group(1)} called MPI_Abort (error code {m.group(2)}){where}")
    for m in OMPI_IMPROPER.finditer(out):
        if int(m.group(1)) not in seen:
            seen.add(int(m.group(1)))
            lines.append(f"rank {m.group(1)} ended before the others without MPI_Finalize (an exit() or a return "
                         f"from main in the middle of the run?){where}")
    # status 1 after GoogleTest's last line: a test failed (its lines say which), nothing ended early
    ran_to_the_end = GTEST_TOTAL.search(out) is not None
    for rx in (OMPI_EXIT, MPICH_EXIT):
        for m in rx.finditer(out):
            if ran_to_the_end and m.group(2) == "1":
                continue
            if int(m.group(1)) not in seen and m.group(2) != "0":
                seen.add(int(m.group(1)))
                lines.append(f"rank {m.group(1)} exited with status {m.group(2)} before the others finished{where}")
    # a deadlock: every rank says where it waits; one that threw first (its error is the cause),
    # then those inside a collective, two in all
    stuck = sorted(WATCHDOG.finditer(out),
                   key=lambda m: (": threw: " not in m.group(4), "done, waiting" in m.group(4), int(m.group(1))))
    for m in stuck[:2]:
        lines.append(f"rank {m.group(1)} made no progress for {m.group(2)} s in test {m.group(3)} "
                     f"(last in {m.group(4)}): a deadlock?")
    if len(stuck) > 2:
        lines.append(f"... and {len(stuck) - 2} more rank{'s' if len(stuck) > 3 else ''} (each in the log)")
    if stuck and ": threw: " in stuck[0].group(4):
        lines.append(f"rank {stuck[0].group(1)} threw in the middle of a phase while other ranks were inside its "
                     "collectives, so they could not agree on the error: fix what it threw first")
    for m in list(MPI_ERROR.finditer(out))[:1]:
        call = m.group(2) or "a collective"
        if call in ("MPI_Wait", "MPI_Waitall", "MPI_Waitany", "MPI_Test", "MPI_Testall"):
            call += ", where a phase's non-blocking collectives (MPI_Ibcast, MPI_Ireduce) complete"
        code = m.group(1) or m.group(3)
        why = " (15: MPI_ERR_TRUNCATE, a message longer than its receive buffer: do the ranks agree on the " \
              "block's size and the communicator?)" if code in ("15", "MPI_ERR_TRUNCATE") \
            else f" (error {code})" if code else ""
        lines.append(f"the run ended in an MPI error in {call}{why}{where}")
    for m in list(ASAN.finditer(out))[:1]:  # a run under --preset asan: the access, and the lines of the step
        what = re.sub(r" at pc 0x[0-9a-f]+ bp 0x[0-9a-f]+ sp 0x[0-9a-f]+$", "", m.group(1).strip())
        access = ASAN_ACCESS.match(out, m.end())
        if access:
            what += f" ({access.group(1)})"
        lines.append(f"AddressSanitizer: {what}{where}")
        end = out.find("\n\n", m.end())  # the stack of the access ends at a blank line (the allocation's follows)
        frames = [(f.group(1), f.group(2)) for f in ASAN_FRAME.finditer(out[m.end():end if end > 0 else len(out)])]
        ours = [(fn, at) for fn, at in frames if re.search(r"(^|/)step\d\d_\w+/(?!tests/)", at)] or frames[:1]
        if ours:
            chain = [f"{short_path(at)} ({short_function(fn)})" for fn, at in ours[:3]]
            lines.append("  at " + ", called from ".join(chain))
    for m in list(UBSAN.finditer(out))[:1]:  # --preset asan's other sanitizer
        lines.append(f"UndefinedBehaviorSanitizer: {m.group(3).strip()} at {short_path(m.group(1))}:{m.group(2)}{where}")
    for m in list(TSAN.finditer(out))[:1]:  # --preset tsan: which lines of the step, and what memory
        lines += tsan_lines(m, out, where)
    phases = list(dict.fromkeys(PHASE.findall(out)))  # step08: where the data first went wrong
    lines += [f"the first phase that went wrong: {ph}" for ph in phases[:1]]
    races = list(dict.fromkeys(RACE.findall(out)))  # step07's emulation: the missing ordering, once each
    lines += [f"a race between the streams: {r}" for r in races[:2]]
    ending = ctest_ending(test["name"], log)
    if ending and ending[0] == "signal" and not lines:
        died(None, ending[1])
    for m in list(TERMINATE.finditer(out))[:1]:  # (SIGABRT follows)
        lines.append(f"an exception ({m.group(1)}: {m.group(2).strip()[:200]}) reached std::terminate{where}: "
                     "it was thrown where nothing can catch it, most often inside an OpenMP parallel region "
                     "(catch it inside the region and rethrow after it, as step04's given error.run does)")
    for m in list(HEAP.finditer(out))[:1]:  # glibc's malloc stopped the program (SIGABRT)
        lines.append(f"glibc found its heap broken ('{m.group(1).strip()}'): a write outside an allocation, "
                     "as past the end of a matrix, in this test or one before it")
    if ending and ending[0] == "timeout":
        lines.append(f"timed out after {ending[1]:.0f} s{where}")
    timing = KERNEL_TIMING.findall(out)
    if timing and timing[-1][0] and any("died with signal" in l or l.startswith("timed out") for l in lines):
        isa = timing[-1][0]
        lines.append(f"it ended while the kernel choice timed your {isa} micro-kernel (kernel_{isa}.cpp), which the "
                     f"program's first product does, whatever the test: that kernel crashed or never returned; its own "
                     f"test (Step04MicroKernel.KeepsItsContract/{isa}) calls it directly")
    if any("died with signal" in l for l in lines):
        lines.append(f"find the line: {asan_command(test, log)}")
    return lines


# step04's kernel choice under the lab's tests (dispatch.cpp): "lab: timing the avx2 micro-kernel for the kernel
# choice" before each kernel's first timing, "lab: kernel choice made: avx2" after; the last is (isa, "") or ("", isa)
KERNEL_TIMING = re.compile(r"^lab: (?:timing the (\w+) micro-kernel for the kernel choice|kernel choice made: (\w+))$",
                           re.M)


FAILURE_AT = re.compile(r"(?:^|\s|/)([\w.+-]+):(\d+): Failure\s*$")
# GoogleTest's own lines before the test's message: an EXPECT_TRUE's "Value of /
# Actual / Expected", an EXPECT_EQ's "Expected equality ..." and its indented operands
TRACE_LINE = re.compile(r"^\S+:\d+: (.+)$")  # a GoogleTest trace line: file:line: what SCOPED_TRACE said
BOOLEAN_NOISE = re.compile(r"^(Value of: .*|  Actual: (true|false)|Expected: (true|false))$")


RUN_LINE = re.compile(r"^\[ RUN      \] (\S+)")
# the tests of one piece of a step: step04's and step09's packing and micro-kernels
PIECE_TEST = re.compile(r"(?:Pack|MicroKernel)\w*\.")


def first_failure(output, most=4):
    """The first GoogleTest failure in a program's output: (file:line, its first
    `most` lines), or None. The test's own message is shown without GoogleTest's
    lines about the operands, unless there is no message; it ends at the next
    case, failure or trace."""
    lines = output.splitlines()
    # The first failure of a test of one piece (the packing, a micro-kernel)
    # where there is one: it names the piece, where a whole product only shows
    # what the broken piece did to C. Else the first failure.
    test, at = "", []
    for i, line in enumerate(lines):
        run = RUN_LINE.match(line)
        if run:
            test = run.group(1)
        elif FAILURE_AT.search(line):
            at.append((i, bool(PIECE_TEST.search(test))))
    order = [i for i, piece in at if piece] + [i for i, piece in at if not piece]
    for i in order[:1]:
        line = lines[i]
        m = FAILURE_AT.search(line)
        body, trace, j = [], [], i + 1
        while j < len(lines) and not (lines[j].startswith("[") or FAILURE_AT.search(lines[j])
                                      or lines[j].startswith("Google Test trace:")):
            if lines[j].strip():
                body.append(lines[j].rstrip())
            j += 1
        if j < len(lines) and lines[j].startswith("Google Test trace:"):
            # the case's own words (SCOPED_TRACE: the sizes, the tiles, the seed), without their file:line
            for l in lines[j + 1:j + 4]:
                t = TRACE_LINE.match(l)
                if not t or FAILURE_AT.search(l):
                    break
                trace.append(t.group(1).strip())
        message = [l for l in body if not BOOLEAN_NOISE.match(l)]
        if message and message[0] == "Expected equality of these values:":
            message, operands = message[1:], []
            while message and message[0].startswith(" "):  # each operand, and its value where it is no literal
                line = message.pop(0).strip()
                if line.startswith("Which is:") and operands:
                    operands[-1] += " = " + line[len("Which is:"):].strip()
                elif not line.startswith("Which is:"):
                    operands.append(line)
            if message and operands:  # the test's message, then what it compared, on one line
                message.insert(1, "compared: " + " and ".join(operands))
        shown = message or body
        at = next((n for n, l in enumerate(shown) if l.startswith("block map (")), None)
        # the block map whole (at most 16 lines): where in C the wrong elements are is the hint
        shown = shown[:min(at, most)] + shown[at:at + 17] if at is not None else shown[:most]
        def cut(line, most=160):
            line = line.strip()
            return line if len(line) <= most else line[:most - 3] + "..."
        # each SCOPED_TRACE on a line of its own, longer: one may be the hint (which kernel, what rule)
        return f"{m.group(1)}:{m.group(2)}", [cut(l) for l in shown] + [cut("during: " + t, 240) for t in trace]
    return None


# a LAB_TODO call's message: one or more adjacent string literals, over lines
TODO_CALL = re.compile(r'^\s*LAB_TODO\(\s*((?:"(?:[^"\\\n]|\\.)*"\s*)+)\)', re.M)


# a line of `calls --warn`: the file and line, its step, what it calls
REFUSED_LINE = re.compile(r"warning: ((step\d\d)\w*/[^:\s]+:\d+): (.+?): \./lab grade gives")
# a speed test's result line: the CPU steps' (lab::speed::speedup) "n = 1024, 1 thread(s): transposed
# dot 18.65, step03 35.55 GFLOP/s (1.91x)", the GPU steps' "  n=4096: simt 71% of the CUDA-core peak"
SPEED_LINE = re.compile(r"^(n = \d+.*[GT]FLOP/s \(\d+(?:\.\d+)?x\)|\s*n=\d+: .*\d(?:%|x).*)\s*$", re.M)


def skip_core(why):
    """A whole program's skip reason without the words that name the program ("the
    student tests were skipped here: ", "step08 device tests: "): what many share."""
    return re.sub(r"^(the student tests were skipped here: )?(step\d\d[^:]*: )?", "", why)


# Student files of one architecture's instruction set (steps 04 and 09): a
# build for another compiles them empty, so their TODOs are not this
# machine's to do (an Arm student writes kernel_neon.cpp, an x86 one the AVX kernels).
ARCH_FILES = {"kernel_neon.cpp": ("aarch64", "arm64"),
              "kernel_avx2.cpp": ("x86_64", "amd64"), "kernel_avx512.cpp": ("x86_64", "amd64")}


def built_here(rel, machine=None):
    """Whether a build on this machine (or on `machine`, platform.machine()'s
    spelling) compiles the student file `rel`'s TODOs."""
    arches = ARCH_FILES.get(pathlib.PurePosixPath(rel).name)
    return arches is None or (machine or platform.machine()).lower() in arches


def todos_left(folder, root=pathlib.Path(__file__).resolve().parents[2], machine=None):
    """The LAB_TODOs still in a step's student files that a build here compiles:
    [(file, its message)]."""
    if not (root / STUDENT_FILES).is_file():
        return []
    left = []
    for rel in student_files(root):
        if rel.startswith(folder + "/") and built_here(rel, machine):
            try:
                text = (root / rel).read_text(errors="replace")
            except OSError:
                continue
            for call in TODO_CALL.finditer(text):  # the message whole: adjacent literals joined
                left.append((rel, "".join(re.findall(r'"((?:[^"\\\n]|\\.)*)"', call.group(1)))))
    return left


def skipped_student_state(name, root=pathlib.Path(__file__).resolve().parents[2]):
    """Where a student's tests could not run here (a GPU step without a GPU): what
    can still be said, read from the step's files: it compiled (the tests were
    built), and the TODOs still in them, so that a finished kernel and an
    untouched one no longer read alike."""
    m = re.fullmatch(r"(step\d\d_[a-z0-9_]+?)\.student\.(correctness|gpu)", name)
    if not m or not (root / STUDENT_FILES).is_file():
        return []
    # a step's GPU tests (step09's) run its CUDA files; its CPU tests say what is left in the others
    todos = [f"{rel}: {what}" for rel, what in todos_left(m.group(1), root)
             if m.group(2) == "correctness" or rel.endswith((".cu", ".cuh"))]
    if todos:
        most = 6
        more = [f"  ... and {len(todos) - most} more (LAB_TODO in the step's files)"] if len(todos) > most else []
        return ["compiled; the TODOs still in its files:"] + [f"  {t}" for t in todos[:most]] + more
    return ["compiled, and no TODO is left in its files; its tests run on a GPU host (or ./lab grade there)"]


def cmd_summary(args):
    """What ./lab test prints: one line a test, the failing cases, the TODOs left."""
    tests = read_junit(args.junit, args.log)
    count = {"passed": 0, "failed": 0, "skipped": 0, "waiting": 0}
    todos, waiting = [], set()
    # the steps whose files call what computes the product for them (`calls --warn`'s
    # lines): their tests may pass, but the grade gives the step nothing
    refused = {}
    for m in REFUSED_LINE.finditer(args.refused or ""):
        refused.setdefault(m.group(2), f"{m.group(1)}: {m.group(3)}")
    for t in tests.values():
        if t["result"] == "passed" and step_of(t["name"]) in refused:
            t["result"], t["refused"] = "failed", refused[step_of(t["name"])]
            count["failed"] += 1
            continue
        hit = []
        # a test that passed names no TODO (the skeleton check passes by finding them)
        for m in re.findall(r"not implemented yet: ([^\n\"]*)", t["output"]) if t["result"] == "failed" else []:
            m = m.strip().rstrip(".")
            if m and m not in hit:
                hit.append(m)
        t["todos"] = hit
        t["waits"] = waits_for(t, hit) if t["result"] == "failed" else set()
        if t["waits"]:
            count["waiting"] += 1
            waiting |= t["waits"]
        else:
            count[t["result"]] += 1
            todos += [m for m in hit if m not in todos]
    shown_first = {}  # the first failures printed whole: (where, lines) -> the test
    # Programs skipped whole for one reason (no GPU: some thirty of them) read as one
    # line, with how many of each step's; the log names each.
    alike = {}
    for t in tests.values():
        if t["result"] == "skipped" and skip_marker(t["output"]) and not skipped_student_state(t["name"]):
            alike.setdefault(skip_core(skip_marker(t["output"])), []).append(t["name"])
    alike = {why: names for why, names in alike.items() if len(names) >= 3}
    for t in tests.values():
        # cases that could not run here, in a program whose other cases ran
        skips = skipped_here([c for c, s in t["cases"].items() if s == "skipped"], t["skip_reasons"])
        if t.get("refused"):
            print(f"  FAIL {t['name']}: its tests passed, but the grade gives {step_of(t['name'])} no points: "
                  f"{t['refused']}")
            continue
        if t["result"] == "passed":
            if skips:
                print(f"  PASS {t['name']}: {skipped_text(skips)}")
            elif ".performance" in t["name"]:  # the margin: how far above its bar the speed test passed
                for line in SPEED_LINE.findall(t["output"]):
                    print(f"  PASS {t['name']}: {line.strip()}")
            continue
        if t["result"] == "skipped":
            why = skip_marker(t["output"])
            names = alike.get(skip_core(why)) if why else None
            if names and t["name"] in names:
                if t["name"] == names[0]:
                    steps = collections.Counter(n.split(".")[0] for n in names)
                    print(f"  SKIP {len(names)} tests: {skip_core(why)}\n         "
                          + ", ".join(f"{step} ({n})" for step, n in steps.items()))
                continue
            print(f"  SKIP {t['name']}" + (f": {why}" if why else ""))
            for line in skipped_student_state(t["name"]):
                print(f"         {line}")
            continue
        if t["waits"]:
            print(f"  WAIT {t['name']}: needs {', '.join(sorted(t['waits']))}: {t['todos'][0]}")
            continue
        lost = [c for c, s in t["cases"].items() if s == "failed"]
        why = f" ({t['why']})" if t["why"] else ""
        states = list(t["cases"].values())
        # GoogleTest's own count where it printed one: the per-case lines of a long output may be cut
        totals = gtest_totals(t["output"])
        started, passed, skipped = totals or (len(states), states.count("passed"), states.count("skipped"))
        ran = started - skipped
        gone = lost_context(t["output"])
        if gone:
            # one loss, not hundreds of bugs: the cases that ran, then the loss
            print(f"  FAIL {t['name']}{why}: {ran - passed - gone['not_run']} of {ran - gone['not_run']} cases run "
                  f"failed; then {lost_context_text(gone)} (counted as failed)")
            if gone["memcheck"]:
                print(f"         fix that case first; find the bad access with: {gone['memcheck']}")
            if gone["culprit"] in t["cases"]:
                names = list(t["cases"])
                lost = [c for c in names[:names.index(gone["culprit"]) + 1] if t["cases"][c] == "failed"]
        elif totals or t["cases"]:
            # a program that ended in its middle (a crash, a deadlock, MPI_Abort): how much did not run
            planned = re.search(r"\[==========\] Running (\d+) tests? from", t["output"])
            cut = f"; it ended in its case {started} of {planned.group(1)}: the others did not run" \
                if not totals and planned and int(planned.group(1)) > started else ""
            print(f"  FAIL {t['name']}{why}: {ran - passed} of {ran} cases failed{cut}")
        else:
            print(f"  FAIL {t['name']}{why}")
        for line in crash_lines(t, args.log):
            print(f"         {line}")
        # the first failed case of each fixture first (a kernel's own test, the
        # second function's), then the rest in order
        fixtures = {}
        for c in lost:
            fixtures.setdefault(c.split(".")[0].split("/")[-1], c)  # (EveryIsa/Step04MicroKernel.X/avx512)
        lost = list(fixtures.values()) + [c for c in lost if c not in fixtures.values()]
        for c in lost[:args.cases]:
            print(f"         {c}")
        if len(lost) > args.cases:
            print(f"         ... and {len(lost) - args.cases} more")
        if skips:
            print(f"         and {skipped_text(skips)}")
        first = first_failure(t["output"]) if lost and not t["todos"] else None
        if first and first[1]:  # what went wrong, on the first screen (a TODO says so itself)
            key = (first[0], tuple(l for l in first[1] if not l.startswith("during: ")))  # (the seed differs)
            # the same program at another rank count (step08's .np2 ... .np8) failing at the same
            # line: once is enough, even where its sizes (so its block map) differ
            ranks = (first[0], re.sub(r"\.np\d+$", "", t["name"])) if re.search(r"\.np\d+$", t["name"]) else None
            again = shown_first.get(key) or (shown_first.get(ranks) if ranks else None)
            if ranks and not again:
                shown_first[ranks] = t["name"]
            if again:  # (step08 at 2, 3, 4, 6 and 8 ranks: once is enough)
                print(f"         the first failure ({first[0]}): the same as in {again}")
            else:
                shown_first[key] = t["name"]
                print(f"         the first failure ({first[0]}):")
                for line in first[1]:
                    print(f"         | {line}")
                hint = race_hint(t, first[1], args.log, lost[0] if lost else None)
                if hint:
                    print(f"         {hint}")
        if not t["cases"]:
            for line in t["output"].strip().splitlines()[-5:]:
                print(f"         | {line}")
    for m in todos[:args.cases]:
        print(f"  not implemented yet: {m}")
    if len(todos) > args.cases:
        print(f"  ... and {len(todos) - args.cases} more TODOs")
    # the TODOs a test did not reach (it stopped at the first): still in the failed steps' files
    student = (re.match(r"(step\d\d_[a-z0-9_]+?)\.student\.", t["name"]) for t in tests.values()
               if t["result"] == "failed")
    failed = sorted({m.group(1) for m in student if m})
    later = [(rel, what) for folder in failed for rel, what in todos_left(folder)
             if not any(what.split(":")[0] in m for m in todos)]
    if todos and later:
        print("  and still in your files: " + "; ".join(f"{what.split(':')[0]} ({rel})" for rel, what in later[:4])
              + (f"; ... and {len(later) - 4} more" if len(later) > 4 else ""))
    tail = ""
    if count["waiting"]:
        tail = f"; {count['waiting']} more wait for {', '.join(sorted(waiting))} (its TODOs, not this step's)"
    print(f"  {count['passed']} passed, {count['failed']} failed, {count['skipped']} skipped{tail}")
    return 1 if count["failed"] or count["waiting"] else 0


def student_files(root):
    path = pathlib.Path(root) / STUDENT_FILES
    try:
        return [l.strip() for l in path.read_text().splitlines() if l.strip() and not l.startswith("#")]
    except OSError as e:
        fail(f"cannot read the list of the student's files: {e}")


def source_files(root):
    """The files of the tree to grade in: a release's files (tracked, no solutions/)."""
    root = pathlib.Path(root)
    if (root / "solutions").is_dir() and (root / ".git").exists():
        # (safe.directory: the lab's own tree, which may belong to another account under sudo)
        out = subprocess.run(["git", "-c", f"safe.directory={root}", "-C", str(root), "ls-files", "-z"],
                             capture_output=True, check=True).stdout
        files = [f for f in out.decode().split("\0") if f]
        return [f for f in files if not f.startswith(("solutions/", ".ci/"))]
    skip = {"build", "results", ".git", ".lab", "setup.sh", "run_autograder"}  # the last two: Gradescope's
    files = []
    for dirpath, dirnames, names in os.walk(root):
        dirnames[:] = [d for d in dirnames if not (pathlib.Path(dirpath) == root and d in skip) and d != "__pycache__"]
        files += [str((pathlib.Path(dirpath) / n).relative_to(root)) for n in names
                  if not (pathlib.Path(dirpath) == root and n in skip)]
    return sorted(files)


# What a submission may hold that is never graded, at any depth: the lab's own
# state and build outputs (a stale build/ may hold an old copy of a student file)
NEVER_GRADED = (".lab", "build", "results", ".git", "solutions", "__pycache__")
MAX_FILE = 1 << 20  # a student file over 1 MiB is refused
ROOT_MARKERS = ("lab", STUDENT_FILES)


def pristine_of(root, rel):
    """The untouched skeleton of a student file: a release keeps them in
    common/skeletons/ (older releases in .lab/skeletons/); the instructor tree's
    skeleton is the file itself."""
    root = pathlib.Path(root)
    for kept in (root / "common" / "skeletons" / rel, root / ".lab" / "skeletons" / rel):
        if kept.is_file():
            return kept.read_bytes()
    if not (root / "solutions").is_dir():
        fail(f"the untouched skeleton of {rel} is missing (common/skeletons/{rel}): "
             "a student tree keeps them there; take them from the release")
    return (root / rel).read_bytes()


def is_lab_root(d):
    return all(not (d / m).is_symlink() for m in ROOT_MARKERS) and any((d / m).is_file() for m in ROOT_MARKERS)


def real_dirs(d):
    try:
        return sorted(c for c in d.iterdir() if c.is_dir() and not c.is_symlink())
    except OSError:
        return []


def find_lab_root(sub, wanted):
    """-> (the folder of the submission that stands for the lab's root, why)."""
    tops = {pathlib.PurePosixPath(w).parts[0] for w in wanted}
    if is_lab_root(sub):
        return sub, "the submission's own folder"
    # the shallowest folder holding `lab` or common/student_files.txt (a repository
    # zipped with its parent, a release inside a course folder)
    level = [d for d in real_dirs(sub) if d.name not in NEVER_GRADED]
    for _ in range(4):
        hits = [d for d in level if is_lab_root(d)]
        if hits:
            how = "the folder holding the lab's `lab` script"
            if len(hits) > 1:
                how += f" (the first of {len(hits)} such folders)"
            return hits[0], how
        level = [c for d in level for c in real_dirs(d) if c.name not in NEVER_GRADED]
    # a single top-level folder (a GitHub zip's gemm-lab-main/), however deep
    top, hops = sub, 0
    while True:
        entries = [e for e in top.iterdir() if e.name not in NEVER_GRADED and e.name != "__MACOSX"]
        if len(entries) == 1 and entries[0].is_dir() and not entries[0].is_symlink() and entries[0].name not in tops:
            top, hops = entries[0], hops + 1
        else:
            break
    if hops:
        return top, "the submission's single top-level folder"
    return sub, "the submission's own folder"


def read_regular(path):
    """The bytes of a regular file, never through a symbolic link."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as f:
        return f.read(MAX_FILE + 1)


def size_text(n):
    return f"{n} B" if n < 1024 else f"{n / 1024:.1f} KiB" if n < 1 << 20 else f"{n / (1 << 20):.1f} MiB"


def same_text(a, b):
    """The same source whatever the line endings and a byte-order mark."""
    norm = lambda t: (t[3:] if t.startswith(b"\xef\xbb\xbf") else t).replace(b"\r\n", b"\n")
    return norm(a) == norm(b)


def near_miss(name, by_base):
    """The student file a name almost is (another case, a browser's " (1)" or
    "-1" copy suffix), or None."""
    bare = re.sub(r"(?:\s*\(\d+\)|-\d+|\s+copy)(?=\.[^.]+$)", "", name).lower()
    hits = [ws[0] for base, ws in by_base.items() if base.lower() == bare and len(ws) == 1 and base != name]
    return hits[0] if len(hits) == 1 else None


def by_its_lines(body, candidates, lab):
    """Which of several student files of one name a flat upload is (step04's and
    step09's kernel_avx2.cpp): the one whose skeleton's own lines, those the
    others lack, it keeps most of, by three to one at least; else None."""
    def lines(b):
        return {l.strip() for l in b.decode("utf-8", "replace").splitlines() if len(l.strip()) > 3}
    mine = lines(body)
    skel = {w: lines(pristine_of(lab, w)) for w in candidates}
    kept = {w: len(mine & (skel[w] - set().union(*(skel[o] for o in candidates if o != w)))) for w in candidates}
    best = sorted(candidates, key=lambda w: -kept[w])
    return best[0] if kept[best[0]] >= 3 and 3 * kept[best[1]] <= kept[best[0]] else None


def pick_submission(sub, lab, wanted, in_place=False):
    """Choose each student file of the submission SUB by its path under the
    submission's lab root. -> ({student path: bytes}, report dict)."""
    sub, lab = pathlib.Path(sub), pathlib.Path(lab)
    if sub.is_symlink() or not sub.is_dir():
        fail(f"--submission {sub}: not a folder")
    root, root_how = (sub, "this tree") if in_place else find_lab_root(sub, wanted)
    shown = lambda p: (p.relative_to(sub).as_posix() or ".") if p != sub else "."
    by_base = {}
    for w in wanted:
        by_base.setdefault(pathlib.PurePosixPath(w).name, []).append(w)
    by_path, by_name, notes, ignored = {}, {}, {}, []
    same_as_lab = 0
    for dirpath, dirnames, names in os.walk(root, followlinks=False):
        here = pathlib.Path(dirpath)
        keep = []
        for d in sorted(dirnames):
            p = here / d
            if p.is_symlink():
                ignored.append(f"{shown(p)}/: a symbolic link, not followed")
            elif d in NEVER_GRADED and (d != "results" or here == root):  # (the lab keeps common/docs/results)
                count = sum(len(f) for _, _, f in os.walk(p))
                ignored.append(f"{shown(p)}/: never graded ({count} files)")
            else:
                keep.append(d)
        dirnames[:] = keep
        for n in sorted(names):
            p = here / n
            rel = p.relative_to(root).as_posix()
            target = rel if rel in wanted else None
            flat = target is None and "/" not in rel and len(by_base.get(rel, [])) >= 1
            if p.is_symlink():
                what = f" (named like the student file {target})" if target else ""
                ignored.append(f"{shown(p)}: a symbolic link, not followed{what}")
                if target:
                    notes.setdefault(target, []).append(f"`{shown(p)}` is a symbolic link: not graded")
                continue
            if target is None and not flat:
                if in_place:
                    continue
                meant = near_miss(n, by_base)
                if meant:
                    ignored.append(f"{shown(p)}: not a student file's name: did you mean {meant}? (not graded)")
                    notes.setdefault(meant, []).append(f"`{shown(p)}` is not graded: did you mean `{meant}`?")
                    continue
                mine = lab / rel
                try:
                    if mine.is_file() and not mine.is_symlink() and p.stat().st_size == mine.stat().st_size \
                            and read_regular(p) == mine.read_bytes():
                        same_as_lab += 1
                        continue
                except OSError:
                    pass
                if n in by_base and not mine.is_file():  # a student file's name at another path
                    where = " or ".join(by_base[n])
                    ignored.append(f"{shown(p)}: named like the student file {where}, but not at its path: not "
                                   "graded (hand in the lab's folder with each file at its path, or the files "
                                   "alone, flat)")
                    for w in by_base[n]:
                        notes.setdefault(w, []).append(f"`{shown(p)}` has this file's name but not its path: "
                                                       "not graded")
                    continue
                ignored.append(f"{shown(p)}: not a student file" +
                               (" (differs from the lab's own copy, which is used)" if mine.is_file()
                                else " (not part of the lab)"))
                continue
            try:
                size = p.stat().st_size
                body = read_regular(p) if size <= MAX_FILE else None
            except OSError as e:
                ignored.append(f"{shown(p)}: unreadable ({e.strerror})")
                continue
            if body is None or len(body) > MAX_FILE:
                ignored.append(f"{shown(p)}: refused, {size_text(size)} is over the {size_text(MAX_FILE)} limit")
                notes.setdefault(target or by_base[rel][0], []).append(
                    f"`{shown(p)}` refused: {size_text(size)}, over the {size_text(MAX_FILE)} limit")
                continue
            if target:
                by_path[target] = (shown(p), body)
            elif len(by_base[rel]) == 1:
                by_name[by_base[rel][0]] = (shown(p), body)
            else:  # a name of several steps' files (kernel_avx2.cpp: step04 and step09)
                meant = by_its_lines(body, by_base[rel], lab)
                if meant:
                    by_name[meant] = (shown(p), body)
                    notes.setdefault(meant, []).append(
                        f"`{shown(p)}`: a name of {len(by_base[rel])} steps' files, taken as this one by its lines")
                    continue
                both = " and ".join(by_base[rel])
                ignored.append(f"{shown(p)}: not graded: the name of {both}, and its lines do not say which; "
                               "hand in the lab's folder (or a zip of it) so that each file has its path")
                for w in by_base[rel]:
                    notes.setdefault(w, []).append(f"`{shown(p)}` is not graded: its name is also another step's file")
    # files of the submission outside its lab root are not graded
    if root != sub:
        outside = [p for p in sub.rglob("*") if (p.is_file() or p.is_symlink()) and root not in p.parents]
        for p in sorted(outside)[:50]:
            ignored.append(f"{shown(p)}: outside the lab's folder ({shown(root)}/)")
        if len(outside) > 50:
            ignored.append(f"... and {len(outside) - 50} more files outside the lab's folder")
    chosen, rows = {}, []
    for w in wanted:
        pristine = pristine_of(lab, w)
        path_hit, name_hit = by_path.get(w), by_name.get(w)
        hit, how = (path_hit, "its own path") if path_hit else (name_hit, "its name (a flat upload)") \
            if name_hit else (None, "")
        note = list(notes.get(w, []))
        if path_hit and name_hit:
            if path_hit[1] == name_hit[1]:
                note.append(f"`{name_hit[0]}` has the same contents")
            else:
                note.append(f"`{name_hit[0]}` differs and was not graded: the file at the student path wins")
                ignored.append(f"{name_hit[0]}: a second copy of {w} with other contents (not graded)")
        if hit:
            chosen[w] = hit[1]
            rows.append({"file": w, "from": hit[0], "how": how, "size": len(hit[1]),
                         "unchanged": same_text(hit[1], pristine), "notes": note,
                         "sha256": hashlib.sha256(hit[1]).hexdigest()})
        else:
            rows.append({"file": w, "from": None, "how": "", "size": len(pristine), "unchanged": True,
                         "notes": note, "sha256": hashlib.sha256(pristine).hexdigest()})
    if same_as_lab:
        ignored.append(f"{same_as_lab} other files identical to the lab's own (not graded)")
    return chosen, {"root": shown(root), "root_how": root_how, "files": rows, "ignored": ignored}


MAX_ENTRIES, MAX_UNPACKED = 20000, 100 << 20  # an archive's limits
ARCHIVES = (".zip", ".tar.gz", ".tgz")


def unpack(archive, dest):
    """Unpack a .zip or .tar.gz submission into DEST (a new folder): plain files
    and folders only, each inside DEST, at most MAX_ENTRIES entries and
    MAX_UNPACKED bytes (counted as written, whatever the archive claims).
    Anything else stops the grade with one line saying what."""
    import stat
    import tarfile
    import zipfile
    archive, dest = pathlib.Path(archive), pathlib.Path(dest)
    who = f"--submission {archive.name}"

    def place(name):
        rel = pathlib.PurePosixPath(name.replace("\\", "/"))
        if rel.is_absolute() or ".." in rel.parts or re.match(r"^[A-Za-z]:", name):
            fail(f"{who}: the entry '{name}' leaves the folder it unpacks into (.. or an absolute path): refused")
        return dest.joinpath(*[p for p in rel.parts if p not in ("", ".")])

    written = 0

    def copy(src, to):
        nonlocal written
        to.parent.mkdir(parents=True, exist_ok=True)
        with open(to, "wb") as out:
            while chunk := src.read(1 << 16):
                written += len(chunk)
                if written > MAX_UNPACKED:
                    fail(f"{who}: more than {MAX_UNPACKED >> 20} MB unpacked: refused")
                out.write(chunk)

    dest.mkdir(parents=True)
    try:
        if archive.name.lower().endswith(".zip"):
            with zipfile.ZipFile(archive) as z:
                infos = z.infolist()
                if len(infos) > MAX_ENTRIES:
                    fail(f"{who}: more than {MAX_ENTRIES} entries ({len(infos)}): refused")
                if sum(i.file_size for i in infos) > MAX_UNPACKED:
                    fail(f"{who}: more than {MAX_UNPACKED >> 20} MB unpacked: refused")
                for i in infos:
                    to = place(i.filename)
                    kind = stat.S_IFMT(i.external_attr >> 16)  # 0: the archiver kept no type (a plain file)
                    if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
                        fail(f"{who}: the entry '{i.filename}' is a link or a special file: refused")
                    if i.is_dir():
                        to.mkdir(parents=True, exist_ok=True)
                    else:
                        with z.open(i) as src:
                            copy(src, to)
        else:
            with tarfile.open(archive, "r:gz") as t:
                for count, m in enumerate(t, 1):
                    if count > MAX_ENTRIES:
                        fail(f"{who}: more than {MAX_ENTRIES} entries: refused")
                    to = place(m.name)
                    if m.isdir():
                        to.mkdir(parents=True, exist_ok=True)
                    elif m.isfile():
                        copy(t.extractfile(m), to)
                    else:
                        fail(f"{who}: the entry '{m.name}' is a link or a special file: refused")
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError) as e:
        fail(f"{who}: not a readable {'zip' if archive.name.lower().endswith('.zip') else 'tar.gz'} archive ({e})")


def cmd_pick(args):
    """Choose the student's files of a submission (a folder, or a .zip/.tar.gz
    unpacked first into a fresh folder beside STAGED): write them at their
    paths under STAGED and say in SOURCES where each came from."""
    lab = pathlib.Path(args.lab).resolve()
    wanted = student_files(lab)
    submission = pathlib.Path(args.submission)
    if submission.is_file() and not submission.is_symlink():
        if not submission.name.lower().endswith(ARCHIVES):
            fail(f"--submission {submission}: a file, but not a .zip or .tar.gz archive")
        unpacked = pathlib.Path(args.staged).parent / "unpacked"
        if unpacked.exists():
            shutil.rmtree(unpacked)
        unpack(submission, unpacked)
        submission = unpacked
    chosen, info = pick_submission(submission, lab, wanted, args.in_place)
    if submission != pathlib.Path(args.submission):
        info["root_how"] = f"{info['root_how']}, unpacked from `{pathlib.Path(args.submission).name}`"
    staged = pathlib.Path(args.staged)
    if staged.exists():
        shutil.rmtree(staged)
    for rel, body in chosen.items():
        (staged / rel).parent.mkdir(parents=True, exist_ok=True)
        (staged / rel).write_bytes(body)
    staged.mkdir(parents=True, exist_ok=True)
    write_whole(args.sources, json.dumps(info, indent=1))
    for row in info["files"]:
        if row["from"] is None:
            print(f"grade: {row['file']}: not in the submission, graded as the untouched skeleton", file=sys.stderr)
    return 0


def write_whole(path, text):
    """Write a result file whole or not at all."""
    path = pathlib.Path(path)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(text)
    os.replace(tmp, path)


def safe_target(tree, rel):
    """TREE/rel, with no symbolic link on the way (a link left in the tree by an
    earlier run is removed, never written through)."""
    p = pathlib.Path(tree)
    for part in pathlib.PurePosixPath(rel).parts:
        p = p / part
        if p.is_symlink():
            p.unlink()
    return p


def cmd_prepare(args):
    """Write TREE from ROOT's files, the student's files from STAGED (written by
    `pick`) or else the untouched skeletons. Unchanged files keep their time
    stamps, so the next build is incremental. Prints the stamp of the untouched tree."""
    root, tree = pathlib.Path(args.root).resolve(), pathlib.Path(args.tree)
    wanted = student_files(root)
    files = source_files(root)
    missing = [w for w in wanted if w not in files]
    if missing:
        fail(f"{STUDENT_FILES} names files this tree lacks: {', '.join(missing)}")
    staged = pathlib.Path(args.staged) if args.staged else None
    stamp = hashlib.sha256()
    for rel in files:
        src = root / rel
        pristine = pristine_of(root, rel) if rel in wanted else src.read_bytes()
        stamp.update(rel.encode() + b"\0" + hashlib.sha256(pristine).digest())
        if args.dry:
            continue
        mine = staged / rel if staged is not None and rel in wanted else None
        body = mine.read_bytes() if mine is not None and mine.is_file() else pristine
        dst = safe_target(tree, rel)
        if dst.is_file() and dst.read_bytes() == body:
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        if dst.exists() and not dst.is_file():
            shutil.rmtree(dst)
        dst.write_bytes(body)
        shutil.copymode(src, dst)
    print(stamp.hexdigest())
    return 0


@functools.lru_cache(maxsize=None)
def real_path(path):
    """os.path.realpath, once per path: a build's dependency lists name the same
    headers tens of thousands of times (read while no code of the build runs, so
    nothing changes under them)."""
    return os.path.realpath(path)


def dep_path(build, dep):
    """A dependency's real path (Ninja lists some relative to the build folder)."""
    return real_path(dep if os.path.isabs(dep) else os.path.join(build, dep))


def tool_pool():
    """Threads for the binutils runs over a build's objects (nm, objdump), one a core up to 8."""
    return concurrent.futures.ThreadPoolExecutor(max_workers=max(1, min(8, os.cpu_count() or 1)))


def object_deps(build):
    """{object file: [the files the compiler read for it]} of a build, from the
    compiler's own dependency lists: Ninja's log of them (`ninja -t deps`), or
    the make generator's .d files. Read before any code of the build runs."""
    build = pathlib.Path(build)
    deps = {}
    if (build / "build.ninja").is_file():
        ninja = None
        cache = build / "CMakeCache.txt"
        if cache.is_file():
            m = re.search(r"^CMAKE_MAKE_PROGRAM:\w+=(.+)$", cache.read_text(errors="replace"), re.M)
            ninja = m.group(1).strip() if m else None
        p = subprocess.run([ninja or shutil.which("ninja") or "ninja", "-C", str(build), "-t", "deps"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        current = None
        for line in p.stdout.splitlines():
            if line and not line[0].isspace():
                current = line.split(": #deps")[0]
                deps[current] = []
            elif line.strip() and current is not None:
                deps[current].append(line.strip())
        return deps
    for d in build.rglob("*.o.d"):  # make: "obj: dep dep \\" lines
        text = d.read_text(errors="replace").replace("\\\n", " ")
        for rule in text.splitlines():
            target, _, rest = rule.partition(": ")
            if rest:
                deps.setdefault(target.strip(), []).extend(rest.split())
    return deps


def cmd_includes(args):
    """The student's files that made the compiler read a file from outside the
    student tree (the instructor's solutions, or a file the grading account
    wrote elsewhere): each step of theirs loses its programs, and the build log
    gets an error line for it that the report shows as its compile error."""
    tree = pathlib.Path(args.tree).resolve()
    build = tree / "build" / "student"
    mine = {str((tree / rel).resolve()): rel for rel in student_files(tree)}
    lab, work = pathlib.Path(args.lab).resolve(), pathlib.Path(args.work).resolve()

    @functools.lru_cache(maxsize=None)
    def outside(path):
        p = pathlib.Path(dep_path(str(build), path))
        if p == tree or tree in p.parents:
            return False
        if lab == p or lab in p.parents or work == p or work in p.parents:
            return True  # the instructor's tree, or the grader's own files
        try:  # a file the grading account made: what an earlier submission left
            return args.uid is not None and p.stat().st_uid == args.uid
        except OSError:
            return False

    bad = {}
    for files in object_deps(build).values():
        read = [dep_path(str(build), f) for f in files]
        for rel in [mine[p] for p in read if p in mine]:
            for f in files:
                if outside(f):
                    bad.setdefault(rel, f"{rel}:1:1: error: it includes {f}, which is not part of the student's tree: "
                                        f"a submission compiles from the lab's own files and its own only")
    fail_steps(build, bad, args.log)
    return 0


def fail_steps(build, bad, log_path):
    """{student file: its error line}: each such file's step loses its programs,
    test programs and libraries, and the build log gets the line, which the
    report shows as the step's compile error."""
    if not bad:
        return
    folders = {rel.split("/")[0] for rel in bad}
    for exe in pathlib.Path(build).rglob("*"):
        if exe.is_file() and any(exe.name.startswith(f) or exe.name.startswith(f"lib{f}") for f in folders):
            exe.unlink()
    with open(log_path, "a") as log:
        for rel, line in sorted(bad.items()):
            log.write(line + "\n")
            print(f"grade: {line}", file=sys.stderr)


# ---- what a graded file may not call ------------------------------------------
# A graded file computes its product with its own code. These compute one for
# it: the harness's references, the speed tests' fixed loops, a step's given
# kernels, the variant registry (which holds the vendor baselines), a vendor
# BLAS, and the dynamic loader (a way to reach any of them by name). Each:
# (pattern on nm's demangled name, what it is, the step whose given code defines
# it, or "" for the harness, None for a library outside the lab).
FORBIDDEN_CALLS = [
    (r"\blab::(?:\w+::)*reference_\w*[<(]", "a reference product of the harness", ""),
    (r"\blab::speed::\w+\(", "a fixed loop of the speed tests (lab/speed_reference.hpp)", ""),
    (r"\blab::registered_variants\(", "the variant registry, which holds the vendor baselines", ""),
    (r"\blab::(?:bench_main|serve_main)\(", "a step program's own entry point", ""),
    (r"\blab::step05::(?:\w+::)?dgemm_naive(?:_coalesced)?\(", "step05's given naive kernels", "step05"),
    (r"\blab::step06::(?:\w+::)?dgemm_dmma_candidate\(", "step06's given DMMA kernels", "step06"),
    (r"^(?:cblas_\w+|openblas_\w+|[sdcz]gemm(?:_64)?_?|p[sdcz]gemm_?|bli_\w+|mkl_\w+|MKL_\w+|cublas\w*)$",
     "a vendor BLAS", None),
    (r"^(?:dlopen|dlmopen|dlsym|dlvsym|dladdr1?|dlinfo|dl_iterate_phdr|_dl_\w+|_r_debug)$",
     "the dynamic loader (a function found by name at run time)", None),
    # another program (a vendor BLAS behind the grader's pipe) or the kernel asked directly
    (r"^(?:_?_?fork|vfork|_Fork|clone3?|exec(?:l|le|lp|v|ve|vp|vpe|veat)|fexecve|system|popen|posix_spawnp?|"
     r"syscall|ptrace|prctl|seccomp|process_vm_\w+)$",
     "another program, or the system asked directly", None),
    # a signal: a way to stall the program's answer from another thread
    (r"^(?:kill|killpg|tgkill|tkill|pthread_kill|pthread_sigqueue|raise|sigqueue|sigaction|signal|sigset|"
     r"bsd_signal|sysv_signal|alarm|setitimer|timer_create)$",
     "a signal", None),
]
# System calls made by the object's own instructions (inline assembly), which
# no symbol shows: x86's syscall, sysenter, int 0x80; Arm's svc.
SYSTEM_CALL_INSTRUCTION = re.compile(r"\t(?:syscall|sysenter|int\s+\$0x80|svc\s)")
# Names a graded file may define outside C++ (unmangled) where its compiler
# makes them: nvcc's registration of a .cu file's kernels, Clang's helper that
# ends the program when a noexcept function throws.
COMPILER_C_NAMES = re.compile(r"^(?:__cuda\w*|__fatbin\w*|__nv\w*|_GLOBAL__\w*|__clang_call_terminate)$")
SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".cu", ".inc")


def forbidden(name):
    """(what it is) of a forbidden symbol's demangled name, else None."""
    for pattern, what, _ in FORBIDDEN_CALLS:
        if re.search(pattern, name):
            return what
    return None


def nm_symbols(obj, timeout=120):
    """[(type letter, demangled name)] of an object file (GNU nm), or None without
    nm; [("?", why)] when nm cannot read it in `timeout` seconds (an object made
    to be slow to read)."""
    try:
        p = subprocess.run(["nm", "-C", str(obj)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                           errors="replace", timeout=timeout)
    except OSError:
        return None
    except subprocess.TimeoutExpired:
        return [("?", f"nm could not read its object in {timeout} s")]
    out = []
    for line in p.stdout.splitlines():
        m = re.match(r"^(?:[0-9a-fA-F]+)?\s+([A-Za-z?-])\s+(.+)$", line)
        if m:
            out.append((m.group(1), m.group(2)))
    return out


def c_definitions(obj, timeout=120):
    """The names an object defines for the whole program outside C++ (global,
    not mangled: `write`, `read`, `clock_gettime`), which would take the place
    of the C library's or the system's for every caller; None without nm."""
    try:
        p = subprocess.run(["nm", "--defined-only", "--extern-only", str(obj)], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True, errors="replace", timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return None
    names = []
    for line in p.stdout.splitlines():
        m = re.match(r"^(?:[0-9a-fA-F]+)?\s+[A-Za-z]\s+(\S+)$", line)
        # (a name with a dot is the compiler's own: DW.ref.__gxx_personality_v0, .gomp_critical_user_x)
        if m and re.fullmatch(r"[A-Za-z_]\w*", m.group(1)) and not m.group(1).startswith("_Z") \
                and not COMPILER_C_NAMES.match(m.group(1)):
            names.append(m.group(1))
    return names


def system_call_instructions(obj, timeout=120):
    """Whether an object's machine code makes a system call itself (inline
    assembly); False where objdump is missing or cannot read it."""
    try:
        p = subprocess.run(["objdump", "-d", str(obj)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           text=True, errors="replace", timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return bool(SYSTEM_CALL_INSTRUCTION.search(p.stdout))


def forbidden_in(symbols):
    """The forbidden names an object calls (undefined: U, w) or holds an
    instance of (a template or inline function of a lab header: W, V, u)."""
    hits = []
    for kind, name in symbols:
        if kind in "UwWVu":
            what = forbidden(name)
            if what and (name, what) not in hits:
                hits.append((name, what))
    return hits


def short_name(name):
    """A demangled name without its parameters or a template's return type:
    "void lab::x::f<T>(int, double)" -> "lab::x::f<T>"."""
    head, depth = "", 0
    for ch in name:
        depth += (ch == "<") - (ch == ">")
        if ch == "(" and depth == 0:
            break
        head += ch
    cut, depth = 0, 0
    for i, ch in enumerate(head):
        depth += (ch == "<") - (ch == ">")
        if ch == " " and depth == 0:
            cut = i + 1
    return re.sub(r"::(?:student|solution|given)::", "::", head[cut:])  # (the build's inline namespaces)


def line_of(path, name):
    """The first line of a file that names the function (1 when none does)."""
    base = re.sub(r"<.*$", "", short_name(name)).split("::")[-1]  # "void lab::x::f<T>(...)" -> "f"
    try:
        lines = pathlib.Path(path).read_text(errors="replace").splitlines()
    except OSError:
        return 1
    naming = [n for n, line in enumerate(lines, 1) if re.search(rf"\b{re.escape(base)}\b", line)]
    declaring = re.compile(r"^\s*(?:extern|void|int|double|float|auto|static|inline|template|namespace)\b|namespace")
    calls = [n for n in naming if not declaring.search(lines[n - 1])]  # a call rather than its declaration
    return (calls or naming or [1])[0]


def graded_objects(tree, build, files):
    """{object file: (student file, [what the compiler read for it])} of a build:
    each object compiled from one of `files` (paths under tree)."""
    tree, build = pathlib.Path(tree).resolve(), pathlib.Path(build)
    mine = {str((tree / rel).resolve()): rel for rel in files}
    found = {}
    for obj, deps in object_deps(build).items():
        o = pathlib.Path(obj if os.path.isabs(obj) else build / obj)
        read = [dep_path(str(build), d) for d in deps]
        src = [mine[d] for d in read if d in mine and o.name == pathlib.Path(d).name + ".o"]
        if src and o.is_file():
            found[o] = (src[0], read)
    for o in build.rglob("*.o"):  # objects the dependency lists leave out (none, with GCC and nvcc)
        if o not in found and o.parent.name.endswith(".dir"):
            for rel in files:
                if o.name == pathlib.Path(rel).name + ".o" and f"/{rel.split('/')[0]}/" in f"/{o.relative_to(build)}":
                    found[o] = (rel, [])
    return found


def call_findings(tree, build, files, objects=None):
    """{student file: [error text, ...]}: the forbidden calls of each file's
    object (graded_objects, unless given), and the lab's source files (not
    headers) it includes."""
    tree = pathlib.Path(tree).resolve()
    ours = set(files)
    out = {}
    objects = sorted((graded_objects(tree, build, files) if objects is None else objects).items())
    # (each object's nm and objdump runs at once: a dozen objects one by one took seconds a grade)
    with tool_pool() as pool:
        facts = list(pool.map(lambda o: (nm_symbols(o), c_definitions(o), system_call_instructions(o)),
                              [obj for obj, _ in objects]))
    for (obj, (rel, read)), (symbols, defined, syscalls) in zip(objects, facts):
        if symbols is None:
            return None
        for kind, why in symbols:
            if kind == "?":
                out.setdefault(rel, []).append((1, why))
        for name, what in forbidden_in(symbols):
            out.setdefault(rel, []).append((line_of(tree / rel, name), f"it calls {short_name(name)} ({what})"))
        for name in defined or []:
            out.setdefault(rel, []).append(
                (line_of(tree / rel, name), f"it defines {name} outside C++ (extern \"C\" or an asm name), which "
                                            f"would replace the C library's or the system's {name} in the whole program"))
        if syscalls:
            out.setdefault(rel, []).append((1, "it makes a system call with its own instructions (inline assembly)"))
        for d in read:
            p = pathlib.Path(d)
            if p.suffix in SOURCE_SUFFIXES and tree in p.parents and str(p.relative_to(tree)) not in ours \
                    and "build" not in p.relative_to(tree).parts[:1]:
                out.setdefault(rel, []).append((1, f"it includes {p.relative_to(tree)}, a source file of the lab's"))
    return {rel: sorted(items) for rel, items in out.items()}  # by line: the same order whatever nm's


def cmd_calls(args):
    """The student's files that call what computes a product for them (see
    FORBIDDEN_CALLS): with --log (./lab grade), each one's step loses its
    programs and the build log gets its error line; with --warn (./lab test),
    a warning a line; with --self-check (a test of the lab), the solutions and
    skeletons call none, and every pattern of the lab's own names a function
    the build defines."""
    tree, build = pathlib.Path(args.tree).resolve(), pathlib.Path(args.build)
    files = student_files(tree)
    if args.self_check:
        return self_check_calls(tree, build, files)
    found = call_findings(tree, build, files)
    if found is None:
        print("grade: warning: nm (GNU binutils) not found: the student's files were not checked for calls "
              "to the lab's references or a vendor BLAS", file=sys.stderr)
        return 0
    rule = "a graded file computes the product with its own code"
    if args.warn:
        for rel, items in sorted(found.items()):
            for number, text in items:
                print(f"lab: warning: {rel}:{number}: {text}: ./lab grade gives {rel[:6]} no points while it does "
                      f"({rule})", file=sys.stderr)
        return 0
    fail_steps(build, {rel: f"{rel}:{items[0][0]}:1: error: {items[0][1]}: {rule}, so the grader does not build "
                            f"this step" for rel, items in found.items()}, args.log)
    return 0


def self_check_calls(tree, build, files):
    """For the lab's own tests: the skeletons' and solutions' objects call none
    of FORBIDDEN_CALLS, and each pattern on the lab's own names matches a
    function some object of the build defines (where its step is built)."""
    # the solutions compile from solutions/ or from the build's copies of them
    copies = [os.path.relpath(pathlib.Path(build).resolve() / "solution_src" / rel, tree) for rel in files]
    graded = list(files) + [f"solutions/{rel}" for rel in files if (tree / "solutions" / rel).is_file()] \
        + [c for c in copies if (tree / c).is_file()]
    objects = graded_objects(tree, build, graded)
    found = call_findings(tree, build, graded, objects)
    if found is None:
        print("LAB-SKIP: nm (GNU binutils) not found")
        return 0
    problems = [f"{rel}:{n}: {text}" for rel, items in sorted(found.items()) for n, text in items]
    defined = []
    with tool_pool() as pool:
        for symbols in pool.map(nm_symbols, pathlib.Path(build).rglob("*.o")):
            defined += [name for kind, name in symbols or [] if kind in "TW"]
    built = {re.search(r"(?:^|/)(step\d\d)_", rel).group(1) for rel, _ in objects.values()}
    for pattern, what, step in FORBIDDEN_CALLS:
        if step is None or (step and step not in built):
            continue
        if not any(re.search(pattern, name) for name in defined):
            problems.append(f"no function of the build matches {pattern} ({what}): renamed? update FORBIDDEN_CALLS")
    print(f"calls: {len(objects)} objects of the skeletons and solutions checked; "
          f"{sum(1 for p, _, s in FORBIDDEN_CALLS if s is not None)} patterns on the lab's own names")
    for p in problems:
        print(f"calls: {p}")
    return 1 if problems else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("check")
    p.add_argument("--checker", required=True, help="lab_grade_check, built by the grader")
    p.add_argument("--reference-runner", help="lab_grade_reference, built by the grader (the GPU speed cases)")
    p.add_argument("--tree", required=True, help="the grading tree (its build/student holds the step programs)")
    p.add_argument("--bin", default="build/student/bin", help="the step programs' folder under the tree")
    p.add_argument("--points", required=True)
    p.add_argument("--steps")
    p.add_argument("--user", help="run the step programs as this account (the grader is root)")
    p.add_argument("--timeout", type=float, default=600, help="seconds for each variant's cases")
    p.add_argument("--build-log", help="the build's log (a step that did not compile: its first errors)")
    p.add_argument("--json", required=True, help="write the verdicts here")
    p.set_defaults(fn=cmd_check)
    p = sub.add_parser("checked", help="print the steps the checker grades (NN,NN)")
    p.add_argument("--points", required=True)
    p.set_defaults(fn=lambda a: print(",".join(s[4:] for s in sorted(read_config(a.points)[1]))) or 0)
    p = sub.add_parser("targets", help="print a build's targets (those that start with --prefix)")
    p.add_argument("build")
    p.add_argument("--prefix", default="")
    p.set_defaults(fn=cmd_targets)
    p = sub.add_parser("score")
    p.add_argument("junit", nargs="?", help="ctest's JUnit report (the steps the checker does not check)")
    p.add_argument("--checked", help="the checker's verdicts (grade.py check)")
    p.add_argument("--points", required=True)
    p.add_argument("--baseline")
    p.add_argument("--steps")
    p.add_argument("--sources", help="where each student file came from (written by `pick`)")
    p.add_argument("--run-as", help="a line for the report: which account built and ran the submission")
    p.add_argument("--log", help="ctest's output (it names the tests that timed out)")
    p.add_argument("--md")
    p.add_argument("--json")
    p.set_defaults(fn=cmd_score)
    p = sub.add_parser("baseline")
    p.add_argument("junit", nargs="?")
    p.add_argument("--checked")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--stamp")
    p.set_defaults(fn=cmd_baseline)
    p = sub.add_parser("merge")
    p.add_argument("reports", nargs="+")
    p.add_argument("--md")
    p.add_argument("--json")
    p.set_defaults(fn=cmd_merge)
    p = sub.add_parser("summary")
    p.add_argument("junit")
    p.add_argument("--cases", type=int, default=6, help="failing cases and TODOs shown per test")
    p.add_argument("--log", help="ctest's output (it names the tests that timed out)")
    p.add_argument("--refused", help="`calls --warn`'s lines: those steps' tests count as failed")
    p.set_defaults(fn=cmd_summary)
    p = sub.add_parser("prepare")
    p.add_argument("root")
    p.add_argument("tree")
    p.add_argument("--staged", help="the student's files chosen by `pick`, at their paths")
    p.add_argument("--dry", action="store_true", help="only print the stamp of the untouched tree")
    p.set_defaults(fn=cmd_prepare)
    p = sub.add_parser("includes", help="fail the student files that include files from outside the tree")
    p.add_argument("--tree", required=True, help="the grading tree, built (build/student)")
    p.add_argument("--lab", required=True, help="the lab the grader runs from (the instructor's tree)")
    p.add_argument("--work", required=True, help="the grader's own folder")
    p.add_argument("--uid", type=int, help="the grading account: files it made outside the tree count as outside")
    p.add_argument("--log", required=True, help="the build's log: an error line for each such file")
    p.set_defaults(fn=cmd_includes)
    p = sub.add_parser("calls", help="fail the student files that call the lab's references, given kernels "
                                     "or a vendor BLAS")
    p.add_argument("--tree", required=True, help="the tree (its common/student_files.txt names the student's files)")
    p.add_argument("--build", required=True, help="the build folder that compiled them")
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--log", help="the build's log: an error line for each such file; its step's programs go")
    mode.add_argument("--warn", action="store_true", help="only a warning a line (./lab test)")
    mode.add_argument("--self-check", action="store_true",
                      help="the skeletons and solutions call none; every pattern names a real function")
    p.set_defaults(fn=cmd_calls)
    p = sub.add_parser("pick")
    p.add_argument("submission")
    p.add_argument("--lab", required=True, help="the lab tree the submission is graded in")
    p.add_argument("--staged", required=True, help="write the chosen student files here, at their paths")
    p.add_argument("--sources", required=True, help="write where each came from here (JSON)")
    p.add_argument("--in-place", action="store_true", help="the submission is the lab tree itself")
    p.set_defaults(fn=cmd_pick)
    args = ap.parse_args()
    return args.fn(args)


if __name__ == "__main__":
    sys.exit(main())
