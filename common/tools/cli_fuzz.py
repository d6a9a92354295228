#!/usr/bin/env python3
"""Command-line fuzz of every program the lab ships.

    cli_fuzz.py --bin BUILD/bin [--kind cpu|gpu|mpi] [--programs LIST]
                [--vectors N] [--seed S] [--jobs J] [--timeout T] [--list]
    cli_fuzz.py --replay 'JSON ARGV' [--timeout T]

For each program, a few hundred argument vectors are built from the
program's own --help: every option with its value missing, empty, negative,
zero, huge, not a number, repeated, in unicode, as a broken list or a path
that cannot be written; unknown options; pairs of options (combinations the
program may refuse); and, for the programs that read files, inputs that are
empty, truncated, of the wrong kind, a folder or missing. Each vector runs
with a small size, in a fresh empty folder, under a time limit. The limit
is each program's own: ten times a plain run of its small case on this
machine, measured first, and never less than --timeout (10 s); so a
program that does more on a big node (a peak probe over every core, every
GPU looked at) or under load gets more, and nothing waits on a fixed number
of seconds. A vector fails on
  - a timeout or a signal (a crash),
  - an exit status the program does not document for it (0 ok, 2 bad usage,
    3 not implemented yet, 77 skipped; 1 wrong result and 4 error are bugs
    on these small inputs),
  - a Python traceback,
  - exit 2 without one line on stderr naming the option or value at fault,
  - exit 2 that leaves a file behind (results are written whole or not at all).
Then the fixed cases run: regressions of bugs this fuzz found, each with the
status and message it must give. The seed is printed; a failing vector is
printed whole, as JSON that --replay takes.

--kind picks the programs: cpu (the CPU steps, apsp, and the Python tools;
the GPU programs too, whose arguments are checked before a GPU is looked for),
gpu (the GPU programs on a machine with a GPU, from gpu-check) or mpi (the
MPI programs under mpiexec, from cpu-mpi-check). Exit status: 0 all passed,
1 a vector failed, 2 bad usage.
"""
import argparse
import concurrent.futures
import json
import os
import pathlib
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import labio  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
PY = sys.executable

# The statuses every program documents ("exit status: 0 ok, 1 ..., 77 skipped").
OK_STATUSES = {0, 2, 3, 77}
TRACEBACK = "Traceback (most recent call last)"

# ---- the programs -------------------------------------------------------------
# name: kind, how to start it, what makes a run small, and the input files it reads.
CPU_STEPS = ["step01_naive", "step02_transpose", "step03_tiling", "step04_simd", "step09_semiring"]
GPU_STEPS = ["step05_cuda_shared", "step06_cuda_register_blocking", "step07_streams_multigpu"]
SMALL_STEP = ["--n", "12", "--reps", "1", "--min-time", "0"]


