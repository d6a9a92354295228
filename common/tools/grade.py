#!/usr/bin/env python3
"""Turn ctest's JUnit report into a score: results/grade.md for people and a
Gradescope-style results.json for machines.

    grade.py JUNIT.xml --points common/grading.toml --md grade.md --json results.json

Each ctest test belongs to the step named by its first word (step03.student...);
the step's points (grading.toml) are split evenly over its tests, and a failing
test earns the fraction of its GoogleTest cases that passed. Tests of no
step (the harness's own) are listed with no points.
"""
import argparse
import json
import re
import sys
import xml.etree.ElementTree as ET


def read_points(path):
    points, section = {}, None
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            if line.startswith("["):
                section = line.strip("[]").strip()
                continue
            if section != "points" or "=" not in line:
                sys.exit(f"grade: {path}:{number}: expected 'stepNN = points' under [points]")
            key, value = (s.strip() for s in line.split("=", 1))
            try:
                points[key] = float(value)
            except ValueError:
                sys.exit(f"grade: {path}:{number}: points for {key} must be a number, got '{value}'")
    return points


def read_junit(path):
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        sys.exit(f"grade: cannot read the JUnit report {path}: {e}")
    tests = []
    for tc in root.iter("testcase"):
        name = tc.get("name", "?")
        status = tc.get("status", "run")
        out = "".join((e.text or "") for e in tc.iter("system-out"))
        if tc.find("skipped") is not None or status in ("disabled", "notrun") or "LAB-SKIP" in out:
            result = "skipped"
        elif tc.find("failure") is not None or tc.find("error") is not None or status == "fail":
            result = "failed"
        else:
            result = "passed"
        # GoogleTest's own summary gives partial credit within one ctest test.
        ran = sum(int(n) for n in re.findall(r"\[==========\] (\d+) tests? from \d+ test suites? ran", out))
        passed = sum(int(n) for n in re.findall(r"\[  PASSED  \] (\d+) tests?", out))
        fraction = 1.0 if result == "passed" else (passed / ran if result == "failed" and ran else 0.0)
        tests.append({"name": name, "result": result, "fraction": fraction, "output": out[-4000:],
                      "cases": f"{passed}/{ran} cases" if ran else ""})
    return tests


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("junit")
    ap.add_argument("--points", required=True)
    ap.add_argument("--md", required=True)
    ap.add_argument("--json", required=True)
    args = ap.parse_args()
    points = read_points(args.points)
    tests = read_junit(args.junit)
    by_step = {}
    for t in tests:
        m = re.match(r"(step\d\d)", t["name"])
        t["step"] = m.group(1) if m else None
        by_step.setdefault(t["step"], []).append(t)
    results, rows = [], []
    total = possible = 0.0
    for step in sorted(k for k in by_step if k):
        share = points.get(step, 0.0) / len(by_step[step])
        got = 0.0
        for t in by_step[step]:
            score = share * t["fraction"] if t["result"] != "skipped" else 0.0
            got += score
            results.append({"name": t["name"], "score": round(score, 3), "max_score": round(share, 3),
                            "status": t["result"], "cases": t["cases"], "output": t["output"]})
        total += got
        possible += points.get(step, 0.0)
        rows.append((step, got, points.get(step, 0.0), by_step[step]))
    for t in by_step.get(None, []):
        results.append({"name": t["name"], "score": 0, "max_score": 0, "status": t["result"], "cases": t["cases"],
                        "output": t["output"]})
    with open(args.json, "w") as f:
        json.dump({"score": round(total, 3), "max_score": round(possible, 3), "tests": results,
                   "output": f"{total:.1f} / {possible:.1f} points"}, f, indent=2)
    lines = ["# gemm-lab grade", "", f"**{total:.1f} / {possible:.1f} points**", "",
             "| step | points | tests passed | failed | skipped |", "|---|---:|---:|---:|---:|"]
    for step, got, most, ts in rows:
        count = {r: sum(1 for t in ts if t["result"] == r) for r in ("passed", "failed", "skipped")}
        lines.append(f"| {step} | {got:.1f} / {most:.1f} | {count['passed']} | {count['failed']} | {count['skipped']} |")
    lines += ["", "## Tests", ""]
    for r in results:
        mark = {"passed": "PASS", "failed": "FAIL", "skipped": "SKIP"}[r["status"]]
        cases = f", {r['cases']}" if r["cases"] else ""
        lines.append(f"- {mark} `{r['name']}` ({r['score']:.2f} / {r['max_score']:.2f}{cases})")
    failing = [r for r in results if r["status"] == "failed"]
    if failing:
        lines += ["", "## What failed", ""]
        for r in failing:
            first = [l for l in r["output"].splitlines() if "not implemented yet" in l or "FAILED" in l
                     or "error" in l.lower()][:3]
            lines.append(f"- `{r['name']}`: " + ("; ".join(s.strip() for s in first) or "see the ctest log"))
    with open(args.md, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"grade: {total:.1f} / {possible:.1f} points; wrote {args.md} and {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
