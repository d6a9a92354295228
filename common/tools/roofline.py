#!/usr/bin/env python3
"""Draw the roofline of the ladder: every step's point under the machine's roofs.

    roofline.py LADDER.csv BANDWIDTH.csv [BANDWIDTH.csv ...] --png roofline.png
    roofline.py --gpu BENCH.csv GPU_COPY.csv --png roofline_gpu.png [--n 8192]

x: arithmetic intensity, flops per byte moved from main memory, from each
variant's own data-movement model (MODELS below, the one place they live).
y: the GFLOP/s the ladder CSV measured. Roofs, all measured on the machine:
the FMA peak of the harness's probe (the CSV's peak_gflops column) and the
memory bandwidth of lab_stream (STREAM triad; one thread and all threads) or,
for GPU rows, lab_gpu_copy (device-to-device copy). A point under the slanted
roof is bound by memory; one right of the ridge can only be held back by the
core itself (or by a cache level the model leaves out).

GPU mode (--gpu, or by itself where the CSV has GPU rows and a d2d_copy probe is
given): the rows of gpu-check's bench.csv (step05, step06, cuBLAS) at one size
(--n, default the largest), one point per variant; the roofs are the FP64
CUDA-core peak the harness measured (peak_gflops), cuBLAS's measured rate as a
second, tensor-core roof (DMMA runs past the CUDA-core peak), and the device-to-
device copy bandwidth. A GPU model counts global-memory requests; the 50 MB L2
serves many of them, so a point's intensity from HBM is at least the model's.
"""
import argparse
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import labio  # noqa: E402  (one line where matplotlib is missing: which Python, and one that has it)

# ---- data-movement models: flops per byte of main-memory traffic ------------------------
# n x n x n, 8-byte doubles. "Blocked" is the BLIS traffic of loops over nc, kc, mc:
# B is read once, A once per nc-wide panel of B, C read and written once per kc:
#   bytes = 8 (n^2 * n/nc + n^2 + 2 n^2 * n/kc),  flops = 2 n^3.
# The block sizes are those the banner printed on the 2-core VM (mc, nc, kc); a GPU
# kernel with a BM x BN block tile reads (BM + BN) doubles per 2 BM BN flops.


def blocked(nc, kc):
    return lambda n: 2.0 / (8.0 * (1.0 / nc + 1.0 / n + 2.0 / kc))


def tile_ai(bm, bn):
    """A GPU block with a bm x bn tile of C: per k, bm + bn doubles in, 2 bm bn flops."""
    return 2.0 * bm * bn / (8.0 * (bm + bn))


