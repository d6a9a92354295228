#!/usr/bin/env python3
"""Print and draw a size sweep: GFLOP/s against n, each variant beside OpenBLAS.

    build/both/bin/step04_simd --sizes 4,8,16,32,64,128,256,512,1024,2048 --threads 1 \\
        --variant simd,openblas --impl solution,baseline --csv results/sweep.csv
    python3 common/tools/sweep.py results/sweep.csv [--png results/sweep.png]

The CSV is what the step executables write with --csv (first columns
step,variant,impl,m,n,k,threads,median_s,gflops); the rows with m = n = k are
used. The table gives, for every size, each variant's GFLOP/s, its time per
call and its ratio to OpenBLAS at the same size and thread count. Where the
CSV holds several runs of a size (a sweep appended twice), the table shows
their median and the spread (lowest-highest) of the ratio.
"""
import argparse
import csv
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import labio  # noqa: E402  (one line where matplotlib is missing: which Python, and one that has it)

VENDOR = "openblas"


def load(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    need = ["step", "variant", "impl", "m", "n", "k", "threads", "median_s", "gflops"]
    if rows and any(c not in rows[0] for c in need):
        sys.exit(f"sweep: {path} lacks the columns {need}")
    out = []
    for r in rows:
        if r.get("check", "pass") != "pass" or not (r["m"] == r["n"] == r["k"]):
            continue
        out.append({"series": (r["variant"], r["impl"], int(r["threads"])), "step": r["step"], "n": int(r["n"]),
                    "gflops": float(r["gflops"]), "median_s": float(r["median_s"])})
    return out


def label(series, step):
    variant, impl, threads = series
    name = "OpenBLAS" if variant == VENDOR else f"{step} {variant} ({impl})"
    return f"{name}, {threads} thr"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--png")
    args = ap.parse_args()
    try:
        rows = load(args.csv)
    except OSError as e:
        sys.exit(f"sweep: cannot read {args.csv}: {e.strerror}")
    if not rows:
        sys.exit(f"sweep: {args.csv} has no passing rows with m = n = k")
    steps = {r["series"]: r["step"] for r in rows if r["series"][0] != VENDOR}
    # Runs of one (series, n) in file order: the i-th OpenBLAS row of a size
    # pairs with the i-th row of each variant there (the same pass of the sweep).
    runs = {}
    for r in rows:
        runs.setdefault((r["series"], r["n"]), []).append(r)
    sizes = sorted({r["n"] for r in rows})
    series = [s for s in dict.fromkeys(r["series"] for r in rows) if s[0] != VENDOR]

    print(f'{"n":>6} {"series":<34} {"GFLOP/s":>9} {"us/call":>10} {"OpenBLAS":>9} {"ratio":>7} {"spread":>13}')
    for n in sizes:
        for s in series:
            mine = runs.get((s, n))
            if not mine:
                continue
            vendor = runs.get(((VENDOR, "baseline", s[2]), n), [])
            gf = statistics.median(r["gflops"] for r in mine)
            us = 1e6 * statistics.median(r["median_s"] for r in mine)
            line = f'{n:>6} {label(s, steps[s]):<34} {gf:>9.2f} {us:>10.3f}'
            if vendor:
                vg = statistics.median(r["gflops"] for r in vendor)
                ratios = [a["gflops"] / b["gflops"] for a, b in zip(mine, vendor) if b["gflops"] > 0]
                spread = f"{min(ratios):.2f}-{max(ratios):.2f}" if len(ratios) > 1 else ""
                line += f' {vg:>9.2f} {gf / vg:>7.2f} {spread:>13}'
            print(line)
    if not args.png:
        return 0
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(labio.no_matplotlib("sweep", "no PNG"), file=sys.stderr)
        return 0
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 7), sharex=True, gridspec_kw={"height_ratios": [2, 1]})
    everything = series + [s for s in dict.fromkeys(r["series"] for r in rows) if s[0] == VENDOR]
    for s in everything:
        ns = [n for n in sizes if (s, n) in runs]
        gf = [statistics.median(r["gflops"] for r in runs[(s, n)]) for n in ns]
        vendor = s[0] == VENDOR
        top.plot(ns, gf, marker="o", linestyle="--" if vendor else "-", color="#7f7f7f" if vendor else None,
                 label=label(s, steps.get(s, "")))
    for s in series:
        pairs = [(n, runs[(s, n)], runs.get(((VENDOR, "baseline", s[2]), n))) for n in sizes if (s, n) in runs]
        pairs = [(n, statistics.median(r["gflops"] for r in a) / statistics.median(r["gflops"] for r in b))
                 for n, a, b in pairs if b]
        if pairs:
            bottom.plot([p[0] for p in pairs], [p[1] for p in pairs], marker="o", label=label(s, steps[s]))
    top.set_xscale("log", base=2)
    top.set_ylabel("GFLOP/s")
    top.set_title("GFLOP/s against n (m = n = k)")
    top.grid(which="both", alpha=0.3)
    top.legend(fontsize=8, loc="lower right")
    bottom.axhline(1.0, color="#7f7f7f", linestyle="--", linewidth=1)
    bottom.set_ylabel("ratio to OpenBLAS")
    bottom.set_xlabel("n")
    bottom.set_xticks(sizes)
    bottom.set_xticklabels([str(n) for n in sizes], fontsize=8)
    bottom.grid(which="both", alpha=0.3)
    bottom.set_ylim(bottom=0)
    fig.tight_layout()
    # Written under a temporary name and renamed: a reader never sees half a file.
    tmp = f"{args.png}.tmp.png"
    fig.savefig(tmp, dpi=110)
    os.replace(tmp, args.png)
    print(f"sweep: wrote {args.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
