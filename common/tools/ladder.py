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


def best_per_step(rows):
    """One row per (CPU|GPU, step): its fastest passing variant, in step order."""
    best = {}
    for r in rows:
        if r["check"] != "pass" or r["variant"] in VENDORS or r["impl"] == "baseline":
            continue
        key = (is_gpu(r), r["step"])
        if key not in best or r["gflops"] > best[key]["gflops"]:
            best[key] = r
    return [best[k] for k in sorted(best)]


def vendor_of_group(rows, gpu):
    """The vendor library's best passing rate among the rows of one group (CPU or GPU)."""
    rates = [r["gflops"] for r in rows if r["check"] == "pass" and r["variant"] == ("cublas" if gpu else "openblas")]
    return max(rates) if rates else None


def rate(v):
    """A GFLOP/s figure short enough for a bar: 0.347, 18.3, 91.6, 3,810, 49,800."""
    return f"{v:,.0f}" if v >= 100 else f"{v:.3g}"


def draw(plt, rows):
    """Two panels, at most 1600 px wide at 120 dpi: one bar per step (its best
    variant) in a CPU and a GPU group with the vendor library as a line across
    each group; below, every variant of every step as a short horizontal bar."""
    best = best_per_step(rows)
    # every variant once; a vendor library once per CPU/GPU group (several steps time it)
    variants, vendors = [], {}
    for r in rows:
        if r["check"] != "pass":
            continue
        if r["variant"] in VENDORS:
            key = (is_gpu(r), r["variant"])
            if key not in vendors or r["gflops"] > vendors[key]["gflops"]:
                vendors[key] = r
        else:
            variants.append(r)
    variants = sorted(variants + list(vendors.values()),
                      key=lambda r: (is_gpu(r), r["variant"] in VENDORS, r["step"], -r["gflops"]))
    top_h, row_h = 4.2, 0.17
    fig, (ax, av) = plt.subplots(2, 1, figsize=(12, top_h + 1.2 + row_h * max(4, len(variants))),
                                 gridspec_kw={"height_ratios": [top_h, row_h * max(4, len(variants))]})
    x, ticks, labels = 0.0, [], []
    for gpu, color, vendor_name in ((False, "#1f77b4", "OpenBLAS"), (True, "#d62728", "cuBLAS")):
        group = [r for r in best if is_gpu(r) == gpu]
        if not group:
            continue
        xs = [x + i for i in range(len(group))]
        bars = ax.bar(xs, [r["gflops"] for r in group], color=color, width=0.7,
                      label="GPU steps" if gpu else "CPU steps")
        for b, r in zip(bars, group):
            ax.annotate(rate(r["gflops"]), (b.get_x() + b.get_width() / 2, b.get_height()), ha="center",
                        va="bottom", fontsize=9)
        ticks += xs
        sizes = {r["m"] for r in group}
        # a bar whose size is not its group's says its own
        labels += [f'{r["step"]}\n{r["variant"]}' + (f'\nn = {r["m"]}' if len(sizes) > 1 else "") for r in group]
        vend = vendor_of_group(rows, gpu)
        if vend:
            ax.hlines(vend, xs[0] - 0.45, xs[-1] + 0.45, colors="#333333", linestyles="--", linewidth=1.2)
            ax.annotate(f"{vendor_name}\n{rate(vend)}", (xs[-1] + 0.5, vend), ha="left", va="center", fontsize=9,
                        color="#333333")
        where = "GPU" if gpu else "CPU"
        size = f'n = {group[0]["m"]}' if len(sizes) == 1 else ""
        thr = "" if gpu else f'{group[0]["threads"]} thread{"s" if group[0]["threads"] != 1 else ""}'
        ax.annotate(f"{where} ({', '.join(t for t in (size, thr) if t)})" if size or thr else where, ((xs[0] + xs[-1]) / 2, 1.02), xycoords=("data", "axes fraction"),
                    ha="center", va="bottom", fontsize=10, fontweight="bold")
        x = xs[-1] + 2.2
    ax.set_xlim(-0.6, x - 1.0)
    ax.set_yscale("log")
    # plain numbers on the log axes (not 6 x 10^1)
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:g}"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_ylabel("GFLOP/s (log scale)")
    ax.set_xticks(ticks)
    ax.set_xticklabels(labels, fontsize=9)
    ax.grid(axis="y", which="both", alpha=0.3)
    ax.set_title("gemm-lab: the DGEMM ladder, each step's best variant (dashed: the vendor library)", pad=22)
    # every variant, fastest first within its step
    ys = range(len(variants))
    av.barh(list(ys), [r["gflops"] for r in variants], height=0.7,
            color=["#7f7f7f" if r["variant"] in VENDORS else ("#d62728" if is_gpu(r) else "#1f77b4")
                   for r in variants])
    av.set_yticks(list(ys))
    av.set_yticklabels([label(r) for r in variants], fontsize=8)
    av.invert_yaxis()
    av.set_xscale("log")
    av.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:g}"))
    av.set_xlabel("GFLOP/s (log scale): every variant (grey: vendor library)")
    av.grid(axis="x", which="both", alpha=0.3)
    for y, r in zip(ys, variants):
        av.annotate(" " + rate(r["gflops"]), (r["gflops"], y), va="center", fontsize=7)
    fig.tight_layout()


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
        print(labio.no_matplotlib("ladder", "no PNG"), file=sys.stderr)
        return 0
    draw(plt, rows)
    fig = plt.gcf()
    labio.save_figure("ladder", "--png", fig, args.png, dpi=120)
    print(f"ladder: wrote {args.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
