#!/usr/bin/env python3
"""gemm-lab's grading: from ctest's JUnit reports to points.

    grade.py score JUNIT --points common/grading.toml [--baseline BASE.json]
                   [--steps 01,02] [--md grade.md] [--json results.json] [--submission-note F]
    grade.py baseline JUNIT -o BASE.json      what the untouched skeleton passes
    grade.py merge A.json B.json ... [--md grade.md] [--json results.json]
    grade.py summary JUNIT                    a short report for ./lab test
    grade.py prepare ROOT TREE [--submission DIR]
                                              write the grading tree: ROOT's files,
                                              the student's files from DIR

Fair points. A GoogleTest case earns points only when it FAILS on the
untouched skeleton (the baseline): cases that pass without student code
(quick returns, argument checks) earn nothing, so an untouched tree scores 0.
A step's points (grading.toml) are split evenly over its ctest tests that
have such cases, and a test earns the share of those cases that now pass.
A case that started and never finished (crash, timeout) failed. A step whose
tests cannot run here (no GPU, no MPI) is "graded separately": the report
names it, the command to grade it elsewhere, and the maximum reachable here.
"""
import argparse
import hashlib
import json
import os
import pathlib
import re
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
STUDENT_FILES = "common/student_files.txt"


def fail(msg):
    sys.exit(f"grade: error: {msg}")


def clean(text):
    return ANSI.sub("", text or "")


# ---- inputs ------------------------------------------------------------------
def read_points(path):
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
                        try:
                            section[key] = float(value)
                        except ValueError:
                            fail(f"{path}:{number}: points for {key} must be a number, got '{value}'")
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
    return {k: float(v) for k, v in points.items()}


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


def read_junit(path):
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        fail(f"cannot read the JUnit report {path}: {e}")
    tests = {}
    for tc in root.iter("testcase"):
        name = tc.get("name", "?")
        status = tc.get("status", "run")
        out = clean("".join((e.text or "") for e in tc.iter("system-out")))
        bad = tc.find("failure")
        if bad is None:
            bad = tc.find("error")
        if tc.find("skipped") is not None or status in ("disabled", "notrun") or "LAB-SKIP" in out:
            result = "skipped"
        elif bad is not None or status == "fail":
            result = "failed"
        else:
            result = "passed"
        why = clean(bad.get("message", "")) if bad is not None else ""
        if result == "failed" and re.search(r"timeout", why + out[-300:], re.I):
            why = "timed out"
        cases = parse_cases(out) if result != "skipped" else {}
        tests[name] = {"name": name, "result": result, "why": why, "cases": cases, "output": out}
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
        graded = []
        for t in ts:
            if t["result"] == "skipped":
                continue
            cases = dict(t["cases"]) or {WHOLE: t["result"]}
            base = None if baseline is None else baseline.get(t["name"])
            if base is not None and not base:
                base = {WHOLE: "failed"}
            # a case counts only when the untouched skeleton did not pass it
            gradable = sorted(c for c in set(cases) | set(base or {}) if (base or {}).get(c) != "passed")
            if not gradable:
                continue
            won = [c for c in gradable if cases.get(c) == "passed"]
            graded.append((t, gradable, won))
        status = "graded" if graded else "separately"
        if ts and not graded and any(t["result"] != "skipped" for t in ts):
            status = "graded"  # it ran, but nothing in it fails on the skeleton
        share = most / len(graded) if graded else 0.0
        got = 0.0
        for t, gradable, won in graded:
            s = share * len(won) / len(gradable)
            got += s
            lost = [c for c in gradable if c not in won]
            results.append({"name": t["name"], "step": step, "score": round(s, 3), "max_score": round(share, 3),
                            "status": "passed" if not lost else "failed", "why": t["why"],
                            "cases": f"{len(won)}/{len(gradable)} graded cases", "failed_cases": lost,
                            "output": t["output"][-4000:]})
        for t in ts:
            if t["result"] == "skipped":
                results.append({"name": t["name"], "step": step, "score": 0.0, "max_score": 0.0,
                                "status": "skipped", "why": "", "cases": "", "failed_cases": [],
                                "output": t["output"][-1000:]})
        why = ""
        if status == "separately":
            why = next((re.sub(r"^.*LAB-SKIP:\s*", "", line).strip() for t in ts
                        for line in t["output"].splitlines() if "LAB-SKIP" in line), "") \
                or ("no tests of this step ran here" if ts else "this step has no tests in this tree")
        rows.append({"step": step, "score": round(got, 3) if status == "graded" else 0.0, "max_score": most,
                     "status": status, "why": why, "command": grade_command(step) if status == "separately" else "",
                     "tests": len(ts)})
    return rows, results


