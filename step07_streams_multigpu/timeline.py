#!/usr/bin/env python3
"""Draw step07's timeline and say how much copies and products overlapped.

    timeline.py results/step07_timeline.csv [--png results/step07_timeline.png]
                [--variant streams,multigpu] [--impl solution]

The CSV is what `step07_streams_multigpu --trace FILE` writes: one row per
copy or product of each variant's last call
(variant,impl,gpu,device,stream,kind,start_s,end_s,bytes). The picture has
one panel per variant and one row per GPU entry and stream, with H2D copies,
products and D2H copies in three colours on three lanes of the row, panel
slices sent to other GPU entries (P2P, multigpu sharing panels) on a lane
of their own, and, for
pageable matrices, a fourth lane with what the stream's host thread did:
staging copies between the matrices and the pinned buffers ("host") and
waits for a staging buffer's copy ("wait"). The
table gives, per variant and device (the engines belong to the device, so
the entries of `0,0` count together), the busy time of each engine (the union of
its intervals: copy engines in, SMs, copy engines out, peer copies out)
over the wall time, and the share of the wall time in which a product ran
while a copy (of any kind) did too:
0 % for the synchronous loop, most of it when the streams overlap well; and
for pageable matrices the share in which some host thread was staging.
"""
import argparse
import os
import pathlib
import sys
from collections import defaultdict

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "common" / "tools"))
import labio  # noqa: E402  (files in and out: one line and exit 2 on a bad one)

KINDS = ("H2D", "compute", "D2H", "P2P")  # on the GPU
HOST_KINDS = ("host", "wait")  # a stream's host thread, pageable matrices only
COLOURS = {"H2D": "#1f77b4", "compute": "#2ca02c", "D2H": "#d62728", "P2P": "#9467bd", "host": "#ff7f0e",
           "wait": "#b0b0b0"}


def union(intervals):
    """Merged, sorted intervals."""
    out = []
    for a, b in sorted(intervals):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def length(intervals):
    return sum(b - a for a, b in intervals)


def intersect(xs, ys):
    """Total length of the intersection of two merged interval lists."""
    i = j = 0
    total = 0.0
    while i < len(xs) and j < len(ys):
        a = max(xs[i][0], ys[j][0])
        b = min(xs[i][1], ys[j][1])
        if b > a:
            total += b - a
        if xs[i][1] < ys[j][1]:
            i += 1
        else:
            j += 1
    return total


def read(path):
    runs = defaultdict(list)  # (variant, impl) -> rows
    need = ["variant", "impl", "gpu", "device", "stream", "kind", "start_s", "end_s", "bytes"]
    for r in labio.read_csv("timeline", path, need):
        row = dict(gpu=labio.number("timeline", path, r, "gpu", int),
                   device=labio.number("timeline", path, r, "device", int),
                   stream=labio.number("timeline", path, r, "stream", int), kind=r["kind"],
                   start=labio.number("timeline", path, r, "start_s"), end=labio.number("timeline", path, r, "end_s"),
                   bytes=labio.number("timeline", path, r, "bytes", int))
        if row["kind"] not in KINDS + HOST_KINDS:
            labio.fail("timeline", f"{path}:{r['_line']}: unknown kind '{row['kind']}'")
        runs[(r["variant"], r["impl"])].append(row)
    return runs


def overlap_table(runs):
    lines = [f"{'variant':<10} {'impl':<9} {'dev':>3} {'wall_s':>9} {'H2D':>6} {'compute':>8} {'D2H':>6} "
             f"{'overlap':>8} {'H2D_GB/s':>9} {'host':>6} {'P2P':>6} {'P2P_GB':>7}"]
    stats = {}
    for (variant, impl), rows in sorted(runs.items()):
        t0 = min(r["start"] for r in rows)
        wall = max(r["end"] for r in rows) - t0
        for dev in sorted({r["device"] for r in rows}):
            mine = [r for r in rows if r["device"] == dev]
            busy = {k: union([(r["start"], r["end"]) for r in mine if r["kind"] == k]) for k in KINDS}
            copies = union(busy["H2D"] + busy["D2H"] + busy["P2P"])
            both = intersect(busy["compute"], copies)
            h2d_bytes = sum(r["bytes"] for r in mine if r["kind"] == "H2D")
            h2d_time = length(busy["H2D"])
            share = {k: length(busy[k]) / wall if wall > 0 else 0.0 for k in KINDS}
            ov = both / wall if wall > 0 else 0.0
            staging = length(union([(r["start"], r["end"]) for r in mine if r["kind"] == "host"]))
            host = f"{100 * staging / wall:5.1f}%" if staging > 0 and wall > 0 else "-"
            stats[(variant, impl, dev)] = dict(wall=wall, overlap=ov, **share)
            rate = h2d_bytes / h2d_time / 1e9 if h2d_time > 0 else 0.0
            p2p_bytes = sum(r["bytes"] for r in mine if r["kind"] == "P2P")
            p2p = (f"{100 * share['P2P']:5.1f}% {p2p_bytes / 1e9:>7.3f}" if busy["P2P"] else f"{'-':>6} {'-':>7}")
            lines.append(f"{variant:<10} {impl:<9} {dev:>3} {wall:>9.4f} {100 * share['H2D']:>5.1f}% "
                         f"{100 * share['compute']:>7.1f}% {100 * share['D2H']:>5.1f}% {100 * ov:>7.1f}% {rate:>9.1f} {host:>6} "
                         f"{p2p}")
    return "\n".join(lines), stats


