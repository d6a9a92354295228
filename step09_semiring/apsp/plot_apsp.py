#!/usr/bin/env python3
"""The APSP benchmark as a table and a plot.

    plot_apsp.py CSV [--png PNG]

CSV holds the rows that `apsp --bench --csv CSV` appends: the lab's columns,
variant apsp_<algorithm>_<cpu|gpu>, m = n = the vertex count, k = the total
inner dimension of the min-plus products run (so 2 n^2 k is the work and
gflops its rate), and the algorithm's own seconds (graph reading, set-up and
transfers are not in them; the note column has the transfers).

Prints one line per run: seconds, G min-plus ops/s, and the speed-up over plain
Floyd-Warshall on one core at the same n. Where plain Floyd-Warshall was not run
at some n, its time is estimated from the largest n where it ran, scaled by n^3
(it does n^3 updates whatever the graph), and the speed-up is marked "est.".
PNG (default: the CSV's name with .png) gets the seconds as bars, log scale,
one group per n. Needs matplotlib for the PNG only.
"""
import argparse
import csv
import pathlib
import sys

NAMES = {"plain": "plain Floyd-Warshall", "fw": "blocked Floyd-Warshall", "squaring": "repeated squaring"}


def read_rows(path):
    rows = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            _, algorithm, backend = r["variant"].split("_", 2)
            key = (int(r["n"]), algorithm, backend, int(r["threads"]))
            rows[key] = {  # a run measured twice keeps its last measurement
                "n": int(r["n"]), "algorithm": algorithm, "backend": backend, "threads": int(r["threads"]),
                "seconds": float(r["median_s"]), "gops": float(r["gflops"]), "check": r["check"],
                "device": r["device"], "note": r["note"]}
    return sorted(rows.values(), key=lambda r: (r["n"], r["algorithm"] != "plain", r["backend"], -r["threads"],
                                                r["algorithm"]))


def plain_times(rows):
    """Plain Floyd-Warshall's seconds per n: measured, or scaled by n^3 (estimated)."""
    measured = {r["n"]: r["seconds"] for r in rows if r["algorithm"] == "plain"}
    times = {n: (s, False) for n, s in measured.items()}
    if measured:
        base = max(measured)
        for n in {r["n"] for r in rows} - set(measured):
            times[n] = (measured[base] * (n / base) ** 3, True)
    return times


def label(r):
    where = r["device"] if r["backend"] == "gpu" else f"cpu, {r['threads']} thread{'s' if r['threads'] > 1 else ''}"
    return f"{NAMES.get(r['algorithm'], r['algorithm'])} ({where})"


def table(rows):
    plain = plain_times(rows)
    lines = [f"{'n':>6}  {'algorithm':24} {'on':34} {'seconds':>10} {'Gops/s':>9} {'vs plain':>12}  check"]
    for r in rows:
        ref = plain.get(r["n"])
        speedup = "-"
        if ref and r["seconds"] > 0:
            speedup = f"{ref[0] / r['seconds']:.1f}x" + (" est." if ref[1] else "")
        where = r["device"][:34] if r["backend"] == "gpu" else f"cpu, {r['threads']} thr"
        lines.append(f"{r['n']:>6}  {NAMES.get(r['algorithm'], r['algorithm']):24} {where:34} {r['seconds']:10.3f} "
                     f"{r['gops']:9.1f} {speedup:>12}  {r['check']}")
    for n, (s, est) in sorted(plain.items()):
        if est:
            lines.append(f"{n:>6}  plain Floyd-Warshall, one core: not run; {s:.0f} s estimated (n^3 scaling)")
    return "\n".join(lines)


def plot(rows, png):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_apsp.py: matplotlib is missing, no PNG (the table above has the figures)", file=sys.stderr)
        return
    sizes = sorted({r["n"] for r in rows})
    labels = []
    for r in rows:
        if label(r) not in labels:
            labels.append(label(r))
    width = 0.8 / max(len(labels), 1)
    fig, ax = plt.subplots(figsize=(max(6, 2.5 * len(sizes) + 2) + 3, 4.5))
    for i, lab in enumerate(labels):
        xs, ys = [], []
        for j, n in enumerate(sizes):
            for r in rows:
                if r["n"] == n and label(r) == lab:
                    xs.append(j + (i - (len(labels) - 1) / 2) * width)
                    ys.append(r["seconds"])
        bars = ax.bar(xs, ys, width, label=lab)
        ax.bar_label(bars, labels=[f"{y:.3g}" for y in ys], fontsize=7, rotation=90, padding=2)
    ax.set_yscale("log")
    ax.set_ylim(top=4 * max(r["seconds"] for r in rows))  # room for the tallest bar's label
    ax.set_xticks(range(len(sizes)), [f"n = {n}" for n in sizes])
    ax.set_ylabel("seconds (log scale)")
    ax.set_title("All-pairs shortest paths on the min-plus GEMM")
    # beside the plot, so that it never hides a bar or its label
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    fig.tight_layout()
    fig.savefig(png, dpi=130)
    print(f"plot_apsp.py: wrote {png}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--png")
    args = ap.parse_args()
    rows = read_rows(args.csv)
    if not rows:
        sys.exit(f"plot_apsp.py: no rows in {args.csv}")
    print(table(rows))
    plot(rows, args.png or str(pathlib.Path(args.csv).with_suffix(".png")))


if __name__ == "__main__":
    main()