def report(rows, results, ignored=(), note=""):
    total = sum(r["score"] for r in rows)
    possible = sum(r["max_score"] for r in rows)
    here = sum(r["max_score"] for r in rows if r["status"] == "graded")
    apart = [r for r in rows if r["status"] == "separately"]
    headline = f"{total:.1f} / {possible:.1f} points ({here:.1f} reachable on this machine)"
    lines = ["# gemm-lab grade", "", f"**{headline}**", ""]
    if note:
        lines += [note, ""]
    lines += ["| step | points | status |", "|---|---:|---|"]
    for r in rows:
        st = "graded" if r["status"] == "graded" else f"graded separately: {r['why']}"
        lines.append(f"| {r['step']} | {r['score']:.1f} / {r['max_score']:.1f} | {st} |")
    if apart:
        lines += ["", "## Graded separately", "",
                  "These steps cannot run on this machine; grade them where they can and merge:", ""]
        for r in apart:
            lines.append(f"- {r['step']} ({r['max_score']:.0f} points): `{r['command']}`, then "
                         "`./lab grade --merge THIS.json THAT.json`")
    if ignored:
        lines += ["", "## Ignored files of the submission", "",
                  "Only the files listed in common/student_files.txt are graded:", ""]
        lines += [f"- `{f}`" for f in ignored]
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
    failing = [r for r in results if r["status"] == "failed"]
    if failing:
        lines += ["", "## What failed", ""]
        for r in failing:
            first = first_reasons(r["output"])
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
        tests.append({"name": r["name"], "score": r["score"], "max_score": r["max_score"],
                      "status": r["status"], "output": body + r["output"]})
    for row in rows:
        if row["status"] == "separately":
            tests.append({"name": f"{row['step']} (graded separately: {row['why']})", "score": 0,
                          "max_score": 0, "output": f"grade it on a machine that can run it: {row['command']}"})
    return {"score": round(sum(r["score"] for r in rows), 3), "output": md, "tests": tests,
            "stdout_visibility": "visible",
            "extra_data": {"lab_steps": rows, "lab_ignored": list(ignored), "lab_headline": headline}}


def write(args, rows, results, ignored=(), note=""):
    headline, md = report(rows, results, ignored, note)
    if args.md:
        pathlib.Path(args.md).write_text(md)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(gradescope(rows, results, headline, md, ignored), indent=2))
    print(f"grade: {headline}")
    for r in rows:
        if r["status"] == "separately":
            print(f"grade: {r['step']} graded separately ({r['why']}): {r['command']}")
    for f in ignored:
        print(f"grade: ignored (not a student file): {f}")
    written = " and ".join(p for p in (args.md, args.json) if p)
    if written:
        print(f"grade: wrote {written}")


