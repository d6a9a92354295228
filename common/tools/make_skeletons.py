#!/usr/bin/env python3
"""Write every step's student skeleton from its solution.

The solution file is the single source. Inside it, each part the student
writes is marked:

    // LAB:SOLUTION-BEGIN  <hint shown in the skeleton as a TODO comment>
    // LAB:HINT  <more of the hint, when one line is not enough>
       ...solution code...
    // LAB:SKELETON
       ...what the student starts from, e.g. LAB_TODO("tile the loops");
    // LAB:SOLUTION-END

solutions/stepNN_x/<path> becomes stepNN_x/<path>: everything outside the
markers is copied, each marked block is replaced by its hint (as a
`// TODO:` comment) and its skeleton part.

A hint longer than one line goes on: every `// LAB:HINT <text>` line directly
after the LAB:SOLUTION-BEGIN line (no other line between) is one more line of
it. The comments that follow are the solution's own and stay out of the
skeleton. A LAB:HINT line anywhere else is an error.

Every student file (a solution file with a marked block) says in its header
how to test it, in one form for all: TEST_LINE below, e.g.
`// Test:   ./lab test step04`. The tool refuses a student file whose header
lacks that line or words it otherwise, so every skeleton carries the same line.

    make_skeletons.py           write the skeletons
    make_skeletons.py --check   exit 1 (and show a diff) when a committed skeleton is stale
    make_skeletons.py --list    print the student's files (the skeletons with a marked block)
    make_skeletons.py --strip IN OUT
                                write the solution as the compiler sees it: the
                                skeleton parts blanked (line numbers kept, and a
                                #line directive so errors point at IN)
    make_skeletons.py --strip IN OUT --as-student
                                the same without the #line directive: the file
                                as a student would hand it in
    make_skeletons.py --solutions DEST
                                every student file's solution, stripped so (as a
                                student's), at its own path under DEST: a
                                submission that solves every step (what CI and
                                node-check grade)
"""
import argparse
import difflib
import pathlib
import re
import sys

SOURCE_SUFFIXES = {".cpp", ".hpp", ".h", ".cu", ".cuh", ".cc"}
BEGIN = re.compile(r"^(\s*)//\s*LAB:SOLUTION-BEGIN\b\s*(.*?)\s*$")
HINT = re.compile(r"^(\s*)//\s*LAB:HINT\b\s*(.*?)\s*$")
SKELETON = re.compile(r"^\s*//\s*LAB:SKELETON\s*$")
END = re.compile(r"^\s*//\s*LAB:SOLUTION-END\s*$")
TEST_LINE = "// Test:   ./lab test {step}"
TEST_PREFIX = re.compile(r"^//\s*Test:")
STEP_OF = re.compile(r"(?:^|/)(step\d\d)_[^/]*/")


class MarkerError(Exception):
    pass


def skeleton_of(text, name):
    out = []
    state = "outside"  # outside -> solution (hint lines first) -> skeleton -> outside
    begin_line = 0
    in_hint = False  # directly after a BEGIN line, or after one of its LAB:HINT lines
    todo = ""  # the skeleton's "// TODO: " prefix, for lining up the hint's further lines
    has_hint = False
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        b, h, s, e = BEGIN.match(line), HINT.match(line), SKELETON.match(line), END.match(line)
        if h and not in_hint:
            raise MarkerError(f"{name}:{number}: LAB:HINT not directly after a LAB:SOLUTION-BEGIN line"
                              " (or another LAB:HINT line)")
        if state == "outside":
            if s or e:
                raise MarkerError(f"{name}:{number}: marker outside a LAB:SOLUTION-BEGIN block")
            if b:
                state, begin_line, in_hint = "solution", number, True
                indent, hint = b.group(1), b.group(2)
                todo, has_hint = f"{indent}// TODO: ", bool(hint)
                if hint:
                    out.append(f"{todo}{hint}\n")
            else:
                out.append(line)
        elif state == "solution":
            if h:
                if not has_hint:
                    raise MarkerError(f"{name}:{number}: LAB:HINT goes on a hint, but the LAB:SOLUTION-BEGIN"
                                      f" at line {begin_line} has none")
                # "// TODO: first line" then "//       next line", the text lined up
                out.append(f"{indent}//{' ' * (len(todo) - len(indent) - 2)}{h.group(2)}".rstrip() + "\n")
                continue
            in_hint = False
            if b:
                raise MarkerError(f"{name}:{number}: LAB:SOLUTION-BEGIN inside the block begun at line {begin_line}")
            if s:
                state = "skeleton"
            elif e:
                state = "outside"
        else:  # skeleton
            if b or s:
                raise MarkerError(f"{name}:{number}: unexpected marker in the block begun at line {begin_line}")
            if e:
                state = "outside"
            else:
                out.append(line)
    if state != "outside":
        raise MarkerError(f"{name}:{begin_line}: LAB:SOLUTION-BEGIN without LAB:SOLUTION-END")
    return "".join(out)


def header_test_line(text, name):
    """Check that a student file's header says how to test it, in the one form of TEST_LINE."""
    step = STEP_OF.search(name)
    if not step or not any(BEGIN.match(line) for line in text.splitlines()):
        return
    want = TEST_LINE.format(step=step.group(1))
    header = []
    for line in text.splitlines():
        if not line.startswith("//"):
            break
        header.append(line)
    tests = [(n, line) for n, line in enumerate(header, start=1) if TEST_PREFIX.match(line)]
    if not tests:
        raise MarkerError(f"{name}: the header comment has no test line; add: {want}")
    for n, line in tests:
        if line.rstrip() != want:
            raise MarkerError(f"{name}:{n}: the test line must read exactly: {want}")


