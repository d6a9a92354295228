#!/usr/bin/env python3
"""Draw where the time of step08's distributed DGEMM goes, run by run.

    plot_breakdown.py [CSV] [--png PNG] [--scaling OUT.csv]

CSV (default results/step08_breakdown.csv) holds the per-rank rows that
`step08_mpi_3d --breakdown CSV` appends, p rows per run. PNG (default: the
CSV's name with .png) gets two panels, one bar per run, grouped by p:
  top     the wall time of the median call, split into the slowest rank's own
          local product and the overhead (everything else: messages, waiting),
          so each bar is exactly as tall as the wall time printed on it; a
          whisker spans the ranks' product times (min to max, dot at the median). ScaLAPACK's pdgemm (the
          baseline) has no product of its own to show: one bar, its wall time.
          Hatched bars ran oversubscribed (more rank threads than cores): their
          times say nothing about scaling.
  bottom  the words the busiest rank moved in the broadcasts and the reduction,
          against the formula for its grid, the best 2D grid and the lower bound.
--scaling writes one row per run (the lab's first nine columns, then p, layout,
local kernel, wall, product min/median/max, overhead, speed-up and efficiency
against p = 1 of the same implementation and kernel, words) for tables. A run
measured twice keeps its last measurement. Needs matplotlib (use
/usr/bin/python3 where the default python3 lacks it).
"""
import argparse
import csv
import io
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "common" / "tools"))
import labio  # noqa: E402  (files in and out: one line and exit 2 on a bad one)

COLORS = {"product": "#fc8d62", "overhead": "#8da0cb", "baseline": "#66c2a5"}


NEED = ["step", "variant", "impl", "m", "n", "k", "threads", "gflops", "p", "layout", "local", "data", "rank",
        "wall_s", "product_own_s", "words_moved", "words_formula", "words_best_2d", "words_lower_bound",
        "local_alone_s", "oversubscribed", "check"]
WHOLE = ("m", "n", "k", "threads", "p", "rank", "words_moved")


def read_runs(path):
    """Runs in first-seen order; each run is the list of its ranks' rows."""
    runs = {}
    for row in labio.read_csv("plot_breakdown.py", path, NEED):
        for c in WHOLE:
            row[c] = labio.number("plot_breakdown.py", path, row, c, int)
        for c in ("wall_s", "gflops", "product_own_s", "words_formula", "words_best_2d", "words_lower_bound",
                  "local_alone_s"):
            row[c] = labio.number("plot_breakdown.py", path, row, c, blank="")
        key = (row["impl"], row["local"], row["data"], row["m"], row["n"], row["k"], row["threads"], row["p"],
               row["layout"])
        if row["rank"] == 0:
            runs.pop(key, None)  # a new measurement of this run replaces the old one
        runs.setdefault(key, []).append(row)
    return [(key, rows) for key, rows in runs.items() if len(rows) == key[7]]


