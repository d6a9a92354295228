#!/usr/bin/env python3
"""Draw where the time of step08's distributed DGEMM goes, grid by grid.

    plot_breakdown.py [CSV] [--png PNG] [--scaling OUT.csv]

CSV (default results/step08_breakdown.csv) holds the per-rank rows that
`step08_mpi_3d --breakdown CSV` appends, one block of p rows per run. PNG
(default: the CSV's name with .png) gets two panels, one bar per run:
  top     the seconds of each phase (setup, scatter, broadcast, compute, reduce,
          gather; slowest rank), stacked, with the speed-up and parallel efficiency
          against the p = 1 run of the same size, kernel and threads where there is one;
  bottom  the words the busiest rank moved in the broadcasts and the reduction,
          stacked, against the formula for its grid, the best 2D grid and the lower bound.
--scaling writes one row per run (the lab's first nine columns, then p, grid,
speed-up, efficiency and the words) for tables. A run measured twice keeps its
last measurement. Needs matplotlib (use /usr/bin/python3 where the default
python3 lacks it).
"""
import argparse
import csv
import pathlib
import sys

PHASES = ["setup", "scatter", "broadcast", "compute", "reduce", "gather"]
COLORS = {"setup": "#bbbbbb", "scatter": "#8da0cb", "broadcast": "#66c2a5", "compute": "#fc8d62",
          "reduce": "#e78ac3", "gather": "#a6d854"}


def read_runs(path):
    """Runs in first-seen order; each run is the list of its ranks' rows."""
    runs = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            key = (row["impl"], row["local"], int(row["m"]), int(row["n"]), int(row["k"]),
                   int(row["threads"]), int(row["p"]), row["grid"])
            if int(row["rank"]) == 0:
                runs.pop(key, None)  # a new measurement of this run replaces the old one
            runs.setdefault(key, []).append(row)
    return [(key, rows) for key, rows in runs.items() if len(rows) == key[6]]


def summarize(runs):
    out = []
    for key, rows in runs:
        impl, local, m, n, k, threads, p, grid = key
        busiest = max(rows, key=lambda r: int(r["words_moved"]))
        out.append({
            "impl": impl, "local": local, "m": m, "n": n, "k": k, "threads": threads, "p": p, "grid": grid,
            "median_s": float(rows[0]["median_s"]), "gflops": float(rows[0]["gflops"]),
            "phase_s": {ph: max(float(r[ph + "_s"]) for r in rows) for ph in PHASES},
            "bcast_words": (int(busiest["broadcast_sent_B"]) + int(busiest["broadcast_recv_B"])) / 8,
            "reduce_words": (int(busiest["reduce_sent_B"]) + int(busiest["reduce_recv_B"])) / 8,
            "words_moved": int(busiest["words_moved"]), "words_formula": float(rows[0]["words_formula"]),
            "words_best_2d": float(rows[0]["words_best_2d"]), "words_cube": float(rows[0]["words_cube"]),
            "words_lower_bound": float(rows[0]["words_lower_bound"]), "check": rows[0]["check"],
        })
    # Speed-up against the one-rank run of the same problem, kernel and threads.
    for s in out:
        same = ("impl", "local", "m", "n", "k", "threads")
        base = [b for b in out if b["p"] == 1 and all(b[f] == s[f] for f in same)]
        s["speedup"] = base[0]["median_s"] / s["median_s"] if base and s["median_s"] > 0 else None
        s["efficiency"] = s["speedup"] / s["p"] if s["speedup"] else None
    out.sort(key=lambda s: (s["local"], s["m"], s["n"], s["k"], s["threads"], s["p"], s["grid"], s["impl"]))
    return out


def write_scaling(path, runs):
    cols = ["step", "variant", "impl", "m", "n", "k", "threads", "median_s", "gflops", "p", "grid", "local",
            "speedup", "efficiency", "words_moved", "words_formula", "words_best_2d", "words_lower_bound",
            "check"]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for s in runs:
            w.writerow(["step08", "cube", s["impl"], s["m"], s["n"], s["k"], s["threads"],
                        f"{s['median_s']:.6g}", f"{s['gflops']:.6g}", s["p"], s["grid"], s["local"],
                        "" if s["speedup"] is None else f"{s['speedup']:.4g}",
                        "" if s["efficiency"] is None else f"{s['efficiency']:.4g}",
                        s["words_moved"], f"{s['words_formula']:.6g}", f"{s['words_best_2d']:.6g}",
                        f"{s['words_lower_bound']:.6g}", s["check"]])