def programs(bin_dir, mpiexec):
    p = {}
    for s in CPU_STEPS:
        p[s] = dict(kind="cpu", cmd=[bin_dir / s], small=SMALL_STEP)
    for s in GPU_STEPS:
        p[s] = dict(kind="gpu", cmd=[bin_dir / s], small=["--n", "64", "--reps", "1", "--min-time", "0"])
    p["step07_probe"] = dict(kind="gpu", cmd=[bin_dir / "step07_probe"],
                             small=["--sizes", "256", "--bytes", "1M", "--dgemm-n", "256"])
    p["step06_ceiling"] = dict(kind="gpu", cmd=[bin_dir / "step06_ceiling"], small=[])
    # (--sweep times every candidate kernel at n = 8192, about a minute: a long mode, not fuzzed)
    p["step09_ceiling"] = dict(kind="gpu", cmd=[bin_dir / "step09_ceiling"], small=["--n", "256", "--min-time", "0"],
                               skip=["--sweep"])
    p["apsp"] = dict(kind="cpu", cmd=[bin_dir / "step09_semiring", "apsp"], small=["--graph", "@graph.gr"],
                     inputs=["--graph", "--expect"])
    p["apsp_gpu"] = dict(kind="gpu", cmd=[bin_dir / "step09_semiring", "apsp"],
                         small=["--graph", "@graph.gr", "--backend", "gpu"], inputs=["--graph", "--expect"])
    mpi = [mpiexec, "-n", "2", "--oversubscribe"] if mpiexec else []
    p["step08_mpi_3d"] = dict(kind="mpi", cmd=mpi + [bin_dir / "step08_mpi_3d"], small=SMALL_STEP)
    p["step09_semiring_mpi"] = dict(kind="mpi", cmd=mpi + [bin_dir / "step09_semiring_mpi"], small=SMALL_STEP)
    p["ladder.py"] = dict(kind="cpu", cmd=[PY, ROOT / "common/tools/ladder.py"], small=["@ladder.csv"],
                          inputs=[0], outputs=["--png"])
    p["timeline.py"] = dict(kind="cpu", cmd=[PY, ROOT / "step07_streams_multigpu/timeline.py"],
                            small=["@timeline.csv", "--png", "t.png"], inputs=[0], outputs=["--png"])
    p["plot_breakdown.py"] = dict(kind="cpu", cmd=[PY, ROOT / "step08_mpi_3d/plot_breakdown.py"],
                                  small=["@breakdown.csv", "--png", "b.png"], inputs=[0],
                                  outputs=["--png", "--scaling"])
    p["grade.py"] = dict(kind="cpu", cmd=[PY, ROOT / "common/tools/grade.py", "summary"], small=["@junit.xml"],
                         inputs=[0], help=[PY, ROOT / "common/tools/grade.py", "summary", "--help"],
                         statuses={0, 1, 2})  # summary: 1 = the report has failing tests
    return p


# ---- input files ----------------------------------------------------------------
def write_fixtures(d):
    """The good inputs (a small valid file of each kind) and the bad ones."""
    f = {}

    def put(name, text):
        path = d / name
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
        f[name] = path

    put("graph.gr", "c small\np sp 4 4\na 1 2 3\na 2 3 4\na 3 4 5\na 4 1 6\n")
    put("edges.txt", "1 2 3\n2 3 4\n")
    head = "step,variant,impl,m,n,k,threads,median_s,gflops"
    put("ladder.csv", head + ",min_s,max_s,reps,peak_gflops,pct_peak,check,device,note\n"
        "step01,naive_ijk,solution,64,64,64,1,0.001,0.5,0.001,0.001,1,10,5,pass,cpu:avx2,\n"
        "step03,tiled,solution,64,64,64,1,0.0005,1.0,0.0005,0.0005,1,10,10,pass,cpu:avx2,\n")
    sample = ROOT / "step07_streams_multigpu/tests/timeline_sample.csv"
    put("timeline.csv", sample.read_bytes() if sample.exists() else b"")
    put("breakdown.csv", head + ",p,layout,local,data,rank,wall_s,product_own_s,words_moved,words_formula,"
        "words_best_2d,words_lower_bound,local_alone_s,oversubscribed,check\n"
        "step08,cube,solution,64,64,64,1,0.01,0.05,1,cube,step04,root,0,0.01,0.008,0,0,0,0,0.008,0,pass\n")
    junit = sorted((ROOT / "common/tools/tests/fixtures").glob("*.xml"))
    put("junit.xml", junit[0].read_bytes() if junit else b"<testsuites/>")
    # Bad inputs: every file reader must answer these with one line and exit 2.
    put("bad_empty", "")
    put("bad_truncated.csv", head + "\nstep01,naive_ijk,solu")
    put("bad_header.csv", "a,b,c\n1,2,3\n")
    put("bad_number.csv", head + "\nstep01,naive_ijk,solution,64,64,64,1,abc,x\n")
    put("bad_huge.csv", head + "\nstep01,naive_ijk,solution,64,64,64,1,1e999,1e999\n")
    put("bad_binary", bytes(range(256)) * 4)
    put("bad_truncated.gr", "p sp 4 4\na 1 2 3\na 2 3")
    put("bad_vertex.gr", "p sp 2 1\na 1 9 1\n")
    put("bad_weight.gr", "p sp 2 1\na 1 2 abc\n")
    put("bad_overflow.gr", "p sp 3 2\na 1 2 1e308\na 2 3 1e308\n")
    put("bad_xml.xml", "<testsuites><testsuite name='x'><testcase")
    (d / "a_folder").mkdir(exist_ok=True)
    f["a_folder"] = d / "a_folder"
    f["missing"] = d / "no_such_file"
    return f