def draw(runs, png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    keys = sorted(runs)
    heights = [max(1, len({(r["gpu"], r["stream"]) for r in runs[k]})) for k in keys]
    fig, axes = plt.subplots(len(keys), 1, figsize=(13, 1.2 + 0.55 * sum(heights) + 0.6 * len(keys)),
                             gridspec_kw=dict(height_ratios=heights), squeeze=False)
    lane = {"H2D": 0.32, "P2P": 0.16, "compute": 0.0, "D2H": -0.16, "host": -0.32, "wait": -0.32}
    for ax, key in zip(axes[:, 0], keys):
        rows = runs[key]
        t0 = min(r["start"] for r in rows)
        wall = max(r["end"] for r in rows) - t0
        order = sorted({(r["gpu"], r["device"], r["stream"]) for r in rows})
        y_of = {(g, s): len(order) - 1 - i for i, (g, d, s) in enumerate(order)}
        for kind in KINDS + HOST_KINDS:
            for r in rows:
                if r["kind"] != kind:
                    continue
                y = y_of[(r["gpu"], r["stream"])] + lane[kind]
                ax.broken_barh([(r["start"] - t0, max(r["end"] - r["start"], wall * 1e-4))], (y - 0.07, 0.14),
                               facecolors=COLOURS[kind], edgecolor="none")
        ax.set_yticks([y_of[(g, s)] for g, d, s in order])
        ax.set_yticklabels([f"GPU {g} (dev {d}) stream {s}" for g, d, s in order], fontsize=8)
        ax.set_ylim(-0.6, len(order) - 0.4)
        ax.set_xlim(0, wall * 1.01 if wall > 0 else 1)
        ax.set_title(f"{key[0]} ({key[1]}): {wall:.3f} s", fontsize=10, loc="left")
        ax.grid(axis="x", alpha=0.3)
    axes[-1, 0].set_xlabel("seconds since the call began")
    shown = [k for k in KINDS + HOST_KINDS
             if k in ("H2D", "compute", "D2H") or any(r["kind"] == k for v in runs.values() for r in v)]
    labels = {"P2P": "P2P (slices to other GPUs)", "host": "host staging copy", "wait": "host waits for a staging buffer"}
    fig.legend(handles=[Patch(color=COLOURS[k], label=labels.get(k, k)) for k in shown], loc="upper right",
               ncol=len(shown), fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    labio.save_figure("timeline", "--png", fig, png, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("--png", help="where to draw the picture (default: the CSV's name with .png)")
    ap.add_argument("--variant", help="only these variants (comma-separated)")
    ap.add_argument("--impl", help="only this implementation (student, solution)")
    a = ap.parse_args()
    png = a.png if a.png is not None else (a.csv[:-4] if a.csv.endswith(".csv") else a.csv) + ".png"
    labio.check_output("timeline", "--png", png)
    if not os.path.exists(a.csv):
        labio.fail("timeline", f"no {a.csv}: step07_streams_multigpu --trace {a.csv} writes it on a GPU host "
                   "(without a GPU, draw the sample: step07_streams_multigpu/tests/timeline_sample.csv)")
    runs = read(a.csv)
    there = ", ".join(sorted({f"{k[0]} ({k[1]})" for k in runs}))
    if a.variant is not None:
        keep = set(v for v in a.variant.split(",") if v)
        runs = {k: v for k, v in runs.items() if k[0] in keep}
        if not runs:
            labio.fail("timeline", f"--variant {a.variant}: {a.csv} has no rows of it (it has {there})")
    if a.impl is not None:
        runs = {k: v for k, v in runs.items() if k[1] == a.impl}
        if not runs:
            labio.fail("timeline", f"--impl {a.impl}: {a.csv} has no rows of it (it has {there})")
    table, _ = overlap_table(runs)
    print("busy time of each engine and overlap of products with copies, over the wall time:")
    print(table)
    try:
        draw(runs, png)
    except ImportError:
        print(labio.no_matplotlib("timeline"), file=sys.stderr)
        return
    print(f"timeline: drew {png}")


if __name__ == "__main__":
    main()