# ---- commands -------------------------------------------------------------------------
def cmd_score(args):
    points = read_points(args.points)
    tests = read_junit(args.junit)
    baseline = None
    if args.baseline:
        try:
            baseline = json.loads(pathlib.Path(args.baseline).read_text())["tests"]
        except (OSError, ValueError, KeyError) as e:
            fail(f"cannot read the baseline {args.baseline}: {e}")
    ignored = []
    if args.ignored and os.path.exists(args.ignored):
        ignored = [l for l in pathlib.Path(args.ignored).read_text().splitlines() if l]
    note = "" if baseline is not None else \
        "(no baseline of the untouched skeleton: every case counts, also those that pass without student code)"
    rows, results = score(tests, points, baseline, parse_steps(args.steps))
    write(args, rows, results, ignored, note)
    return 0


def cmd_baseline(args):
    tests = read_junit(args.junit)
    base = {n: t["cases"] or {WHOLE: t["result"]} for n, t in tests.items() if t["result"] != "skipped"}
    pathlib.Path(args.output).write_text(json.dumps({"stamp": args.stamp or "", "tests": base}, indent=1))
    return 0


def cmd_merge(args):
    chosen = {}
    for path in args.reports:
        try:
            data = json.loads(pathlib.Path(path).read_text())
            rows = data["extra_data"]["lab_steps"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            fail(f"{path} is not a report of ./lab grade (results.json): {e}")
        for row in rows:
            # a step graded anywhere wins over "graded separately"; the first graded one counts
            if row["step"] not in chosen or (chosen[row["step"]][0]["status"] != "graded" and row["status"] == "graded"):
                tests = [t for t in data["tests"] if step_of(t["name"]) == row["step"]]
                chosen[row["step"]] = (row, tests, path)
    rows = [chosen[s][0] for s in sorted(chosen)]
    results = []
    for s in sorted(chosen):
        for t in chosen[s][1]:
            if t.get("max_score", 0) or t.get("status"):
                results.append({"name": t["name"], "step": s, "score": t["score"], "max_score": t["max_score"],
                                "status": t.get("status", "skipped"), "why": "", "cases": "",
                                "failed_cases": [], "output": t.get("output", "")})
    note = "Merged from " + ", ".join(f"`{p}`" for p in args.reports) + "."
    write(args, rows, results, note=note)
    return 0


def cmd_summary(args):
    """What ./lab test prints: one line a test, the failing cases, the TODOs left."""
    tests = read_junit(args.junit)
    count = {"passed": 0, "failed": 0, "skipped": 0}
    todos = []
    for t in tests.values():
        count[t["result"]] += 1
        for m in re.findall(r"not implemented yet: ([^\n\"]*)", t["output"]):
            m = m.strip().rstrip(".")
            if m and m not in todos:
                todos.append(m)
    for t in tests.values():
        if t["result"] == "passed":
            continue
        if t["result"] == "skipped":
            why = next((re.sub(r"^.*LAB-SKIP:\s*", "", l).strip() for l in t["output"].splitlines()
                        if "LAB-SKIP" in l), "")
            print(f"  SKIP {t['name']}" + (f": {why}" if why else ""))
            continue
        lost = [c for c, s in t["cases"].items() if s == "failed"]
        why = f" ({t['why']})" if t["why"] else ""
        print(f"  FAIL {t['name']}{why}" + (f": {len(lost)} of {len(t['cases'])} cases failed" if t["cases"] else ""))
        for c in lost[:args.cases]:
            print(f"         {c}")
        if len(lost) > args.cases:
            print(f"         ... and {len(lost) - args.cases} more")
        if not t["cases"]:
            for line in t["output"].strip().splitlines()[-5:]:
                print(f"         | {line}")
    for m in todos[:args.cases]:
        print(f"  not implemented yet: {m}")
    if len(todos) > args.cases:
        print(f"  ... and {len(todos) - args.cases} more TODOs")
    print(f"  {count['passed']} passed, {count['failed']} failed, {count['skipped']} skipped")
    return 1 if count["failed"] else 0


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
        out = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], capture_output=True, check=True).stdout
        files = [f for f in out.decode().split("\0") if f]
        return [f for f in files if not f.startswith(("solutions/", ".ci/"))]
    skip = {"build", "results", ".git", ".lab"}
    files = []
    for dirpath, dirnames, names in os.walk(root):
        dirnames[:] = [d for d in dirnames if not (pathlib.Path(dirpath) == root and d in skip) and d != "__pycache__"]
        files += [str((pathlib.Path(dirpath) / n).relative_to(root)) for n in names]
    return sorted(files)


