#!/usr/bin/env python3
"""Strong scaling of the CPU steps: GFLOP/s against threads for step04, step09's
min-plus and OpenBLAS, and the table of step04 against OpenBLAS on many threads.

    python3 common/tools/scaling.py OUT [--make] [--build build/solution] [--threads 1,2,4,...,all]
        [--n 4096] [--table-threads 16,32,64] [--table-sizes 2048,4096,8192] [--reps 3]
        [--openblas-coretype NAME]
    python3 common/tools/scaling.py OUT --plot-only      # table and picture again, from OUT's files
                                                         # (on any machine: the run's thread counts)

--make configures and builds the two executables first (the --build folder's
preset, CUDA and MPI off: the CPU steps alone).

For each thread count T it runs, each the median of --reps repeats:
  step04_simd --threads T --variant simd,openblas (step04 and OpenBLAS, one process)
  step09_semiring --threads T --variant minplus,step04_dgemm (min-plus and step04, one process)
at n = --n (m = n = k), and for T in --table-threads also at --table-sizes. It
writes to OUT:
  step04.csv, step09.csv   the benchmark rows (the step executables' --csv)
  banners.json, scaling.log  each run's banner (kernels, ways or dealt blocks) and its whole output
  meta.json                the machine (CPU model, processors) and --reps, for --plot-only
  table.md                 step04 / OpenBLAS per T and n; step09 min-plus / step04 DGEMM
  scaling.png              GFLOP/s against T at n = --n, each with its ideal line
                           (its one-thread rate times T), log-log
  ceiling/                 the ceiling: at the largest table thread count T, T
                           one-thread step04 processes at once (one per core),
                           each its own n = --ceiling-n product: the kernel and
                           the memory system with nothing shared; their sum is
                           in table.md
and prints the table. "1,2,4,...,all" means the powers of two below the
number of processors, then all of them. --table-threads keeps only the counts
this machine has (16, 32, 64 on a 64-core node; on 2 cores: 1 and 2).
OpenBLAS runs on its own kernel choice: OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE
are removed from the benchmarks' environment, and the kernel it runs is on the
banner (and in table.md). An OpenBLAS older than the CPU picks a slow generic
kernel (0.3.21 on a CPU it does not know: Prescott, a sixth of its speed);
--openblas-coretype then names the one it runs (its fastest, as
common/tools/openblas-check finds it), and table.md says so.
"""
import argparse
import csv
import json
import os
import pathlib
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import labio  # noqa: E402  (one line where matplotlib is missing: which Python, and one that has it)

ROOT = pathlib.Path(__file__).resolve().parents[2]


def thread_counts(spec, cores):
    out = []
    for part in spec.split(","):
        part = part.strip()
        if part == "...":
            last = out[-1] if out else 1
            t = last * 2
            while t < cores:
                out.append(t)
                t *= 2
        elif part == "all":
            out.append(cores)
        elif part.isdigit() and int(part) >= 1:
            out.append(int(part))
        else:
            raise ValueError(f"'{part}' is not a thread count (1, 2, ...), '...' or 'all'")
    return sorted(set(out))


def run(cmd, env, log):
    print("+ " + " ".join(cmd), flush=True)
    with open(log, "a") as f:
        f.write("+ " + " ".join(cmd) + "\n")
        f.flush()
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        f.write(p.stdout)
    banner = [line for line in p.stdout.splitlines() if line.startswith("#")]
    for line in banner:
        print("  " + line)
    if p.returncode != 0:
        print(p.stdout[-4000:], file=sys.stderr)
        sys.exit(f"scaling: {cmd[0]} failed (exit {p.returncode}); see {log}")
    return banner


def ceiling(step04, threads, n, reps, env, folder):
    """`threads` one-thread step04 runs at once, each pinned to a core of its own."""
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.csv"):
        old.unlink()
    cpus = sorted(os.sched_getaffinity(0))
    cmd = [str(step04), "--n", str(n), "--threads", "1", "--variant", "simd", "--impl", "solution",
           "--reps", str(max(reps, 5))]
    print(f"+ {threads} x " + " ".join(cmd) + " (at once, one per core)", flush=True)
    procs = [subprocess.Popen(cmd + ["--csv", str(folder / f"process{i}.csv")], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                              preexec_fn=lambda c=cpus[i % len(cpus)]: os.sched_setaffinity(0, {c}))
             for i in range(threads)]
    if any(p.wait() != 0 for p in procs):
        print("scaling: a ceiling process failed; no ceiling", file=sys.stderr)


def rows_of(path):
    if not path.exists():
        return []
    with open(path, newline="") as f:
        return [r for r in csv.DictReader(f) if r.get("check", "pass") == "pass"]