BAD_INPUTS = ["bad_empty", "bad_truncated.csv", "bad_header.csv", "bad_number.csv", "bad_huge.csv", "bad_binary",
              "bad_truncated.gr", "bad_vertex.gr", "bad_weight.gr", "bad_overflow.gr", "bad_xml.xml", "a_folder",
              "missing"]


# ---- options from --help ------------------------------------------------------------
OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)(?:[ =]((?:\[?[A-Z][A-Z0-9_]*\]?|[\w.]+(?:[|,][\w.]+)+|[a-z],[a-z],\.\.\.)))?")


def options_from_help(text):
    """{option: metavar or None} for every option the help text names."""
    out = {}
    for m in OPTION.finditer(text):
        name, meta = m.group(1), m.group(2)
        if name in ("-h", "--help") or name.startswith("---"):
            continue
        if meta and meta.isdigit():
            meta = None
        out.setdefault(name, meta)
        if meta and not out[name]:
            out[name] = meta
    return out


def seconds(text):
    """What a program reading seconds with strtod makes of `text` (0 when nothing)."""
    try:
        t = text.strip()
        value = float.fromhex(t) if t.lower().startswith(("0x", "-0x")) else float(t)
        return value if value == value else 0.0
    except ValueError:
        return 0.0


def good_value(meta, rng, name=""):
    """A value the option could well take (for pairs of options). A time is
    short: `--min-time 16` is a fine request, but one that takes 16 s."""
    if not meta:
        return None
    if "time" in name or "sec" in meta.lower():
        return rng.choice(["0", "0.01"])
    if "|" in meta:
        return rng.choice(meta.split("|"))
    if "," in meta and not meta.endswith("..."):
        return meta
    low = meta.lower()
    if any(w in low for w in ("file", "png", "csv", "out", "dir", "path", "json", "trace", "scaling")):
        return rng.choice(["out.csv", "out.png", "out.json"])
    return rng.choice(["1", "2", "16", "0"])


BAD_VALUES = ["", "-1", "0", "-0", "2147483649", "99999999999999999999", "1e308", "-1e308", "abc", "1.5", "nan",
              "inf", "\u00e9\u00bd\u2603", ",", "1,,2", "a,b", ",".join(["1"] * 9), "0x10", " 7", "--", "-",
              "/nonexistent/dir/x", "@a_folder", "1K", "0,0,0"]


