#!/usr/bin/env python3
"""Draw who took which block of C in step04's dealt runs.

    python3 common/tools/dealt_map.py MAP.csv OUT.png [--title TEXT]

MAP.csv is what `step04_ways_sweep --dealt ... --map MAP.csv` writes: for the
last call of each --dealt size, each block of C (its rows and columns) and the
OpenMP thread that took it. Each size becomes one row of the picture: C with
its blocks coloured by thread, and beside it how many blocks each thread took.
Threads that ran slower (their core busy with other work) took fewer: with
fixed shares the whole call would have waited for them. Exit status: 0 the
picture was written, 1 a bad CSV or an unwritable OUT, 2 bad usage, 77 no
matplotlib here (skipped).
"""
import argparse
import csv
import os
import pathlib
import sys
from collections import OrderedDict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import labio  # noqa: E402  (one line where matplotlib is missing: which Python, and one that has it)


def load(path):
    runs = OrderedDict()
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        sys.exit(f"dealt_map: cannot read {path}: {e.strerror}")
    need = {"n", "threads", "mc", "nc", "block", "row0", "row1", "col0", "col1", "thread", "seconds"}
    if not rows or not need <= set(rows[0]):
        sys.exit(f"dealt_map: {path} is not a step04_ways_sweep --map CSV (columns {', '.join(sorted(need))})")
    for i, r in enumerate(rows, start=2):
        try:
            key = (int(r["n"]), int(r["threads"]), int(r["mc"]), int(r["nc"]))
            block = (int(r["row0"]), int(r["row1"]), int(r["col0"]), int(r["col1"]), int(r["thread"]))
            seconds = float(r["seconds"])
        except ValueError:
            sys.exit(f"dealt_map: {path}, line {i}: not a number where one belongs")
        if block[4] < 0 or block[4] >= key[1]:
            sys.exit(f"dealt_map: {path}, line {i}: thread {block[4]} of a run of {key[1]} threads")
        runs.setdefault(key, {"blocks": [], "seconds": seconds})["blocks"].append(block)
    return runs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("map", type=pathlib.Path)
    ap.add_argument("out", type=pathlib.Path)
    ap.add_argument("--title", default="", help="the machine, for the picture's title")
    args = ap.parse_args()
    runs = load(args.map)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.patches import Rectangle
    except ImportError:
        print(labio.no_matplotlib("dealt_map"), file=sys.stderr)
        sys.exit(77)  # (the lab's "skipped")
    fig, axes = plt.subplots(len(runs), 2, figsize=(10, 4.6 * len(runs)), squeeze=False,
                             gridspec_kw={"width_ratios": [1.1, 1]})
    tab = plt.get_cmap("tab20")

    def cmap(t):  # the 10 dark colours first, then the light ones: neighbours differ
        return tab((2 * t) % 20 + (2 * t // 20) % 2)

    for row, ((n, threads, mc, nc), run) in enumerate(runs.items()):
        ax, bar = axes[row]
        counts = [0] * threads
        for r0, r1, c0, c1, t in run["blocks"]:
            counts[t] += 1
            ax.add_patch(Rectangle((c0, r0), c1 - c0, r1 - r0, facecolor=cmap(t), edgecolor="white", lw=0.6))
            if len(run["blocks"]) <= 300:
                ax.text((c0 + c1) / 2, (r0 + r1) / 2, str(t), ha="center", va="center", fontsize=6)
        ax.set_xlim(0, n)
        ax.set_ylim(n, 0)
        ax.set_aspect("equal")
        ax.set_xlabel("columns of C")
        ax.set_ylabel("rows of C")
        ax.set_title(f"n = {n}: {len(run['blocks'])} blocks of {mc} x {nc}, {threads} threads\n"
                     f"(colour and number: the thread that took the block)", fontsize=9)
        bar.bar(range(threads), counts, color=[cmap(t) for t in range(threads)])
        bar.set_xticks(range(threads))
        even = len(run["blocks"]) / threads
        bar.axhline(even, color="black", ls=":", lw=1)
        bar.text(threads - 0.5, even, f" even share {even:.1f}", va="bottom", ha="right", fontsize=8)
        bar.set_xlabel("thread")
        bar.set_ylabel("blocks taken")
        bar.set_title(f"blocks a thread: {min(counts)} to {max(counts)} (call {run['seconds'] * 1e3:.0f} ms)",
                      fontsize=9)
    if args.title:
        fig.suptitle(args.title, fontsize=10)
    fig.tight_layout()
    tmp = args.out.with_suffix(".tmp.png")
    try:
        fig.savefig(tmp, dpi=110)
        tmp.replace(args.out)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        sys.exit(f"dealt_map: cannot write {args.out}: {e.strerror}")
    print(f"dealt_map: wrote {args.out}")


if __name__ == "__main__":
    main()