def print_table(runs):
    print(f"{'p':>3} {'grid':>8} {'n':>6} {'local':>5} {'median_s':>10} {'GFLOP/s':>9} {'speed-up':>9} "
          f"{'eff.':>6} {'words/rank':>12} {'formula':>12}")
    for s in runs:
        su = f"{s['speedup']:.2f}" if s["speedup"] else "-"
        ef = f"{100 * s['efficiency']:.0f}%" if s["efficiency"] else "-"
        print(f"{s['p']:>3} {s['grid']:>8} {s['n']:>6} {s['local']:>5} {s['median_s']:>10.4f} "
              f"{s['gflops']:>9.2f} {su:>9} {ef:>6} {s['words_moved']:>12} {s['words_formula']:>12.0f}")


def plot(runs, png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = {(s["m"], s["n"], s["k"]) for s in runs}
    labels = []
    for s in runs:
        label = f"p={s['p']}\n{s['grid']}"
        if len(sizes) > 1:
            label += f"\nn={s['n']}"
        if s["impl"] != "solution" or s["local"] != "cpu":
            label += f"\n{s['impl']} {s['local']}"
        labels.append(label)
    x = range(len(runs))
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(max(6.0, 1.1 * len(runs)) + 2.5, 8), sharex=True)

    base = [0.0] * len(runs)
    for ph in PHASES:
        vals = [s["phase_s"][ph] for s in runs]
        top.bar(x, vals, bottom=base, color=COLORS[ph], label=ph, edgecolor="white", linewidth=0.5)
        base = [b + v for b, v in zip(base, vals)]
    for i, s in enumerate(runs):
        note = f"{s['gflops']:.1f} GF/s"
        if s["efficiency"]:
            note += f"\n{s['speedup']:.1f}x, {100 * s['efficiency']:.0f}%"
        top.text(i, base[i], note, ha="center", va="bottom", fontsize=8)
    top.set_ylabel("seconds per call (slowest rank per phase)")
    top.set_ylim(0, 1.25 * max(base) if base and max(base) > 0 else 1)
    threads = sorted({s["threads"] for s in runs})
    title = "step08: one distributed DGEMM, phase by phase"
    if len(sizes) == 1:
        m, n, k = next(iter(sizes))
        title += f" (m={m} n={n} k={k}"
        title += f", {threads[0]} thread(s) per rank)" if len(threads) == 1 else ")"
    top.set_title(title, fontsize=10)
    top.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))

    scale = 1e6
    bc = [s["bcast_words"] / scale for s in runs]
    rd = [s["reduce_words"] / scale for s in runs]
    bottom.bar(x, bc, color=COLORS["broadcast"], label="broadcast (measured)")
    bottom.bar(x, rd, bottom=bc, color=COLORS["reduce"], label="reduce (measured)")
    bottom.scatter(x, [s["words_formula"] / scale for s in runs], marker="_", s=400, color="black", zorder=3,
                   label="formula for the grid")
    bottom.scatter(x, [s["words_best_2d"] / scale for s in runs], marker="x", color="#1f78b4", zorder=3,
                   label="best 2D grid")
    bottom.scatter(x, [s["words_lower_bound"] / scale for s in runs], marker="v", color="#e31a1c", zorder=3,
                   label="lower bound")
    bottom.set_ylabel("million words (doubles) moved\nby the busiest rank")
    tallest = max(max(b + r for b, r in zip(bc, rd)), max(s["words_formula"] for s in runs) / scale,
                  max(s["words_best_2d"] for s in runs) / scale)
    bottom.set_ylim(0, 1.15 * tallest if tallest > 0 else 1)
    bottom.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    bottom.set_xticks(list(x))
    bottom.set_xticklabels(labels, fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    print(f"wrote {png}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv", nargs="?", default="results/step08_breakdown.csv")
    ap.add_argument("--png", help="the figure (default: the CSV's name with .png)")
    ap.add_argument("--scaling", help="also write one row per run with speed-up and efficiency to this CSV")
    args = ap.parse_args()
    if not pathlib.Path(args.csv).exists():
        print(f"plot_breakdown.py: no {args.csv}; make it with step08_mpi_3d --breakdown {args.csv}",
              file=sys.stderr)
        return 2
    runs = summarize(read_runs(args.csv))
    if not runs:
        print(f"plot_breakdown.py: {args.csv} has no complete run", file=sys.stderr)
        return 2
    print_table(runs)
    if args.scaling:
        write_scaling(args.scaling, runs)
        print(f"wrote {args.scaling}")
    try:
        plot(runs, args.png or str(pathlib.Path(args.csv).with_suffix(".png")))
    except ImportError:
        print("plot_breakdown.py: matplotlib is missing; try /usr/bin/python3, "
              "or apt-get install python3-matplotlib", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