def vectors(name, prog, opts, fixtures, rng, count):
    """`count` argument vectors for one program: each a (argv tail, culprit) pair;
    culprit is what an exit-2 message must name (an option or a value), or None."""
    small = prog["small"]
    out = []
    names = sorted(o for o in opts if o not in prog.get("skip", []))
    # Every option with every bad value, then the rest at random.
    for opt in names:
        meta = opts[opt]
        out.append((small + [opt], opt if meta else None))  # missing value (or a bare flag)
        for v in BAD_VALUES:
            if "time" in opt and 1 < seconds(v) <= 60:  # a long time is a valid request, not a bad one
                continue
            if meta:
                out.append((small + [opt, v], opt))
            else:
                out.append((small + [opt + "=" + v], opt))
        out.append((small + [opt, good_value(meta, rng, opt) or "", opt] if meta else small + [opt, opt], None))
    must = []  # the file vectors and unknown options: always run
    for junk in ["--bogus", "-z", "--", "positional", "--n=", "--\u00e9", "-" * 3]:
        must.append((small + [junk], junk))
    for inp in prog.get("inputs", []):
        for bad in BAD_INPUTS:
            tail = list(small)
            if inp == 0:
                tail[0] = "@" + bad
            else:
                tail = tail + [inp, "@" + bad]
            must.append((tail, None))
    for o in prog.get("outputs", []):
        for bad in ["@a_folder", "/nonexistent/dir/x.png", ""]:
            must.append((small + [o, bad], o))
    # Pairs: combinations a program may refuse (the message names one of them, so no culprit).
    rng.shuffle(out)
    out = must + out[:max(count - len(must), 0)]
    while len(out) < count and len(names) >= 1:
        a, b = rng.choice(names), rng.choice(names)
        tail = list(small)
        for o in (a, b):
            v = good_value(opts[o], rng, o) if rng.random() < 0.7 else rng.choice(BAD_VALUES)
            if "time" in o and 1 < seconds(v or "") <= 60:  # a long time is a valid request
                v = "0"
            tail += [o] + ([v] if opts[o] and v is not None else [])
        out.append((tail, None))
    return out


# ---- running --------------------------------------------------------------------
def resolve(arg, fixtures):
    if isinstance(arg, str) and arg.startswith("@"):
        key = arg[1:]
        return str(fixtures.get(key, arg))
    return str(arg)


def norm(text):
    return text.lstrip("-").replace("-", "_").lower()


def plain_run_seconds(prog, fixtures, cap):
    """Seconds of a plain run of the program's small case here (its start-up and
    probes included), or None when it did not end within cap seconds."""
    argv = [str(c) for c in prog["cmd"]] + [resolve(a, fixtures) for a in prog["small"]]
    work = pathlib.Path(tempfile.mkdtemp(prefix="fuzz-"))
    env = dict(os.environ, OMP_NUM_THREADS="1", MPLBACKEND="Agg", TMPDIR=str(work))
    try:
        t0 = time.monotonic()
        subprocess.run(argv, cwd=work, stdin=subprocess.DEVNULL, capture_output=True, timeout=cap, env=env)
        return time.monotonic() - t0
    except subprocess.TimeoutExpired:
        return None
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_vector(cmd, tail, culprit, fixtures, timeout, allowed=OK_STATUSES):
    """Runs one vector in a fresh folder; returns None when it behaved, else why not."""
    argv = [str(c) for c in cmd] + [resolve(a, fixtures) for a in tail]
    work = pathlib.Path(tempfile.mkdtemp(prefix="fuzz-"))
    # TMPDIR: the run's own folder (mpiexec's of several runs at once race for one session folder in /tmp)
    env = dict(os.environ, OMP_NUM_THREADS="1", MPLBACKEND="Agg", TMPDIR=str(work))
    try:
        t0 = time.monotonic()
        try:
            p = subprocess.run(argv, cwd=work, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout,
                               env=env)
        except subprocess.TimeoutExpired:
            return f"no answer within {timeout:g} s"
        took = time.monotonic() - t0
        out = p.stdout.decode(errors="replace")
        err = p.stderr.decode(errors="replace")
        if p.returncode < 0:
            return f"killed by signal {-p.returncode}"
        if TRACEBACK in out or TRACEBACK in err:
            return "a Python traceback:\n" + err[-2000:]
        if p.returncode not in allowed:
            return f"exit status {p.returncode} ({took:.1f} s): {(err or out).strip()[-600:]}"
        if p.returncode == 2:
            # (mpiexec adds its own framed note when a rank exits non-zero: not the program's words)
            lines = [l for l in err.split("-" * 20)[0].splitlines() if l.strip()]
            if not lines:
                return "exit 2 without a message on stderr"
            if len(lines) > 1 and not lines[0].startswith("usage:"):
                return "exit 2 with more than one line on stderr:\n" + err[-1200:]
            text = norm(" ".join(lines))
            if culprit is not None:
                # the option by its name (--flag, flag or flag_name), without an inline value
                c = resolve(culprit, fixtures).split("=")[0]
                if norm(c) not in text:
                    return f"exit 2, but the message does not name {c!r}: {lines[-1]}"
            left = sorted(str(x.relative_to(work)) for x in work.rglob("*"))
            if left:
                return f"exit 2 left files behind: {left}"
        return None
    finally:
        shutil.rmtree(work, ignore_errors=True)


