"""Files in and out for the lab's Python tools (ladder.py, timeline.py,
plot_breakdown.py): every bad input ends in one line on stderr and exit 2,
and every file asked for is written whole or not at all.

    import labio
    rows = labio.read_csv("ladder", path, ["step", "variant", ...])
    gflops = labio.number("ladder", path, row, "gflops")
    labio.check_output("ladder", "--png", args.png)      # before any work
    labio.save_figure("ladder", "--png", fig, args.png)   # temporary name, then renamed
"""
import csv
import math
import os
import pathlib
import sys
import tempfile


def usable_cores():
    """The cores this process may run on (a Slurm allocation's, taskset's), not the machine's."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def fail(prog, msg):
    """One line on stderr, exit status 2 (bad usage or input)."""
    print(f"{prog}: error: {' '.join(str(msg).split())}", file=sys.stderr)
    sys.exit(2)


def read_csv(prog, path, need):
    """The rows of a CSV with at least the columns `need`, as dicts (each with
    its line number under "_line"). An empty, binary, truncated or
    foreign file, a folder, a missing or unreadable file: fail()."""
    p = pathlib.Path(path)
    if p.is_dir():
        fail(prog, f"{path} is a folder, not a CSV file")
    try:
        with open(p, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            header = reader.fieldnames
            if not header:
                fail(prog, f"{path} is empty (expected a header line with {','.join(need)})")
            missing = [c for c in need if c not in header]
            if missing:
                fail(prog, f"{path} lacks the column(s) {','.join(missing)} (is it the right file?)")
            rows = []
            for r in reader:
                if None in r or any(r[c] is None for c in need):
                    fail(prog, f"{path}:{reader.line_num}: {len(r) - (None in r)} fields where the header has "
                               f"{len(header)} (a truncated or foreign line)")
                r["_line"] = reader.line_num
                rows.append(r)
    except OSError as e:
        fail(prog, f"cannot read {path}: {e.strerror}")
    except (UnicodeDecodeError, csv.Error) as e:
        fail(prog, f"{path} is not a CSV text file ({e.__class__.__name__})")
    if not rows:
        fail(prog, f"{path} has a header but no rows")
    return rows


def number(prog, path, row, col, kind=float, blank=None):
    """row[col] as a finite `kind`; `blank` where the field is empty (None: an error)."""
    text = row.get(col)
    if (text is None or text.strip() == "") and blank is not None:
        return blank
    try:
        v = kind(text)
    except (TypeError, ValueError):
        fail(prog, f"{path}:{row.get('_line', '?')}: column {col} is {text!r}, not a number")
    if kind is float and not math.isfinite(v):
        fail(prog, f"{path}:{row.get('_line', '?')}: column {col} is {text!r}, not a finite number")
    return v


def check_output(prog, flag, path):
    """Refuses, before any work, an output path that cannot be written."""
    if path is None:
        return
    if path == "":
        fail(prog, f"{flag} needs a file name")
    p = pathlib.Path(path)
    if p.is_dir():
        fail(prog, f"{flag} {path}: is a folder")
    folder = p.parent if str(p.parent) else pathlib.Path(".")
    if not folder.is_dir():
        fail(prog, f"{flag} {path}: there is no folder {folder}")
    if not os.access(folder, os.W_OK):
        fail(prog, f"{flag} {path}: the folder {folder} is not writable")


def _replace_whole(path, write):
    """write(tmp_path) into a temporary name beside `path`, then rename it over `path`."""
    p = pathlib.Path(path)
    if p.exists() and not p.is_file():  # a device or pipe (/dev/null): renaming over it would replace it
        write(str(p))
        return
    fd, tmp = tempfile.mkstemp(prefix=p.name + ".", suffix=p.suffix, dir=str(p.parent) if str(p.parent) else ".")
    os.close(fd)
    try:
        write(tmp)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
        os.replace(tmp, p)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def save_figure(prog, flag, fig, path, **kw):
    """fig.savefig, whole or not at all (the format from the name's suffix:
    one matplotlib does not write is refused naming `flag`)."""
    fmt = pathlib.Path(path).suffix.lstrip(".").lower() or "png"
    if fmt not in fig.canvas.get_supported_filetypes():
        fail(prog, f"{flag} {path}: matplotlib does not write .{fmt} files "
                   f"({', '.join(sorted(fig.canvas.get_supported_filetypes()))})")
    _replace_whole(path, lambda tmp: fig.savefig(tmp, format=fmt, **kw))


def write_text(path, text):
    """A text file, whole or not at all."""
    def write(tmp):
        with open(tmp, "w", encoding="utf-8", newline="") as f:
            f.write(text)
    _replace_whole(path, write)


def no_matplotlib(prog, lost="no picture"):
    """The line to print where this Python has no matplotlib: which Python it
    was, and another on this machine that has it (as `./lab doctor` finds one),
    else how to install it."""
    import shutil
    import subprocess
    here = os.path.realpath(sys.executable)
    for cand in (shutil.which("python3"), "/usr/bin/python3", "/usr/local/bin/python3"):
        if not cand or not os.path.exists(cand) or os.path.realpath(cand) == here:
            continue
        try:
            ok = subprocess.run([cand, "-c", "import matplotlib"], capture_output=True, timeout=30).returncode == 0
        except (OSError, subprocess.SubprocessError):
            ok = False
        if ok:
            return f"{prog}: {lost}: matplotlib is not installed for {sys.executable}; {cand} has it: run this with {cand}"
    return (f"{prog}: {lost}: matplotlib is not installed for {sys.executable} (pip install matplotlib, "
            "or apt-get install python3-matplotlib)")