def match_submission(subdir, wanted):
    """{student path: file in the submission}, and the submission's other files."""
    subdir = pathlib.Path(subdir)
    if not subdir.is_dir():
        fail(f"--submission {subdir}: not a folder")
    found, ignored = {}, []
    by_base = {}
    for w in wanted:
        by_base.setdefault(pathlib.PurePosixPath(w).name, []).append(w)
    for path in sorted(p for p in subdir.rglob("*") if p.is_file()):
        rel = path.relative_to(subdir).as_posix()
        hit = next((w for w in wanted if rel == w or rel.endswith("/" + w)), None)
        if hit is None and "/" not in rel and len(by_base.get(rel, [])) == 1:
            hit = by_base[rel][0]  # a flat upload (Gradescope's file upload): the name is unique
        if hit is None or hit in found:
            ignored.append(rel if hit is None else f"{rel} (a second copy of {hit})")
            continue
        found[hit] = path
    return found, ignored


def cmd_prepare(args):
    """Write TREE from ROOT's files with the student's files from the submission
    (or the untouched skeleton). Unchanged files keep their time stamps, so
    the next build is incremental. Prints the stamp of the untouched tree."""
    root, tree = pathlib.Path(args.root).resolve(), pathlib.Path(args.tree)
    wanted = student_files(root)
    files = source_files(root)
    missing = [w for w in wanted if w not in files]
    if missing:
        fail(f"{STUDENT_FILES} names files this tree lacks: {', '.join(missing)}")
    found, ignored = match_submission(args.submission, wanted) if args.submission else ({}, [])
    stamp = hashlib.sha256()
    for rel in files:
        src = root / rel
        # a student tree keeps its untouched skeletons in .lab/skeletons (./lab release)
        kept = root / ".lab" / "skeletons" / rel
        pristine = (kept if rel in wanted and kept.is_file() else src).read_bytes()
        stamp.update(rel.encode() + b"\0" + hashlib.sha256(pristine).digest())
        if args.dry:
            continue
        body = found[rel].read_bytes() if rel in found else pristine
        dst = tree / rel
        if dst.exists() and dst.read_bytes() == body:
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes(body)
        shutil.copymode(src, dst)
    if args.dry:
        print(stamp.hexdigest())
        return 0
    if args.ignored:
        pathlib.Path(args.ignored).write_text("".join(f"{f}\n" for f in ignored))
    for w in wanted:
        if args.submission and w not in found:
            print(f"grade: {w}: not in the submission, graded as the untouched skeleton", file=sys.stderr)
    print(stamp.hexdigest())
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("score")
    p.add_argument("junit")
    p.add_argument("--points", required=True)
    p.add_argument("--baseline")
    p.add_argument("--steps")
    p.add_argument("--ignored", help="file listing the submission's ignored files")
    p.add_argument("--md")
    p.add_argument("--json")
    p.set_defaults(fn=cmd_score)
    p = sub.add_parser("baseline")
    p.add_argument("junit")
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
    p.set_defaults(fn=cmd_summary)
    p = sub.add_parser("prepare")
    p.add_argument("root")
    p.add_argument("tree")
    p.add_argument("--submission")
    p.add_argument("--ignored", help="write the submission's ignored files here")
    p.add_argument("--dry", action="store_true", help="only print the stamp of the untouched tree")
    p.set_defaults(fn=cmd_prepare)
    args = ap.parse_args()
    return args.fn(args)


if __name__ == "__main__":
    sys.exit(main())