# ---- fixed cases: the bugs this fuzz found, and what each must give now ----------------
# (program, argv tail, allowed statuses, regex the output must match, seconds of CPU time for an exit 2)
FIXED = [
    ("step07_streams_multigpu", ["--n", "256", "--device-mem-limit", "1K", "--variant", "streams"], {2},
     r"device.mem.limit.*needs at least", 2),
    ("step07_streams_multigpu", ["--n", "8192", "--device-mem-limit", "1K", "--variant", "streams"], {2},
     r"device.mem.limit.*needs at least", 2),
    ("step07_streams_multigpu", ["--n", "2048", "--tile", "7,7,7", "--variant", "streams"], {2},
     r"tile: 7x7x7 tiles .* more than the 1000000", 2),
    ("step07_streams_multigpu", ["--n", "64", "--tile", "7,7,7", "--variant", "streams"], {0, 77}, r"", 10),
    ("step07_streams_multigpu", ["--n", "64", "--csv", "@a_folder"], {2}, r"--csv: cannot write .*is a folder", 2),
    ("step01_naive", ["--n", "8", "--csv", "@a_folder"], {2}, r"--csv: cannot write .*is a folder", 5),
    ("step01_naive", ["--n", "8", "--json", "/nonexistent/dir/x.json"], {2}, r"--json: cannot write .*no folder", 5),
    ("step07_probe", ["--sizes", "abc"], {2}, r"--sizes expects a size", 5),
    ("step07_probe", ["--sizes", "nan"], {2}, r"--sizes expects a size", 5),
    ("step07_probe", ["--streams", "1e308"], {2}, r"--streams expects a size", 5),
    ("step07_probe", ["--csv", "@a_folder"], {2}, r"--csv: cannot write .*is a folder", 5),
    ("step07_probe", ["--model-gpus", "0"], {2}, r"--model-gpus expects a whole number of GPUs", 5),
    ("step07_probe", ["--model-gpus", "1.5"], {2}, r"--model-gpus expects a whole number of GPUs", 5),
    ("step07_probe", ["--sustain", "0"], {2}, r"--sustain expects a whole number of seconds from 1 to 600, got '0'", 5),
    ("step07_probe", ["--sustain", "2.5"], {2}, r"--sustain expects a whole number of seconds", 5),
    ("step07_probe", ["--sustain", "601"], {2}, r"--sustain expects a whole number of seconds", 5),
    ("step07_probe", ["--depths", "1e9"], {2}, r"--depths: a panel 1000000000 deep is deeper than the largest", 5),
    ("apsp", ["--graph", "@graph.gr", "--expect", "0"], {2}, r"--expect 0: cannot open", 5),
    ("apsp", ["--graph", "@bad_overflow.gr"], {2}, r"can overflow a double.*at most", 5),
    ("apsp", ["--graph", "@graph.gr", "--out", "@a_folder"], {2}, r"--out: cannot write .*is a folder", 5),
    ("apsp", ["--graph", "@graph.gr", "--expect", "@a_folder"], {2}, r"is a folder", 5),
    ("step07_streams_multigpu", ["--n", "64", "--tile", "1,,2", "--variant", "streams"], {2},
     r"--tile: an empty entry in '1,,2'", 2),
    ("step04_simd", ["--sizes", "16,,32"], {2}, r"--sizes: an empty entry", 5),
    ("step04_simd", ["--n", "64", "--tile", "1,2,3,4,5", "--csv", "out.csv"], {2}, r"tile", 5),
    ("step09_ceiling", ["--n", "256", "--csv", "out.csv", "--csv"], {2}, r"--csv needs a value", 5),
]


