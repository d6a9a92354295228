#!/usr/bin/env python3
"""Draw the roofline of the ladder: every step's point under the machine's roofs.

    roofline.py LADDER.csv BANDWIDTH.csv [BANDWIDTH.csv ...] --png roofline.png

x: arithmetic intensity, flops per byte moved from main memory, from each
variant's own data-movement model (MODELS below, the one place they live).
y: the GFLOP/s the ladder CSV measured. Roofs, all measured on the machine:
the FMA peak of the harness's probe (the CSV's peak_gflops column) and the
memory bandwidth of lab_stream (STREAM triad; one thread and all threads) or,
for GPU rows, lab_gpu_copy (device-to-device copy). A point under the slanted
roof is bound by memory; one right of the ridge can only be held back by the
core itself (or by a cache level the model leaves out).
"""
import argparse
import csv
import os
import sys

# ---- data-movement models: flops per byte of main-memory traffic ------------------------
# n x n x n, 8-byte doubles. "Blocked" is the BLIS traffic of loops over nc, kc, mc:
# B is read once, A once per nc-wide panel of B, C read and written once per kc:
#   bytes = 8 (n^2 * n/nc + n^2 + 2 n^2 * n/kc),  flops = 2 n^3.
# The block sizes are those the banner printed on the 2-core VM (mc, nc, kc); a GPU
# kernel with a BM x BN block tile reads (BM + BN) doubles per 2 BM BN flops.


def blocked(nc, kc):
    return lambda n: 2.0 / (8.0 * (1.0 / nc + 1.0 / n + 2.0 / kc))


MODELS = {
    # step01 ijk: A(i, p) walks a row at stride n, so each multiply-add pulls a
    # whole 64-byte line for one double, plus 8 bytes of B's column.
    ("step01", "naive_ijk"): (lambda n: 2.0 / (64 + 8), "2 flops / (64 B line of A + 8 B of B)"),
    # step01 jki: A's column streams; C's column and B(p, j) stay in cache.
    ("step01", "naive_jki"): (lambda n: 2.0 / 8, "2 flops / 8 B of A"),
    # step02: the dot product streams B's column; the row of A^T stays in L1.
    ("step02", "transpose"): (lambda n: 2.0 / 8, "2 flops / 8 B of B"),
    # step03: cache blocks mc 128, nc 1024, kc 512 (its defaults on the 2-core VM).
    ("step03", "tiled"): (blocked(1024, 512), "blocked, nc 1024, kc 512"),
    # step04 and step09's CPU kernels: step04's blocks (avx512: nc 3640, kc 144).
    ("step04", "*"): (blocked(3640, 144), "blocked, nc 3640, kc 144"),
    ("step09", "*"): (blocked(3640, 144), "step04's blocks, nc 3640, kc 144"),
    ("step01", "openblas"): (blocked(4096, 256), "OpenBLAS blocks, about nc 4096, kc 256"),
    # GPU: step05 naive reads both operands from global memory per multiply-add;
    # tiled reads each 32 x 32 tile once per block; step06 a 128 x 64 block tile.
    ("step05", "naive"): (lambda n: 2.0 / 16, "2 flops / 16 B"),
    ("step05", "naive_coalesced"): (lambda n: 2.0 / 16, "2 flops / 16 B"),
    ("step05", "tiled"): (lambda n: 32 / 8.0, "tile 32: T / 8"),
    ("step06", "*"): (lambda n: 128 * 64 / (4.0 * (128 + 64)), "block tile 128 x 64"),
}


HIDDEN = ("maxplus", "plustimes", "step04_dgemm")  # step09's rows beside min-plus


def model(r):
    for key in ((r["step"], r["variant"]), (r["step"], "*")):
        if key in MODELS:
            return MODELS[key]
    return None


def is_gpu(r):
    return r.get("device", "").lower().startswith(("nvidia", "gpu")) or r["variant"].startswith("cublas")