def dmma_tile(n, sms=132):
    return (128, 128) if (-(-n // 128)) ** 2 >= sms else (64, 64)


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
    # GPU. step05 naive, both index orders: a 16 x 16 block gets 16 values of A and 16 of B
    # per k from L2 (L1 serves the block's re-reads). Coalescing changes the transactions,
    # not the bytes, so the two share an intensity and the slower one sits lower.
    ("step05", "naive"): (lambda n: tile_ai(16, 16), "16 x 16 block, re-reads from L1"),
    ("step05", "naive_coalesced"): (lambda n: tile_ai(16, 16), "16 x 16 block, re-reads from L1"),
    # step05 tiled: a block loads a kTile^2 tile of A and one of B per kTile^3 multiply-adds.
    ("step05", "tiled"): (lambda n: tile_ai(32, 32), "shared tiles 32 x 32: 4 flops/B"),
    # step06 SIMT: the default 128 x 64 block tile (simt.cu's choice once n >= 1024).
    ("step06", "simt"): (lambda n: tile_ai(128, 64), "block tile 128 x 64"),
    # step06 DMMA: 128 x 128 once there are more tiles than an H100's 132 SMs, else 64 x 64 (dmma.cu).
    ("step06", "dmma"): (lambda n: tile_ai(*dmma_tile(n)), "block tile 128 x 128 (64 x 64 below n 1536)"),
    # cuBLAS: its FP64 kernel's tile is not visible to the lab; assumed 128 x 128 like step06's DMMA.
    ("step05", "cublas"): (lambda n: tile_ai(128, 128), "assumed block tile 128 x 128"),
    ("step06", "cublas"): (lambda n: tile_ai(128, 128), "assumed block tile 128 x 128"),
}


HIDDEN = ("maxplus", "plustimes", "step04_dgemm")  # step09's rows beside min-plus


def model(r):
    for key in ((r["step"], r["variant"]), (r["step"], "*")):
        if key in MODELS:
            return MODELS[key]
    return None


def is_gpu(r):
    return r.get("device", "").lower().startswith(("nvidia", "gpu")) or r["variant"].startswith("cublas")


def pick(rows, n):
    """The rows at size n, one per (variant, or step for a step's own kernels): the fastest,
    so cuBLAS timed by step05 and by step06 is one point."""
    best = {}
    for r in rows:
        if int(r["n"]) != n:
            continue
        key = (r["variant"] if r["variant"] in ("openblas", "cublas") else (r["step"], r["variant"]), r["threads"])
        if key not in best or float(r["gflops"]) > float(best[key]["gflops"]):
            best[key] = r
    return list(best.values())


def load(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("ladder")
    ap.add_argument("bandwidth", nargs="+", help="lab_stream / lab_gpu_copy CSVs")
    ap.add_argument("--png", required=True)
    ap.add_argument("--title", default="")
    ap.add_argument("--gpu", action="store_true", help="the GPU rows under the FP64 peak and the device copy")
    ap.add_argument("--n", type=int, help="the size to draw where the CSV has several (default: the largest)")
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
        print(labio.no_matplotlib("roofline", "no PNG"), file=sys.stderr)
        return 0
    gpu = args.gpu or (any(is_gpu(r) for r in rows) and any(b["probe"] == "d2d_copy" for b in bw))
    # one point per idea: the dispatched kernel, not each instruction set's copy of it
    rows = [r for r in rows if is_gpu(r) == gpu and model(r) and r["variant"] not in HIDDEN
            and not r["variant"].endswith(("_avx512", "_avx2", "_neon", "_generic"))]
    if not rows:
        sys.exit(f"roofline: no {'GPU' if gpu else 'CPU'} rows with a model in {args.ladder}")
    sizes = sorted({int(r["n"]) for r in rows})
    n_pick = args.n if args.n else sizes[-1]
    if n_pick not in sizes:
        sys.exit(f"roofline: no rows at n = {n_pick} in {args.ladder} (it has {', '.join(map(str, sizes))})")
    peak = max(float(r.get("peak_gflops") or 0) for r in rows)
    rows = pick(rows, n_pick)
    # the tensor-core roof: the best cuBLAS DGEMM rate measured (DMMA runs past the CUDA-core peak)
    tc = max((float(r["gflops"]) for r in rows if gpu and r["variant"] == "cublas"), default=0.0)
    roofs = [(float(b["gb_s"]), b) for b in bw if (b["probe"] == "d2d_copy") == gpu]
    if not roofs or peak <= 0:
        sys.exit("roofline: need a peak (the CSV's peak_gflops) and a bandwidth")
    fig, ax = plt.subplots(figsize=(9, 6))
    xs = [0.01, 1000]
    ax.plot(xs, [peak] * 2, color="black", lw=2)
    if not gpu:
        ax.text(xs[1] / 1.2, peak * 1.08, f"FMA peak {peak:.0f} GFLOP/s (measured, 1 thread)", ha="right", fontsize=9)
    else:  # below the line: the points near the roofs keep the space above it
        ax.text(xs[1] / 1.2, peak / 1.08, f"FP64 CUDA cores {peak / 1e3:.1f} TFLOP/s\n(measured peak)", ha="right",
                va="top", fontsize=9)
    if tc > peak:
        ax.plot(xs, [tc] * 2, color="black", lw=1.2, ls="--")
        ax.text(xs[1] / 1.2, tc * 1.08, f"FP64 tensor cores: cuBLAS {tc / 1e3:.1f} TFLOP/s", ha="right", fontsize=9)
    for gbs, b in sorted(roofs, key=lambda t: t[0]):
        label = (f'STREAM triad, {b["threads"]} thread{"s" if b["threads"] != "1" else ""}: {gbs:.1f} GB/s'
                 if not gpu else f"device copy {gbs:.0f} GB/s")
        ridge = peak / gbs
        xx = [xs[0], max(peak, tc) / gbs]
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
        left = gpu and r["variant"] == "cublas"  # beside step06 dmma's point: its label goes left
        ax.annotate(name, (ai, y), xytext=(-6 if left else 6, 0), textcoords="offset points", fontsize=8,
                    va="center", ha="right" if left else "left")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(*xs)
    lo = min(float(r["gflops"]) for r in rows)
    ax.set_ylim(lo / 3, max(peak, tc) * 2)
    ax.set_xlabel("arithmetic intensity: flops per byte from " + ("global" if gpu else "main") +
                  " memory (each step's model)")
    ax.set_ylabel("GFLOP/s (measured)")
    ax.set_title(args.title or (f'GPU roofline, n = {n_pick}: {rows[0].get("device") or "GPU"}' if gpu else
                                f'roofline, n = {rows[0]["n"]}, {rows[0]["threads"]} thread(s)'))
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