def executable(prog):
    """The program's file (the binary, or the Python script)."""
    return pathlib.Path(str(next(c for c in prog["cmd"] if isinstance(c, pathlib.Path))))


def run_fixed(progs, fixtures, kinds, timeouts):
    failures = 0
    for name, tail, allowed, pattern, limit in FIXED:
        prog = progs[name]
        if prog["kind"] not in kinds or not executable(prog).exists() or name not in timeouts:
            continue
        timeout = timeouts[name]
        argv = [str(c) for c in prog["cmd"]] + [resolve(a, fixtures) for a in tail]
        # (the limit is on the CPU time the program took: a busy CI machine stretches the wall time)
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        try:
            p = subprocess.run(argv, capture_output=True, timeout=max(limit, timeout) * 3, cwd=tempfile.gettempdir())
            text = p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace")
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            took = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
            why = None
            if p.returncode not in allowed:
                why = f"exit {p.returncode}, expected {sorted(allowed)}"
            elif pattern and not re.search(pattern, text):
                why = f"output does not match /{pattern}/"
            elif took > limit and p.returncode == 2:
                why = f"took {took:.1f} s of CPU time, more than {limit} s"
        except subprocess.TimeoutExpired:
            why, text = "timeout", ""
        if why:
            failures += 1
            print(f"FIXED FAIL {name}: {why}\n  replay: {json.dumps(argv)}\n  {text.strip()[-600:]}")
        else:
            print(f"fixed ok   {name} {' '.join(tail)}")
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", type=pathlib.Path, help="the folder of the built programs (BUILD/bin)")
    ap.add_argument("--kind", default="cpu", help="cpu, gpu or mpi, or a comma list (default cpu)")
    ap.add_argument("--programs", help="only these programs (comma-separated; see --list)")
    ap.add_argument("--vectors", type=int, default=300, help="vectors per program (default 300)")
    ap.add_argument("--seed", type=int, help="the random seed (default: from the clock; printed)")
    ap.add_argument("--jobs", type=int, default=labio.usable_cores(),
                    help="vectors run at once (default: the cores this may use)")
    ap.add_argument("--timeout", type=float, default=10.0,
                    help="seconds per vector at least (default 10); a program whose plain run takes longer "
                         "than a tenth of it gets ten times that run")
    ap.add_argument("--mpiexec", default=shutil.which("mpiexec") or "mpiexec")
    ap.add_argument("--list", action="store_true", help="list the programs and exit")
    ap.add_argument("--replay", help="run one vector (the JSON argv a failure printed) and show its output")
    a = ap.parse_args()
    # one folder per account: on a shared machine another user's would not be writable
    fixtures_dir = pathlib.Path(tempfile.gettempdir()) / f"cli_fuzz_inputs-{os.getuid()}"
    fixtures_dir.mkdir(exist_ok=True)
    if a.replay:
        try:
            argv = json.loads(a.replay)
        except ValueError as e:
            ap.error(f"--replay: not a JSON list of arguments: {e}")
        write_fixtures(fixtures_dir)  # the inputs the vector names, as the run had them
        p = subprocess.run(argv, timeout=a.timeout)
        print(f"cli_fuzz: exit status {p.returncode}")
        return p.returncode
    if a.vectors < 1 or a.jobs < 1 or not a.timeout > 0:
        ap.error("--vectors, --jobs and --timeout must be positive")
    if a.bin is None:
        ap.error("--bin BUILD/bin is required")
    if not a.bin.is_dir():
        ap.error(f"--bin: {a.bin} is not a folder")
    kinds = set(a.kind.split(","))
    if not kinds <= {"cpu", "gpu", "mpi"}:
        ap.error(f"--kind takes cpu, gpu or mpi, got {a.kind!r}")
    progs = programs(a.bin.resolve(), a.mpiexec)
    # Open MPI's mpiexec refuses root without these (CI containers run as root).
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    if a.list:
        for n, p in progs.items():
            print(f"{n:28s} {p['kind']}")
        return 0
    # cpu: the GPU programs too, whose arguments are checked before a GPU is looked for.
    run_kinds = kinds | ({"gpu"} if "cpu" in kinds else set())
    chosen = [n for n, p in progs.items() if p["kind"] in run_kinds]
    if a.programs:
        wanted = a.programs.split(",")
        unknown = [w for w in wanted if w not in progs]
        if unknown:
            ap.error(f"--programs: unknown program(s) {unknown} (see --list)")
        chosen = [n for n in chosen if n in wanted]
    seed = a.seed if a.seed is not None else int(time.time()) % 1000000
    print(f"cli_fuzz: seed {seed} (replay the whole run with --seed {seed})", flush=True)
    t_start = time.monotonic()
    failed = 0
    fixtures = write_fixtures(fixtures_dir)
    jobs = []
    timeouts = {}
    for name in chosen:
        prog = progs[name]
        if not executable(prog).exists():
            print(f"  {name:26s} not built here: skipped")
            continue
        help_cmd = prog.get("help", [*prog["cmd"], "--help"])
        h = subprocess.run([str(c) for c in help_cmd], capture_output=True, timeout=a.timeout * 30)
        text = h.stdout.decode(errors="replace") + h.stderr.decode(errors="replace")
        opts = options_from_help(text)
        if h.returncode != 0 or not opts:
            print(f"FAIL {name}: --help exited {h.returncode} with {len(opts)} options: {text[-400:]}")
            failed += 1
            continue
        # its own limit: ten times a plain run here, at least --timeout
        plain = plain_run_seconds(prog, fixtures, a.timeout * 30)
        if plain is None:
            print(f"FAIL {name}: a plain run ({' '.join(prog['small'])}) did not end within {a.timeout * 30:g} s")
            failed += 1
            continue
        timeouts[name] = max(a.timeout, 10 * plain)
        rng = random.Random(f"{seed}:{name}")
        # The GPU programs, fuzzed on the CPU machine, mostly meet "no GPU": fewer vectors there.
        count = a.vectors if prog["kind"] in kinds else max(a.vectors // 3, 1)
        vs = vectors(name, prog, opts, fixtures, rng, count)
        jobs.append((name, prog, vs, len(opts)))
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        for name, prog, vs, nopts in jobs:
            t0 = time.monotonic()
            allowed = prog.get("statuses", OK_STATUSES)
            futs = [(tail, pool.submit(run_vector, prog["cmd"], tail, culprit, fixtures, timeouts[name], allowed))
                    for tail, culprit in vs]
            bad = 0
            for tail, fut in futs:
                why = fut.result()
                if why:
                    bad += 1
                    argv = [str(c) for c in prog["cmd"]] + [resolve(x, fixtures) for x in tail]
                    print(f"FAIL {name}: {why}\n  replay: {json.dumps(argv)}", flush=True)
            print(f"  {name:26s} {len(vs):4d} vectors from {nopts} options, {bad} failed, "
                  f"{time.monotonic() - t0:.1f} s (limit {timeouts[name]:.0f} s a vector)", flush=True)
            failed += bad
    failed += run_fixed(progs, fixtures, run_kinds, timeouts)
    print(f"cli_fuzz: seed {seed}, {failed} failure(s), {time.monotonic() - t_start:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
