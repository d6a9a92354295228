#!/usr/bin/env python3
"""Print the ladder table from a benchmark CSV and draw it as a bar chart.

    ladder.py results/ladder.csv [--png results/ladder.png]

The CSV is what the step executables write with --csv (first columns
step,variant,impl,m,n,k,threads,median_s,gflops). For every row the table
shows GFLOP/s, the speed-up over step01 (its textbook i-j-p loop, naive_ijk,
where the CSV has it) and the percentage of the vendor BLAS
(OpenBLAS for CPU rows, cuBLAS for GPU rows) measured in the same run at the
same size and thread count.
"""
import argparse
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import labio  # noqa: E402  (files in and out: one line and exit 2 on a bad one)

VENDORS = ("openblas", "cublas")
BASELINE = "naive_ijk"  # the ladder's "vs step01" column divides by this variant's rate


NEED = ["step", "variant", "impl", "m", "n", "k", "threads", "median_s", "gflops", "check"]


def load(path):
    rows = labio.read_csv("ladder", path, NEED)
    for r in rows:
        r["gflops"] = labio.number("ladder", path, r, "gflops", blank=0.0)
        for c in ("m", "n", "k", "threads"):
            r[c] = labio.number("ladder", path, r, c, int)
    return rows


def is_gpu(r):
    return r.get("device", "").lower().startswith(("nvidia", "gpu")) or r["variant"] == "cublas"


def vendor_for(r, rows):
    want = "cublas" if is_gpu(r) else "openblas"
    for v in rows:
        if v["variant"] == want and (v["m"], v["n"], v["k"]) == (r["m"], r["n"], r["k"]) and \
                (is_gpu(r) or v["threads"] == r["threads"]) and v["check"] == "pass":
            return v["gflops"]
    return None


def label(r):
    return r["variant"] if r["variant"] in VENDORS else f'{r["step"]} {r["variant"]}'


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--png")
    args = ap.parse_args()
    labio.check_output("ladder", "--png", args.png)
    rows = load(args.csv)
    step01 = [r for r in rows if r["step"] == "step01" and r["check"] == "pass" and r["variant"] not in VENDORS]
    base = next((r["gflops"] for r in step01 if r["variant"] == BASELINE), None) or \
        next((r["gflops"] for r in step01), None)
    print(f'{"step / variant":<32} {"impl":<9} {"size":>16} {"thr":>4} {"GFLOP/s":>10} {"vs step01":>10} '
          f'{"% vendor":>9}  check')
    for r in rows:
        size = f'{r["m"]}x{r["n"]}x{r["k"]}'
        vend = vendor_for(r, rows)
        ok = r["check"] == "pass"
        speed = f'{r["gflops"] / base:.1f}x' if base and ok else "-"
        pct = f'{100 * r["gflops"] / vend:.0f}%' if vend and ok else "-"
        gf = f'{r["gflops"]:.2f}' if ok else "-"
        print(f'{label(r):<32} {r["impl"]:<9} {size:>16} {r["threads"]:>4} {gf:>10} {speed:>10} {pct:>9}  '
              f'{r["check"]}')
    if not args.png:
        return 0
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("ladder: matplotlib is not installed; no PNG (apt-get install python3-matplotlib)", file=sys.stderr)
        return 0
    # CPU steps, then their vendor bar, then GPU steps and theirs.
    shown = sorted((r for r in rows if r["check"] == "pass"),
                   key=lambda r: (is_gpu(r), r["variant"] in VENDORS, r["step"], r["threads"]))
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(shown) + 2), 4.8))
    colors = ["#7f7f7f" if r["variant"] in VENDORS else ("#d62728" if is_gpu(r) else "#1f77b4") for r in shown]
    bars = ax.bar(range(len(shown)), [r["gflops"] for r in shown], color=colors)
    ax.set_yscale("log")
    ax.set_ylabel("GFLOP/s (log scale)")
    ax.set_xticks(range(len(shown)))
    ax.set_xticklabels([f'{label(r)}\n{r["m"]}³ · {r["threads"]} thr' if not is_gpu(r) else f'{label(r)}\n{r["m"]}³ · GPU'
                        for r in shown], rotation=30, ha="right", fontsize=8)
    for b, r in zip(bars, shown):
        ax.annotate(f'{r["gflops"]:.1f}', (b.get_x() + b.get_width() / 2, b.get_height()), ha="center",
                    va="bottom", fontsize=8)
    ax.set_title("gemm-lab: the DGEMM ladder")
    from matplotlib.patches import Patch
    ax.legend(handles=[Patch(color="#1f77b4", label="CPU step"), Patch(color="#d62728", label="GPU step"),
                       Patch(color="#7f7f7f", label="vendor BLAS")], loc="upper left", fontsize=8)
    ax.grid(axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    labio.save_figure("ladder", "--png", fig, args.png, dpi=120)
    print(f"ladder: wrote {args.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