def rate(rows, variant, threads, n):
    g = [float(r["gflops"]) for r in rows
         if r["variant"] == variant and int(r["threads"]) == threads and int(r["n"]) == n]
    return statistics.median(g) if g else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=pathlib.Path)
    ap.add_argument("--build", type=pathlib.Path, default=ROOT / "build" / "solution")
    ap.add_argument("--make", action="store_true", help="configure and build the two executables first")
    ap.add_argument("--plot-only", action="store_true", help="no runs: the table and picture from OUT's CSVs")
    ap.add_argument("--openblas-coretype", help="OPENBLAS_CORETYPE for the runs (default: OpenBLAS's own choice)")
    ap.add_argument("--threads", default="1,2,4,...,all")
    ap.add_argument("--n", type=int, help="m = n = k of the scaling runs (default 4096; --plot-only: the run's)")
    ap.add_argument("--table-threads", default="16,32,64")
    ap.add_argument("--table-sizes", default="2048,4096,8192")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--ceiling-n", type=int, default=2048, help="each process's n for the ceiling (0: none)")
    args = ap.parse_args()
    cores = labio.usable_cores()  # "all"

    def counts_of(option, spec):  # the thread counts of a list, or argparse's one line
        try:
            return thread_counts(spec, cores)
        except ValueError as e:
            ap.error(f"{option}: {e}")

    counts = counts_of("--threads", args.threads)
    table_threads = [t for t in counts_of("--table-threads", args.table_threads) if t <= cores] or sorted({1, cores})
    if not all(s.strip().isdigit() and int(s) >= 1 for s in args.table_sizes.split(",")):
        ap.error(f"--table-sizes: '{args.table_sizes}' is not a list of sizes, e.g. 2048,4096,8192")
    table_sizes = [int(s) for s in args.table_sizes.split(",")]
    # The machine of the run (meta.json, written by the run; --plot-only may redraw elsewhere).
    meta_path = args.out / "meta.json"
    try:
        run_meta = json.loads(meta_path.read_text()) if args.plot_only else None
    except (OSError, ValueError):
        run_meta = None
    if args.n is None:  # --plot-only draws the run's n, a run its own
        args.n = int(run_meta.get("n", 4096)) if run_meta else 4096
    for name, v, least in (("--n", args.n, 1), ("--reps", args.reps, 1), ("--ceiling-n", args.ceiling_n, 0)):
        if v < least:
            ap.error(f"{name}: {v} is below {least}")
    step04 = args.build / "bin" / "step04_simd"
    step09 = args.build / "bin" / "step09_semiring"
    args.out.mkdir(parents=True, exist_ok=True)
    csv04, csv09, log = args.out / "step04.csv", args.out / "step09.csv", args.out / "scaling.log"
    if args.plot_only:
        try:
            banners = {int(t): b for t, b in json.loads((args.out / "banners.json").read_text()).items()}
        except (OSError, ValueError):
            banners = {}
    else:
        if args.make:
            preset = args.build.name
            build = ["cmake", "--build", str(args.build), "-j", str(cores), "--target", "step04_simd",
                     "step09_semiring"]
            for cmd in (["cmake", "--preset", preset, "-DLAB_ENABLE_CUDA=OFF", "-DLAB_ENABLE_MPI=OFF"], build):
                print("+ " + " ".join(cmd), flush=True)
                if subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL).returncode != 0:
                    sys.exit(f"scaling: {' '.join(cmd)} failed")
        for exe in (step04, step09):
            if not exe.exists():
                sys.exit(f"scaling: {exe} is not built (--make builds it)")
        for p in (csv04, csv09, log):
            p.unlink(missing_ok=True)
        env = {k: v for k, v in os.environ.items()
               if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OMP_NUM_THREADS")}
        if args.openblas_coretype:
            env["OPENBLAS_CORETYPE"] = args.openblas_coretype
        banners = {}
        for t in sorted(set(counts) | set(table_threads)):
            sizes = sorted({args.n} | (set(table_sizes) if t in table_threads else set()))
            common = ["--sizes", ",".join(map(str, sizes)), "--threads", str(t), "--reps", str(args.reps)]
            banners[t] = run([str(step04), *common, "--variant", "simd,openblas", "--impl", "solution,baseline",
                              "--csv", str(csv04)], env, log)
            if t in counts or t == max(table_threads):
                run([str(step09), "--sizes", str(args.n), "--threads", str(t), "--reps", str(args.reps),
                     "--variant", "minplus,step04_dgemm", "--impl", "solution", "--csv", str(csv09)], env, log)
        (args.out / "banners.json").write_text(json.dumps(banners, indent=1))
        if args.ceiling_n > 0:
            ceiling(step04, max(table_threads), args.ceiling_n, args.reps, env, args.out / "ceiling")
    r04, r09 = rows_of(csv04), rows_of(csv09)
    if args.plot_only:  # the thread counts of the run, wherever it ran (not this machine's)
        ran = sorted({int(r["threads"]) for r in r04})
        if not ran:
            sys.exit(f"scaling: {csv04} has no passing rows")
        at_n = {int(r["threads"]) for r in r04 if int(r["n"]) == args.n}
        counts = [t for t in ran if t in at_n]
        wanted = [int(t) for t in args.table_threads.split(",")]
        table_threads = [t for t in ran if t in wanted] or sorted({ran[0], ran[-1]})

    if run_meta:
        meta = run_meta
    else:
        with open("/proc/cpuinfo") as f:
            model = next((l for l in f if l.startswith("model name")), "model name: ?").split(":", 1)[1].strip()
        meta = {"cpu": model, "processors": cores, "reps": args.reps, "n": args.n}
        meta_path.write_text(json.dumps(meta, indent=1))
    cpu, cores = meta["cpu"], meta["processors"]
    lines = ["# step04 against OpenBLAS (same process, median of %d)" % meta["reps"], ""]
    lines += [f"CPU: {cpu}, {cores} processors", ""]
    openblas = next((b for t in sorted(banners) for b in banners[t] if b.startswith("# openblas:")), None)
    if openblas:
        lines += [f"OpenBLAS: {openblas[len('# openblas:'):].strip()}", ""]
    lines += ["| threads | " + " | ".join(f"n = {n}" for n in table_sizes) + " |",
              "|---:|" + "---:|" * len(table_sizes)]
    for t in table_threads:
        cells = []
        for n in table_sizes:
            a, b = rate(r04, "simd", t, n), rate(r04, "openblas", t, n)
            cells.append(f"{a / b:.2f} ({a:.0f} vs {b:.0f})" if a and b else "")
        lines.append(f"| {t} | " + " | ".join(cells) + " |")
    lines += ["", "How the threads shared the work (step04's banner: ways, or dealt blocks):", ""]
    for t in sorted(banners):
        for b in banners[t]:
            if b.startswith("# simd: plan:"):
                lines.append(f"- {t} threads: {b.split('plan:', 1)[1].strip()}")
    t9 = max(table_threads)
    mp, dg = rate(r09, "minplus", t9, args.n), rate(r09, "step04_dgemm", t9, args.n)
    lines += ["", f"step09 min-plus / step04 DGEMM, {t9} threads, n = {args.n}: "
              + (f"{mp / dg:.2f} ({mp:.0f} vs {dg:.0f} GFLOP/s)" if mp and dg else "not measured")]
    parts = [rows_of(p) for p in sorted((args.out / "ceiling").glob("process*.csv"))]
    rates = [float(r[0]["gflops"]) for r in parts if r]
    if rates:
        own = rate(r04, "simd", t9, args.n)
        lines += ["", f"Ceiling: {len(rates)} one-thread step04 processes at once (one per core), each its own "
                  f"n = {rows_of(sorted((args.out / 'ceiling').glob('process*.csv'))[0])[0]['n']} product, "
                  f"nothing shared: {sum(rates):.0f} GFLOP/s in all ({min(rates):.1f}-{max(rates):.1f} each)"
                  + (f"; step04 on {t9} threads at n = {args.n}: {own:.0f} ({own / sum(rates):.2f} of it)"
                     if own else "")]
    lines += ["", f"Scaling at n = {args.n} (GFLOP/s):", "",
              "| threads | step04 | step09 min-plus | OpenBLAS |", "|---:|---:|---:|---:|"]
    series = [("step04 (simd)", r04, "simd"), ("step09 min-plus", r09, "minplus"), ("OpenBLAS", r04, "openblas")]
    for t in counts:
        cells = [rate(rows, v, t, args.n) for _, rows, v in series]
        lines.append(f"| {t} | " + " | ".join(f"{c:.1f}" if c else "" for c in cells) + " |")
    (args.out / "table.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        print(labio.no_matplotlib("scaling", "no PNG"), file=sys.stderr)
        return 0
    fig, ax = plt.subplots(figsize=(7.5, 5))
    drawn = []
    for (name, rows, v), color in zip(series, ["#1f77b4", "#2ca02c", "#7f7f7f"]):
        pts = [(t, rate(rows, v, t, args.n)) for t in counts]
        pts = [(t, g) for t, g in pts if g]
        if not pts:
            continue
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", color=color, label=name)
        drawn += [g for _, g in pts]
        one = rate(rows, v, 1, args.n)
        if one:
            drawn += [one * t for t in counts]
            ax.plot(counts, [one * t for t in counts], linestyle=":", color=color, linewidth=1,
                    label=f"{name}: 1-thread rate x threads")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    # (over fewer than three doublings, as on 2 cores, powers of 2 alone leave one label or none)
    if drawn and max(drawn) < 8 * min(drawn):
        ax.yaxis.set_major_locator(matplotlib.ticker.LogLocator(base=2, subs=(1.0, 1.25, 1.5, 1.75)))
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_xticks(counts)
    ax.set_xticklabels([str(t) for t in counts])
    ax.set_xlabel("threads")
    ax.set_ylabel("GFLOP/s")
    ax.set_title(f"Strong scaling, n = {args.n}: {cpu}, {cores} processors", fontsize=9)
    ax.grid(which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    png = args.out / "scaling.png"
    tmp = args.out / "scaling.tmp.png"
    fig.savefig(tmp, dpi=110)
    os.replace(tmp, png)
    print(f"scaling: wrote {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