def summarize(runs):
    out = []
    for key, rows in runs:
        impl, local, data, m, n, k, threads, p, layout = key
        products = sorted(float(r["product_own_s"]) for r in rows)
        wall = float(rows[0]["wall_s"])
        busiest = max(rows, key=lambda r: int(r["words_moved"]))
        baseline = impl == "baseline"
        s = {
            "step": rows[0]["step"], "variant": rows[0]["variant"], "impl": impl, "local": local, "data": data, "m": m, "n": n, "k": k, "threads": threads, "p": p,
            "layout": layout, "wall": wall, "gflops": float(rows[0]["gflops"]), "baseline": baseline,
            "oversubscribed": rows[0]["oversubscribed"] == "1", "check": rows[0]["check"],
            "product_min": None if baseline else products[0],
            "product_median": None if baseline else products[(len(products) - 1) // 2],
            "product_max": None if baseline else products[-1],
            "words_moved": int(busiest["words_moved"]),
            "words_formula": float(rows[0]["words_formula"]) if rows[0]["words_formula"] else None,
            "words_best_2d": float(rows[0]["words_best_2d"]),
            "words_lower_bound": float(rows[0]["words_lower_bound"]),
            "local_alone": float(rows[0]["local_alone_s"] or 0),
        }
        s["overhead"] = None if baseline or wall <= 0 else (wall - s["product_max"]) / wall
        out.append(s)
    for s in out:  # speed-up against the one-rank run of the same problem, implementation and kernel
        same = ("impl", "local", "data", "m", "n", "k", "threads")
        base = [b for b in out if b["p"] == 1 and all(b[f] == s[f] for f in same)]
        s["speedup"] = base[0]["wall"] / s["wall"] if base and s["wall"] > 0 else None
        s["efficiency"] = s["speedup"] / s["p"] if s["speedup"] else None
    out.sort(key=lambda s: (s["m"], s["n"], s["k"], s["threads"], s["p"], s["baseline"], s["impl"], s["local"]))
    return out


def fmt(v, spec):
    return "" if v is None else format(v, spec)


def write_scaling(path, runs):
    cols = ["step", "variant", "impl", "m", "n", "k", "threads", "median_s", "gflops", "p", "layout", "local", "data",
            "product_min_s", "product_median_s", "product_max_s", "overhead", "local_alone_s", "speedup",
            "efficiency", "words_moved", "words_formula", "words_best_2d", "words_lower_bound", "oversubscribed",
            "check"]
    f = io.StringIO()
    w = csv.writer(f)
    w.writerow(cols)
    for s in runs:
        w.writerow([s["step"], s["variant"], s["impl"], s["m"], s["n"], s["k"],
                    s["threads"], f"{s['wall']:.6g}", f"{s['gflops']:.6g}", s["p"], s["layout"], s["local"],
                    s["data"], fmt(s["product_min"], ".6g"), fmt(s["product_median"], ".6g"),
                    fmt(s["product_max"], ".6g"), fmt(s["overhead"], ".4g"), fmt(s["local_alone"] or None, ".6g"),
                    fmt(s["speedup"], ".4g"), fmt(s["efficiency"], ".4g"), s["words_moved"],
                    fmt(s["words_formula"], ".6g"), f"{s['words_best_2d']:.6g}", f"{s['words_lower_bound']:.6g}",
                    int(s["oversubscribed"]), s["check"]])
    labio.write_text(path, f.getvalue())


def print_table(runs):
    print(f"{'p':>3} {'impl':>8} {'local':>8} {'layout':>10} {'n':>6} {'wall_s':>9} {'GFLOP/s':>9} "
          f"{'product min/med/max s':>24} {'overhead':>8} {'speed-up':>8} {'eff.':>5} {'words/rank':>11} "
          f"{'formula':>11}")
    for s in runs:
        prod = "-" if s["baseline"] else f"{s['product_min']:.3f}/{s['product_median']:.3f}/{s['product_max']:.3f}"
        ov = "-" if s["overhead"] is None else f"{100 * s['overhead']:.1f}%"
        su = f"{s['speedup']:.2f}" if s["speedup"] else "-"
        ef = f"{100 * s['efficiency']:.0f}%" if s["efficiency"] else "-"
        wf = "-" if s["words_formula"] is None else f"{s['words_formula']:.0f}"
        mark = " oversubscribed" if s["oversubscribed"] else ""
        print(f"{s['p']:>3} {s['impl']:>8} {s['local']:>8} {s['layout']:>10} {s['n']:>6} {s['wall']:>9.4f} "
              f"{s['gflops']:>9.2f} {prod:>24} {ov:>8} {su:>8} {ef:>5} "
              f"{'-' if s['baseline'] else s['words_moved']:>11} {wf:>11}{mark}")


def plot(runs, png, title=None):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = {(s["m"], s["n"], s["k"]) for s in runs}
    x, labels, pos = [], [], 0.0
    last_p = None
    for s in runs:
        if last_p is not None and s["p"] != last_p:
            pos += 0.6  # a gap between the groups of one p
        last_p = s["p"]
        x.append(pos)
        pos += 1.0
        label = f"p={s['p']}\n" + ("pdgemm\n" + s["layout"].replace("_", " ") if s["baseline"]
                                    else f"{s['local']}\n{s['layout']}")
        if s["impl"] not in ("solution", "baseline"):
            label += f"\n{s['impl']}"
        if len(sizes) > 1:
            label += f"\nn={s['n']}"
        if s["oversubscribed"]:
            label += "\noversub."
        labels.append(label)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(max(7.0, 0.95 * pos) + 3.0, 8.5), sharex=True,
                                      gridspec_kw={"height_ratios": [3, 2]})
    tallest = 0.0
    for xi, s in zip(x, runs):
        hatch = "//" if s["oversubscribed"] else None
        scale = 1.0
        if s["baseline"]:
            top.bar(xi, s["wall"] * scale, color=COLORS["baseline"], hatch=hatch, edgecolor="white",
                    label="ScaLAPACK pdgemm (wall)")
        else:
            prod, over = s["product_max"] * scale, (s["wall"] - s["product_max"]) * scale
            top.bar(xi, prod, color=COLORS["product"], hatch=hatch, edgecolor="white",
                    label="slowest rank's local product")
            top.bar(xi, over, bottom=prod, color=COLORS["overhead"], hatch=hatch, edgecolor="white",
                    label="overhead (wall - slowest product)")
            top.errorbar(xi, s["product_median"] * scale,
                         yerr=[[(s["product_median"] - s["product_min"]) * scale],
                               [(s["product_max"] - s["product_median"]) * scale]],
                         fmt="o", color="black", markersize=3, capsize=3, linewidth=1,
                         label="ranks' product: min, median, max")
        note = f"{s['wall']:.3g} s"
        if s["overhead"] is not None:
            note += f"\n{100 * s['overhead']:.0f}% ovh"
        top.text(xi, s["wall"] * scale, note, ha="center", va="bottom", fontsize=7)
        tallest = max(tallest, s["wall"] * scale)
    handles, names = top.get_legend_handles_labels()
    unique = {}
    for name, handle in zip(names, handles):
        unique.setdefault(name, handle)  # the first one: not hatched unless every run was oversubscribed
    if any(s["oversubscribed"] for s in runs):
        from matplotlib.patches import Patch
        unique["hatched: oversubscribed (more rank threads than cores)"] = Patch(facecolor="white", edgecolor="gray",
                                                                                 hatch="//")
    top.legend(unique.values(), unique.keys(), fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    top.set_ylim(0, 1.22 * tallest if tallest > 0 else 1)
    top.set_ylabel("seconds per call (median)")
    threads = sorted({s["threads"] for s in runs})
    title = title or "step08: the distributed DGEMM, where the time of one call goes"
    if len(sizes) == 1:
        m, n, k = next(iter(sizes))
        title += f"\nm={m} n={n} k={k}" + (f", {threads[0]} thread(s) per rank" if len(threads) == 1 else "")
    top.set_title(title, fontsize=10)

    scale = 1e6
    cube = [(xi, s) for xi, s in zip(x, runs) if not s["baseline"]]
    bottom.bar([xi for xi, _ in cube], [s["words_moved"] / scale for _, s in cube], color="#a6d854",
               label="moved by the busiest rank (counted)")
    bottom.scatter([xi for xi, _ in cube], [(s["words_formula"] or 0) / scale for _, s in cube], marker="_", s=400,
                   color="black", zorder=3, label="formula for the grid")
    bottom.scatter([xi for xi, _ in cube], [s["words_best_2d"] / scale for _, s in cube], marker="x",
                   color="#1f78b4", zorder=3, label="best 2D grid")
    bottom.scatter([xi for xi, _ in cube], [s["words_lower_bound"] / scale for _, s in cube], marker="v",
                   color="#e31a1c", zorder=3, label="lower bound")
    bottom.set_ylabel("million words (doubles) per rank\nin broadcasts and reduction")
    top_words = max([s["words_moved"] / scale for _, s in cube] + [s["words_best_2d"] / scale for _, s in cube]
                    + [0.0])
    bottom.set_ylim(0, 1.15 * top_words if top_words > 0 else 1)
    bottom.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    bottom.set_xticks(x)
    bottom.set_xticklabels(labels, fontsize=7)
    fig.tight_layout()
    labio.save_figure("plot_breakdown.py", "--png", fig, png, dpi=120)
    print(f"wrote {png}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv", nargs="?", default="results/step08_breakdown.csv")
    ap.add_argument("--png", help="the figure (default: the CSV's name with .png)")
    ap.add_argument("--scaling", help="also write one row per run with speed-up and efficiency to this CSV")
    ap.add_argument("--title", help="the figure's first title line (step09's semiring product draws with this script)")
    args = ap.parse_args()
    png = args.png if args.png is not None else str(pathlib.Path(args.csv).with_suffix(".png"))
    labio.check_output("plot_breakdown.py", "--png", png)
    labio.check_output("plot_breakdown.py", "--scaling", args.scaling)
    if not pathlib.Path(args.csv).exists():
        labio.fail("plot_breakdown.py", f"no {args.csv}; make it with step08_mpi_3d --breakdown {args.csv}")
    try:
        runs = summarize(read_runs(args.csv))
    except (KeyError, ValueError, TypeError, ZeroDivisionError) as e:
        labio.fail("plot_breakdown.py", f"{args.csv} is not a step08 breakdown file of this version ({e!r})")
    if not runs:
        labio.fail("plot_breakdown.py", f"{args.csv} has no complete run (p rows of ranks 0..p-1)")
    print_table(runs)
    if args.scaling:
        write_scaling(args.scaling, runs)
        print(f"wrote {args.scaling}")
    try:
        plot(runs, png, args.title)
    except ImportError:
        print(labio.no_matplotlib("plot_breakdown.py", "no PNG"), file=sys.stderr)
        return 0  # the table (and --scaling's CSV) came out; the picture is the extra, as ladder.py's
    return 0


if __name__ == "__main__":
    sys.exit(main())