def load(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("ladder")
    ap.add_argument("bandwidth", nargs="+", help="lab_stream / lab_gpu_copy CSVs")
    ap.add_argument("--png", required=True)
    ap.add_argument("--title", default="")
    args = ap.parse_args()
    try:
        rows = [r for r in load(args.ladder) if r.get("check") == "pass"]
        bw = [b for p in args.bandwidth for b in load(p)]
    except OSError as e:
        sys.exit(f"roofline: {e.filename}: {e.strerror}")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("roofline: matplotlib is not installed; no PNG (apt-get install python3-matplotlib)", file=sys.stderr)
        return 0
    gpu = any(is_gpu(r) for r in rows) and any(b["probe"] == "d2d_copy" for b in bw)
    # one point per idea: the dispatched kernel, not each instruction set's copy of it
    rows = [r for r in rows if is_gpu(r) == gpu and model(r) and r["variant"] not in HIDDEN
            and not r["variant"].endswith(("_avx512", "_avx2", "_generic"))]
    if not rows:
        sys.exit(f"roofline: no {'GPU' if gpu else 'CPU'} rows with a model in {args.ladder}")
    peak = max(float(r.get("peak_gflops") or 0) for r in rows)
    roofs = [(float(b["gb_s"]), b) for b in bw if (b["probe"] == "d2d_copy") == gpu]
    if not roofs or peak <= 0:
        sys.exit("roofline: need a peak (the CSV's peak_gflops) and a bandwidth")
    fig, ax = plt.subplots(figsize=(9, 6))
    xs = [0.01, 1000]
    ax.plot(xs, [peak] * 2, color="black", lw=2)
    ax.text(xs[1] / 1.2, peak * 1.08, f"FMA peak {peak:.0f} GFLOP/s (measured, 1 thread)" if not gpu else
            f"FP64 peak {peak / 1e3:.1f} TFLOP/s (measured)", ha="right", fontsize=9)
    for gbs, b in sorted(roofs, key=lambda t: t[0]):
        label = (f'STREAM triad, {b["threads"]} thread{"s" if b["threads"] != "1" else ""}: {gbs:.1f} GB/s'
                 if not gpu else f"device copy {gbs:.0f} GB/s")
        ridge = peak / gbs
        xx = [xs[0], ridge]
        style = "-" if b["threads"] in ("1", "0") else ":"
        ax.plot(xx, [x * gbs for x in xx], color="#444444", ls=style, lw=1.5)
        at = ridge / 30 if style == "-" else ridge / 8
        ax.annotate(label + ("" if gpu else " (all cores)" if style == ":" else ""), (at, at * gbs),
                    xytext=(6, -4 if style == "-" else 4), textcoords="offset points", fontsize=8,
                    color="#444444", ha="left", va="top" if style == "-" else "bottom")
        ax.axvline(ridge, color="#bbbbbb", lw=0.8, ls="--")
    cmap = plt.get_cmap("tab10")
    steps = sorted({r["step"] for r in rows})
    for r in rows:
        n = int(r["n"])
        ai = model(r)[0](n)
        y = float(r["gflops"])
        c = "#7f7f7f" if r["variant"] in ("openblas", "cublas") else cmap(steps.index(r["step"]) % 10)
        ax.scatter([ai], [y], color=c, s=45, zorder=3, edgecolor="black", linewidths=0.5)
        name = r["variant"] if r["variant"] in ("openblas", "cublas") else f'{r["step"]} {r["variant"]}'
        ax.annotate(name, (ai, y), xytext=(6, 0), textcoords="offset points", fontsize=8, va="center")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(*xs)
    lo = min(float(r["gflops"]) for r in rows)
    ax.set_ylim(lo / 3, peak * 2)
    ax.set_xlabel("arithmetic intensity: flops per byte from main memory (each step's model)")
    ax.set_ylabel("GFLOP/s (measured)")
    ax.set_title(args.title or f'roofline, n = {rows[0]["n"]}, {rows[0]["threads"]} thread(s)')
    ax.text(0.99, 0.01, "left of the dashed ridge and on the slope: bound by memory\n"
            "right of it: only the core can hold a point down (or a cache the model leaves out)",
            transform=ax.transAxes, ha="right", va="bottom", fontsize=8, color="#555555")
    ax.grid(which="both", alpha=0.2)
    fig.tight_layout()
    tmp = args.png + ".tmp.png"
    fig.savefig(tmp, dpi=110)
    os.replace(tmp, args.png)
    print(f"roofline: wrote {args.png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