def solution_of(text, name):
    """The solution with marker and skeleton lines blanked, line numbers kept."""
    skeleton_of(text, name)  # validates the markers
    out = []
    in_skeleton = False
    for line in text.splitlines(keepends=True):
        if BEGIN.match(line) or HINT.match(line) or END.match(line):
            in_skeleton = False
            out.append("\n")
        elif SKELETON.match(line):
            in_skeleton = True
            out.append("\n")
        else:
            out.append("\n" if in_skeleton else line)
    return "".join(out)


def strip(src, dst, line=True):
    """The solution at src as the compiler sees it, written to dst; with line,
    a #line directive first so that errors point at src. A file planted in a
    student's tree goes without it: nvcc lists a #line's file among the
    object's dependencies, and the grader refuses a submission whose objects
    depend on the lab's own solutions."""
    src, dst = pathlib.Path(src).resolve(), pathlib.Path(dst)
    try:
        body = solution_of(src.read_text(), str(src))
    except MarkerError as err:
        print(f"make_skeletons: error: {err}", file=sys.stderr)
        return 2
    text = (f'#line 1 "{src}"\n' if line else "") + body
    if not dst.exists() or dst.read_text() != text:
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_text(text)
    return 0


def pairs(root):
    solutions = root / "solutions"
    if not solutions.is_dir():
        return
    for path in sorted(solutions.rglob("*")):
        if path.is_file() and path.suffix in SOURCE_SUFFIXES:
            rel = path.relative_to(solutions)
            yield path, root / rel


STUDENT_FILES = pathlib.Path("common/student_files.txt")
STUDENT_FILES_HEADER = (
    "# The files a student edits: every solution file with a LAB:SOLUTION-BEGIN\n"
    "# block, by its path in the student tree. Written by\n"
    "# common/tools/make_skeletons.py from solutions/ (do not edit by hand); read by\n"
    "# ./lab grade --submission, which takes only these files from a submission.\n")


def student_files(root):
    """The student-editable files: the skeletons of solution files that have a marked block."""
    return [str(skeleton.relative_to(root)) for solution, skeleton in pairs(root)
            if any(BEGIN.match(line) for line in solution.read_text().splitlines())]


def student_files_text(root):
    return STUDENT_FILES_HEADER + "".join(f"{f}\n" for f in student_files(root))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 when a skeleton is stale")
    parser.add_argument("--list", action="store_true", help="print the student's files, one a line")
    parser.add_argument("--strip", nargs=2, metavar=("IN", "OUT"), help="write IN without its skeleton parts to OUT")
    parser.add_argument("--as-student", action="store_true",
                        help="with --strip: no #line directive (the file as a student hands it in)")
    parser.add_argument("--solutions", metavar="DEST", help="write every student file's stripped solution under DEST")
    parser.add_argument("--root", default=pathlib.Path(__file__).resolve().parents[2], type=pathlib.Path)
    args = parser.parse_args()
    if args.strip:
        return strip(*args.strip, line=not args.as_student)
    if args.solutions:
        for rel in student_files(args.root):
            rc = strip(args.root / "solutions" / rel, pathlib.Path(args.solutions) / rel, line=False)
            if rc:
                return rc
        return 0
    if args.list:
        print("\n".join(student_files(args.root)))
        return 0
    stale = []
    count = 0
    for solution, skeleton in pairs(args.root):
        count += 1
        try:
            text, name = solution.read_text(), str(solution.relative_to(args.root))
            header_test_line(text, name)
            want = skeleton_of(text, name)
        except MarkerError as err:
            print(f"make_skeletons: error: {err}", file=sys.stderr)
            return 2
        have = skeleton.read_text() if skeleton.exists() else None
        if have == want:
            continue
        rel = skeleton.relative_to(args.root)
        if args.check:
            stale.append(str(rel))
            diff = difflib.unified_diff((have or "").splitlines(True), want.splitlines(True),
                                        f"{rel} (committed)", f"{rel} (from solutions/)")
            sys.stdout.writelines(list(diff)[:60])
        else:
            skeleton.parent.mkdir(parents=True, exist_ok=True)
            skeleton.write_text(want)
            print(f"wrote {rel}")
    # The list of the student's files is derived here too, so it cannot drift.
    listing = args.root / STUDENT_FILES
    want = student_files_text(args.root)
    have = listing.read_text() if listing.exists() else None
    if have != want:
        if args.check:
            stale.append(str(STUDENT_FILES))
            sys.stdout.writelines(list(difflib.unified_diff((have or "").splitlines(True), want.splitlines(True),
                                                            f"{STUDENT_FILES} (committed)",
                                                            f"{STUDENT_FILES} (from solutions/)"))[:60])
        else:
            listing.write_text(want)
            print(f"wrote {STUDENT_FILES}")
    if stale:
        print(f"make_skeletons: {len(stale)} skeleton(s) out of date: {', '.join(stale)}\n"
              f"  run: python3 common/tools/make_skeletons.py", file=sys.stderr)
        return 1
    if args.check:
        print(f"make_skeletons: all {count} skeleton(s) match their solutions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
