#!/usr/bin/env python3
"""Draw one teaching picture per blocking step, from the parameters in the code.

    diagrams.py                  write all four pictures next to their handouts
    diagrams.py step04 step06    only those
    diagrams.py --out DIR        write them to DIR instead (to look before committing)

  step03_tiling/blocking.png              the mc x nc x kc blocks of C, A, B and the
                                          cache level each block is sized for
  step04_simd/five_loops.png              the five loops around the micro-kernel and
                                          the packed panels of A and B (the BLIS picture)
  step04_simd/ways.png                    the threads' ways (jc x ic x jr) on a 64-core node,
                                          and why splitting the rows alone (mc shrinking) loses
  step05_cuda_shared/shared_tile.png      grid -> block's tile of C -> the kTile x kTile
                                          tiles of A and B in shared memory -> one thread
  step06_cuda_register_blocking/tile_hierarchy.png
                                          grid -> block tile (shared memory) -> warp tile
                                          -> a thread's 8 x 8 registers, and the DMMA piece

The tile sizes are read from the sources (step05's kTile, step06's warp layout and
default block tiles, step04's MR x NR kernels); the cache-derived block sizes of steps
03 and 04 follow the rules of step03's default_tiles() and step04's blocking.cpp,
applied to the lab's CPUs as the handouts list them. A source that no longer has
what is looked for stops the script with its name, so a picture never shows a
parameter the code has dropped. Drawings are schematic: block sizes are labelled,
not to scale (nc is 40960 columns against a tile of 2).
"""
import argparse
import os
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]

# The lab's CPUs, as the handouts give them (bytes): step03's 2-core VM
# (L1d 48 KiB, L2 2 MiB, L3 480 MiB) and step04's EPYC Zen 4 row.
STEP03_CACHES = {"name": "the lab's 2-core VM", "l1d": 48 << 10, "l2": 2 << 20, "l3": 480 << 20}
STEP04_CACHES = {"name": "EPYC Zen 4", "l1d": 32 << 10, "l2": 1 << 20, "l3": 32 << 20}
# step04's ways: the 64-core Xeon node of step04_simd/tests/test_ways.cpp (kMachines' "xeon64").
NODE_CACHES = {"name": "64-core Xeon node", "l1d": 48 << 10, "l2": 2 << 20, "l3": 300 << 20}

# colours: one per memory level, the same in every picture
REG, L1, L2, L3, SMEM, GLOBAL = "#d62728", "#ff7f0e", "#2ca02c", "#1f77b4", "#9467bd", "#7f7f7f"


# ---- parameters, read from the code ------------------------------------------------------
def grab(rel, pattern, what):
    """The integer groups of `pattern`'s first match in ROOT/rel, or exit naming both."""
    path = ROOT / rel
    try:
        m = re.search(pattern, path.read_text())
    except OSError as e:
        sys.exit(f"diagrams: {rel}: {e.strerror}")
    if not m:
        sys.exit(f"diagrams: {rel} no longer has {what} (pattern {pattern!r}); update diagrams.py")
    return [int(g) for g in m.groups()]


def step03_tiles(c):
    # step03_tiling/tiling.cpp default_tiles(): 4 kc doubles in half of L1, a kc x mc
    # block of At in half of L2, a kc x nc block of B in half of L3 (mc, nc even).
    kc = max(64, c["l1d"] // 2 // (4 * 8))
    mc = max(2, (c["l2"] // 2 // (kc * 8)) & ~1)
    nc = max(2, (c["l3"] // 2 // (kc * 8)) & ~1)
    return mc, nc, kc


def step04_params(c):
    mr, nr = grab("step04_simd/kernel_avx512.cpp", r"constexpr int kMr = (\d+), kNr = (\d+);", "kMr, kNr")
    # step04_simd/blocking.cpp: kc x NR micro-panel of B in half of L1 (multiple of 8),
    # mc x kc block of A in half of L2 (multiple of MR), nc at most 4096 (multiple of NR).
    rd = lambda x, m: x // m * m  # noqa: E731
    kc = min(max(rd(c["l1d"] // 2 // (8 * nr), 8), 32), 1024)
    mc = min(rd(c["l2"] // 2 // (8 * kc), mr), 4096)
    nc = min(rd(c["l3"] // 2 // (8 * kc), nr), rd(4096, nr))
    return dict(mr=mr, nr=nr, mc=mc, nc=nc, kc=kc)


def step04_node_ways():
    """The ways step04's layout_for picks on the 64-core node, as its test pins them."""
    jc, ic, jr, n, threads = grab("step04_simd/tests/test_ways.cpp",
                                  r"const Ways want\{(\d+), (\d+), (\d+)\};  // handout: n = (\d+), (\d+) threads",
                                  "the handout's ways (TheHandoutsNode)")
    return dict(jc=jc, ic=ic, jr=jr, n=n, threads=threads)


def step05_params():
    (tile,) = grab("step05_cuda_shared/shared.hpp", r"constexpr int kTile = (\d+);", "kTile")
    return dict(tile=tile)


def step06_params():
    wm, wn, tm, tn = grab("step06_cuda_register_blocking/warp_layout.cuh",
                          r"constexpr int kWarpM = (\d+), kWarpN = (\d+), kThreadM = (\d+), kThreadN = (\d+);",
                          "the warp layout constants")
    # the default SIMT tile for a GPU full of blocks ("tiles >= sms / 2 ? Tile{128, 64, 16}")
    bm, bn, bk = grab("step06_cuda_register_blocking/simt.cu", r"\? lab::step06::Tile\{(\d+), (\d+), (\d+)\}",
                      "the default SIMT block tile")
    dbm, dbn, dbk, dwm, dwn = grab("step06_cuda_register_blocking/dmma.cu",
                                   r"\{(\d+), (\d+), (\d+), launch<\d+, \d+, \d+, (\d+), (\d+),",
                                   "the first (default) DMMA tile")
    (mma_k,) = grab("step06_cuda_register_blocking/dmma.cu", r"constexpr int kMmaK = (\d+);", "kMmaK")
    return dict(wm=wm, wn=wn, tm=tm, tn=tn, bm=bm, bn=bn, bk=bk, dbm=dbm, dbn=dbn, dbk=dbk,
                dwm=dbm // dwm, dwn=dbn // dwn, mma_m=16, mma_n=8, mma_k=mma_k)


def kib(b):
    return f"{b >> 20} MiB" if b >= 1 << 20 else f"{b >> 10} KiB"


# ---- drawing helpers ------------------------------------------------------------------------
def box(ax, x, y, w, h, fc="white", ec="black", lw=1.2, alpha=1.0, hatch=None, z=1):
    from matplotlib.patches import Rectangle
    ax.add_patch(Rectangle((x, y), w, h, facecolor=fc, edgecolor=ec, lw=lw, alpha=alpha, hatch=hatch, zorder=z))


def text(ax, x, y, s, size=10, **kw):
    kw.setdefault("ha", "center")
    kw.setdefault("va", "center")
    ax.text(x, y, s, fontsize=size, zorder=10, **kw)


def arrow(ax, x0, y0, x1, y1, color="black", lw=1.3, style="-|>"):
    ax.annotate("", (x1, y1), (x0, y0), arrowprops=dict(arrowstyle=style, color=color, lw=lw), zorder=9)


def brace(ax, x0, y0, x1, y1, label, side, size=9, color="black"):
    """A dimension line from (x0, y0) to (x1, y1) with its label on `side` (l, r, t, b)."""
    ax.annotate("", (x1, y1), (x0, y0), arrowprops=dict(arrowstyle="<->", color=color, lw=0.9), zorder=9)
    off = {"l": (-0.15, 0, "right"), "r": (0.15, 0, "left"), "t": (0, 0.15, "center"), "b": (0, -0.15, "center")}
    dx, dy, ha = off[side]
    va = "bottom" if side == "t" else "top" if side == "b" else "center"
    text(ax, (x0 + x1) / 2 + dx, (y0 + y1) / 2 + dy, label, size, ha=ha, va=va, color=color)


def canvas(w, h, xlim, ylim):
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(w, h))
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.set_aspect("equal")
    ax.axis("off")
    return fig, ax


def legend(ax, items, loc="lower left", **kw):
    from matplotlib.patches import Patch
    ax.legend(handles=[Patch(facecolor=c, edgecolor="black", label=l, alpha=0.6) for c, l in items], loc=loc,
              fontsize=9, frameon=False, **kw)


def save(fig, path):
    fig.tight_layout()
    tmp = path.with_name(path.name + ".tmp.png")
    fig.savefig(tmp, dpi=100)
    os.replace(tmp, path)
    print(f"diagrams: wrote {path}")


# ---- step03: which block lives in which cache ------------------------------------------------
def draw_step03(out):
    c = STEP03_CACHES
    mc, nc, kc = step03_tiles(c)
    fig, ax = canvas(13, 6.6, (-0.8, 20.6), (-0.6, 10.6))
    # the product laid out as C = A B: B above C, A left of C (k along A's columns, B's rows)
    ax0, ay0, aw, ah = 0.5, 0.5, 4.0, 5.5   # A: m x k
    bx0, by0, bw, bh = 5.5, 6.8, 7.0, 3.0   # B: k x n
    cx0, cy0 = bx0, ay0                     # C: m x n
    box(ax, ax0, ay0, aw, ah, fc="#f4f4f4")
    box(ax, bx0, by0, bw, bh, fc="#f4f4f4")
    box(ax, cx0, cy0, bw, ah, fc="#f4f4f4")
    text(ax, ax0 + aw / 2, ay0 - 0.35, "A  (m x k)", 11)
    text(ax, bx0 + bw / 2, by0 - 0.3, "B  (k x n)", 11)
    text(ax, cx0 + bw / 2, cy0 - 0.35, "C  (m x n)", 11)
    # the current blocks: columns jc.. (nc), slice pc.. (kc), rows ic.. (mc)
    kx, kwid = ax0 + 1.2, 1.4          # kc slice in A's columns
    ky, khgt = by0 + 0.8, 1.4          # the same kc slice in B's rows
    jx, jw = bx0 + 1.0, 4.6            # nc columns
    iy, ih = ay0 + 2.2, 2.0            # mc rows
    box(ax, jx, ky, jw, khgt, fc=L3, alpha=0.45)
    box(ax, kx, iy, kwid, ih, fc=L2, alpha=0.55)
    box(ax, jx, iy, jw, ih, fc="#cccccc", alpha=0.7)
    brace(ax, jx, by0 + bh + 0.15, jx + jw, by0 + bh + 0.15, f"nc = {nc}", "t")
    brace(ax, bx0 - 0.15, ky, bx0 - 0.15, ky + khgt, f"kc = {kc}", "l")
    brace(ax, kx, ay0 + ah + 0.15, kx + kwid, ay0 + ah + 0.15, f"kc = {kc}", "t")
    brace(ax, ax0 - 0.15, iy, ax0 - 0.15, iy + ih, f"mc = {mc}", "l")
    text(ax, jx + 1.8, ky + khgt / 2, f"kc x nc block of B\nin L3 ({kib(nc * kc * 8)})", 10)
    text(ax, kx + kwid / 2, iy + ih / 2 + 0.3, f"kc x mc\nblock of At\nin L2\n({kib(mc * kc * 8)})", 9.5)
    text(ax, jx + jw / 2, iy + ih - 0.35, "mc x nc block of C", 10)
    # inside the block: two columns of At and two of B stream through L1, a 2 x 2 of C in registers
    tx, ty = jx + 3.7, iy + 0.3
    box(ax, tx, ky, 0.3, khgt, fc=L1, alpha=0.95, z=3)
    box(ax, kx, ty, kwid, 0.3, fc=L1, alpha=0.95, z=3)
    box(ax, tx, ty, 0.3, 0.3, fc=REG, z=4)
    arrow(ax, tx + 0.15, ky, tx + 0.15, ty + 0.35, color=L1)
    arrow(ax, kx + kwid, ty + 0.15, tx - 0.05, ty + 0.15, color=L1)
    text(ax, tx + 0.15, iy - 0.1, "2 x 2 of C in registers", 9, va="top", color=REG)
    text(ax, tx + 0.15, ky + khgt + 0.1, "2 columns of B: L1", 9, va="bottom", color="#b35806")
    text(ax, kx + kwid / 2, iy - 0.1, "2 columns of At: L1", 9, va="top", color="#b35806")
    # the loop nest, and the rule behind each size
    lx = 17.4
    text(ax, lx, 9.6, "the loops (tiled_loops)", 11, weight="bold")
    loops = [("for jc in 0..n step nc", L3), ("  for pc in 0..k step kc", L3), ("    for ic in 0..m step mc", L2),
             ("      for j pairs in the block", L1), ("        for i pairs in the block", L1),
             ("          dot_2x2 over kc", REG)]
    for i, (s, col) in enumerate(loops):
        text(ax, lx - 2.6, 9.0 - 0.45 * i, s, 9.5, ha="left", family="monospace", color=col)
    rules = [(L1, f"L1:  4 kc doubles <= L1d / 2    -> kc = {kc}"),
             (L2, f"L2:  kc x mc of At <= L2 / 2   -> mc = {mc}"),
             (L3, f"L3:  kc x nc of B  <= L3 / 2   -> nc = {nc}")]
    text(ax, lx, 5.75, "the block sizes (default_tiles)", 11, weight="bold")
    for i, (col, s) in enumerate(rules):
        box(ax, lx - 2.75, 5.05 - 0.55 * i, 0.3, 0.3, fc=col, alpha=0.7)
        text(ax, lx - 2.35, 5.2 - 0.55 * i, s, 9, ha="left", family="monospace")
    text(ax, lx, 3.15, f"{c['name']}: L1d {kib(c['l1d'])}, L2 {kib(c['l2'])},\nL3 {kib(c['l3'])}"
         " (nc > n: one block of columns)", 9, color="#444444")
    text(ax, lx, 1.9, "A is used as At = alpha A^T (step02),\nso both dot_2x2 operands are columns", 9,
         color="#444444")
    text(ax, lx, 0.8, "schematic: sizes labelled, not to scale", 9, color="#777777", style="italic")
    ax.set_title("step03: C is computed block by block; each block is sized for one cache level", fontsize=13)
    save(fig, out / "step03_tiling" / "blocking.png")


# ---- step04: five loops around the micro-kernel ------------------------------------------------
def draw_step04(out):
    p = step04_params(STEP04_CACHES)
    mr, nr, mc, nc, kc = p["mr"], p["nr"], p["mc"], p["nc"], p["kc"]
    fig, ax = canvas(13, 9.9, (-0.3, 19.5), (-0.5, 15.0))
    rows = [13.0, 9.9, 6.8, 3.7, 0.6]  # baseline of each level, top to bottom

    def level(y, label, col):
        text(ax, 0.0, y + 0.9, label, 10.5, ha="left", family="monospace", color=col, weight="bold")

    # loop 5 (JC): C += A B, one nc-wide column block
    y = rows[0]
    level(y, "loop 5  JC: for jc step nc", "black")
    box(ax, 7.2, y - 0.4, 3.0, 1.6, fc="#eeeeee"); box(ax, 8.4, y - 0.4, 1.2, 1.6, fc="#bbbbbb")
    text(ax, 10.4, y + 0.4, "+=", 12)
    box(ax, 10.8, y - 0.4, 1.6, 1.6, fc="#eeeeee")
    text(ax, 12.6, y + 0.4, "x", 11)
    box(ax, 12.8, y - 0.4, 3.0, 1.6, fc="#eeeeee"); box(ax, 14.0, y - 0.4, 1.2, 1.6, fc="#bbbbbb")
    text(ax, 8.7, y - 0.75, "C", 10); text(ax, 11.6, y - 0.75, "A", 10); text(ax, 14.3, y - 0.75, "B", 10)
    brace(ax, 14.0, y + 1.35, 15.2, y + 1.35, f"nc = {nc}", "t")
    # loop 4 (PC): a kc slice; pack B's kc x nc panel (L3)
    y = rows[1]
    level(y, "loop 4  PC: for pc step kc", "black")
    text(ax, 0.0, y + 0.3, "pack_b: kc x nc -> B~  (L3)", 10, ha="left", color=L3)
    box(ax, 7.2, y - 0.4, 1.2, 1.6, fc="#bbbbbb")
    text(ax, 8.6, y + 0.4, "+=", 12)
    box(ax, 9.0, y - 0.4, 1.6, 1.6, fc="#eeeeee"); box(ax, 9.6, y - 0.4, 0.45, 1.6, fc="#bbbbbb")
    text(ax, 10.8, y + 0.4, "x", 11)
    box(ax, 11.0, y - 0.4, 1.2, 1.6, fc="#eeeeee"); box(ax, 11.0, y + 0.35, 1.2, 0.45, fc=L3, alpha=0.6)
    brace(ax, 12.35, y + 0.35, 12.35, y + 0.8, f"kc = {kc}", "r")
    arrow(ax, 13.6, y + 0.55, 14.6, y + 0.55, color=L3)
    for i in range(6):  # B~: NR-column micro-panels, p-major
        box(ax, 14.8 + 0.55 * i, y + 0.2, 0.5, 0.7, fc=L3, alpha=0.6)
    text(ax, 16.4, y - 0.25, f"B~: nc/NR micro-panels of kc x NR", 9, color=L3)
    # loop 3 (IC): an mc block of rows; pack A's mc x kc block (L2); threads share this loop
    y = rows[2]
    level(y, "loop 3  IC: for ic step mc", "black")
    text(ax, 0.0, y + 0.3, "pack_a: mc x kc -> A~  (L2)", 10, ha="left", color=L2)
    text(ax, 0.0, y - 0.2, "threads: jc ways split loop 5, ic ways loop 3, jr ways loop 2", 9, ha="left",
         color="#555555")
    box(ax, 7.2, y - 0.4, 1.2, 1.6, fc="#bbbbbb"); box(ax, 7.2, y + 0.25, 1.2, 0.55, fc="#888888")
    text(ax, 8.6, y + 0.4, "+=", 12)
    box(ax, 9.3, y - 0.4, 0.45, 1.6, fc="#bbbbbb"); box(ax, 9.3, y + 0.25, 0.45, 0.55, fc=L2, alpha=0.7)
    brace(ax, 9.15, y + 0.25, 9.15, y + 0.8, "", "l")
    text(ax, 9.5, y + 1.5, f"mc = {mc}", 9)
    text(ax, 10.0, y + 0.4, "x", 11)
    box(ax, 10.25, y + 0.15, 2.0, 0.6, fc=L3, alpha=0.6)
    text(ax, 11.25, y - 0.15, "B~", 9, color=L3)
    arrow(ax, 12.4, y + 0.5, 13.4, y + 0.5, color=L2)
    for i in range(4):  # A~: MR-row micro-panels, p-major
        box(ax, 13.6, y + 1.0 - 0.42 * i, 2.6, 0.36, fc=L2, alpha=0.7)
    text(ax, 16.4, y + 0.5, "A~: mc/MR micro-panels\nof MR x kc", 9, color=L2, ha="left")
    # loop 2 (JR): an NR-wide micro-panel of B~ (L1)
    y = rows[3]
    level(y, "loop 2  JR: for jr step NR", "black")
    text(ax, 0.0, y + 0.3, "kc x NR micro-panel of B~  (L1)", 10, ha="left", color=L1)
    box(ax, 7.2, y - 0.4, 1.2, 1.6, fc="#888888"); box(ax, 7.55, y - 0.4, 0.3, 1.6, fc="#555555")
    text(ax, 8.6, y + 0.4, "+=", 12)
    for i in range(4):
        box(ax, 9.2, y + 1.0 - 0.42 * i, 1.6, 0.36, fc=L2, alpha=0.7)
    text(ax, 11.0, y + 0.4, "x", 11)
    box(ax, 11.2, y + 0.1, 2.2, 0.6, fc=L3, alpha=0.35); box(ax, 11.75, y + 0.1, 0.5, 0.6, fc=L1, z=3)
    brace(ax, 11.75, y + 0.85, 12.25, y + 0.85, f"NR = {nr}", "t")
    # loop 1 (IR): the micro-kernel on an MR x NR tile of C in registers
    y = rows[4]
    level(y, "loop 1  IR: for ir step MR", "black")
    text(ax, 0.0, y + 0.3, f"micro-kernel: MR x NR = {mr} x {nr} of C", 10, ha="left", color=REG)
    text(ax, 0.0, y - 0.2, f"in registers ({mr // 8 * nr} zmm)", 10, ha="left", color=REG)
    box(ax, 7.2, y - 0.1, 0.5, 0.9, fc=REG)
    brace(ax, 7.05, y - 0.1, 7.05, y + 0.8, "", "l")
    text(ax, 7.45, y - 0.45, f"MR = {mr}", 9)
    text(ax, 8.2, y + 0.35, "+=", 12)
    box(ax, 8.6, y + 0.15, 2.4, 0.4, fc=L2, alpha=0.7)
    text(ax, 9.8, y - 0.2, "MR x kc of A~", 9, color=L2)
    text(ax, 11.3, y + 0.35, "x", 11)
    box(ax, 11.6, y - 0.4, 0.5, 1.6, fc=L1)
    text(ax, 12.3, y + 0.35, "kc x NR\nof B~", 9, color=L1, ha="left")
    text(ax, 16.6, y + 0.7, "per p: MR values of A~ and NR of B~,\nan MR x NR outer product of FMAs",
         9, color="#444444")
    for y0, y1 in zip(rows, rows[1:]):
        arrow(ax, 3.0, y0 - 0.45, 3.0, y1 + 1.45, color="#999999", lw=1.0)
    legend(ax, [(L3, "L3"), (L2, "L2"), (L1, "L1"), (REG, "registers")], loc="lower right",
           bbox_to_anchor=(1.0, 0.06), ncol=4)
    text(ax, 15.6, -0.25, f"{STEP04_CACHES['name']}: L1d {kib(STEP04_CACHES['l1d'])}, L2 "
         f"{kib(STEP04_CACHES['l2'])}, avx512 kernel (blocking.cpp's rule)", 9, color="#555555")
    ax.set_title("step04: five loops around a micro-kernel; packed panels sized for L3, L2 and L1", fontsize=13)
    save(fig, out / "step04_simd" / "five_loops.png")


# ---- step04: the ways of the threads on a 64-core node ----------------------------------
def draw_step04_ways(out):
    import matplotlib.pyplot as plt
    p = step04_params(NODE_CACHES)
    w = step04_node_ways()
    mr, nr, n, threads = p["mr"], p["nr"], w["n"], w["threads"]
    cdiv = lambda a, b: -(-a // b)  # noqa: E731
    rows = mr * cdiv(cdiv(n, mr), w["ic"])           # an ic way's rows
    cols = nr * cdiv(cdiv(n, nr), w["jc"])           # a group's columns: its B panel (nc)
    # its A blocks: as few blocks of at most mc (rounded up to mr) as cover the rows, all alike (ways.cpp's balanced)
    blocks = cdiv(rows, cdiv(p["mc"], mr) * mr)
    mc = cdiv(cdiv(rows, blocks), mr) * mr
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 6.2), gridspec_kw={"width_ratios": [1.25, 1]})
    # left: C cut into jc groups of columns, each into ic ways of rows, each into jr strips
    left.set_xlim(-0.6, 10.6)
    left.set_ylim(-1.4, 10.9)
    left.set_aspect("equal")
    left.axis("off")
    group_colours = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf"]
    gw, wh = 10.0 / w["jc"], 10.0 / w["ic"]
    for g in range(w["jc"]):
        for i in range(w["ic"]):
            for j in range(w["jr"]):
                x, y = g * gw + j * gw / w["jr"], 10.0 - (i + 1) * wh
                box(left, x, y, gw / w["jr"], wh, fc=group_colours[g % len(group_colours)], ec="white", lw=0.8,
                    alpha=0.35 + 0.5 * ((i + j) % 2))
                if w["jc"] * w["ic"] * w["jr"] <= 128:
                    t = (g * w["ic"] + i) * w["jr"] + j
                    text(left, x + gw / w["jr"] / 2, y + wh / 2, str(t), 7, color="black")
        box(left, g * gw, 0, gw, 10.0, fc="none", ec="black", lw=2.0, z=4)
    brace(left, 0, 10.3, gw, 10.3, f"group 0: {cols} columns, its own kc x nc panel of B", "t", size=9)
    brace(left, -0.25, 10.0, -0.25, 10.0 - wh, f"{rows} rows\n(mc = {mc})" if mc != rows else f"mc = {rows}",
          "l", size=9)
    text(left, 5.0, -0.55, f"C, n = {n}: {threads} threads = jc {w['jc']} x ic {w['ic']} x jr {w['jr']}", 10.5)
    share = (f"the {w['jr']} threads of a row block share one packed A block" if w["jr"] > 1 else
             f"each packs its own A blocks; the {w['ic']} threads of a group share its B panel")
    text(left, 5.0, -1.1, f"each thread's number in its strip; {share}", 8.5, color="#444444")
    left.set_title("The ways step04 chooses on the 64-core node", fontsize=11)
    # right: what one thread streams from L3 per flop, against the rows it owns (the A block, mc)
    flop_rate = 50e9  # per core, about what the micro-kernel does on the node
    ic_only = max(mr, cdiv(n, threads) // mr * mr)
    mcs = [ic_only, mc]
    labels = [f"IC loop alone\nmc = {ic_only}", f"jc x ic x jr ways\nmc = {mc}"]
    traffic = [threads * flop_rate * 8 / (2 * m) / 1e9 for m in mcs]   # GB/s of B from L3, all threads
    bars = right.bar([0, 1], traffic, color=[GLOBAL, L3], width=0.55)
    for b, t in zip(bars, traffic):
        right.text(b.get_x() + b.get_width() / 2, t * 1.02, f"{t:.0f} GB/s", ha="center", fontsize=10)
    right.set_xticks([0, 1])
    right.set_xticklabels(labels, fontsize=10)
    right.set_ylabel("B read from L3 by all threads (GB/s)")
    right.set_title(f"Why a thin mc loses: each thread reads its B panel from L3\nonce per mc rows, "
                    f"8 bytes per 2 mc flops ({threads} cores at {flop_rate / 1e9:.0f} GFLOP/s each)",
                    fontsize=10)
    right.grid(axis="y", alpha=0.3)
    right.set_ylim(0, max(traffic) * 1.18)
    fig.suptitle(f"step04: the threads' ways on a {NODE_CACHES['name']} (L2 {kib(NODE_CACHES['l2'])} a core, "
                 f"L3 {kib(NODE_CACHES['l3'])}); ways from layout_for, as test_ways.cpp pins them", fontsize=10)
    save(fig, out / "step04_simd" / "ways.png")


# ---- step05: grid -> a block's tile -> shared memory -> one thread --------------------------------
def draw_step05(out):
    t = step05_params()["tile"]
    fig, ax = canvas(13, 6.4, (-0.3, 24.3), (-0.9, 11.0))
    y0 = 1.5
    # 1. C covered by a grid of t x t tiles, one thread block each
    g, cs, x0 = 6, 0.85, 0.4
    for i in range(g):
        for j in range(g):
            box(ax, x0 + j * cs, y0 + i * cs, cs, cs, fc="#f4f4f4", lw=0.6)
    box(ax, x0 + 4 * cs, y0, cs, cs, fc=GLOBAL, alpha=0.8)
    brace(ax, x0 + 4 * cs, y0 + g * cs + 0.15, x0 + 5 * cs, y0 + g * cs + 0.15, f"{t}", "t")
    text(ax, x0 + g * cs / 2, y0 - 0.3, f"C: a grid of {t} x {t} tiles,\none thread block each", 10, va="top")
    text(ax, x0 + g * cs / 2, 8.0, "1. grid", 12, weight="bold")
    # 2. the block's tile of C = A's row strip x B's column strip, one k slice at a time
    s_ = 1.3
    cx = 12.0
    box(ax, cx, y0, s_, s_, fc=GLOBAL, alpha=0.8)
    text(ax, cx + s_ / 2, y0 - 0.3, f"C tile\n{t} x {t}", 10, va="top")
    for q in range(3):
        on = q == 1
        box(ax, cx - 0.3 - (3 - q) * s_, y0, s_, s_, fc=SMEM if on else "#f4f4f4", alpha=0.7 if on else 1)
        box(ax, cx, y0 + s_ + 0.3 + q * s_, s_, s_, fc=SMEM if on else "#f4f4f4", alpha=0.7 if on else 1)
    ax_ = cx - 0.3 - 1.5 * s_
    text(ax, ax_, y0 + s_ / 2, f"As\n[{t}][{t}]", 9.5, color="white", weight="bold")
    text(ax, cx + s_ / 2, y0 + 0.3 + 2.5 * s_, f"Bs\n[{t}][{t}]", 9.5, color="white", weight="bold")
    text(ax, ax_, y0 - 0.3, f"A: the tile's {t} rows,\nk in slices of {t}", 10, va="top")
    text(ax, cx + s_ + 0.2, y0 + 0.3 + 2.5 * s_, f"B: the tile's {t}\ncolumns, k in\nslices of {t}", 10,
         ha="left")
    arrow(ax, ax_ - s_, y0 + s_ + 0.2, ax_ + s_, y0 + s_ + 0.2)
    arrow(ax, cx - 0.2, y0 + s_ + 0.3, cx - 0.2, y0 + 4 * s_ + 0.3, style="<|-")
    text(ax, ax_, y0 + s_ + 0.45, "k slice by slice", 9, va="bottom")
    text(ax, ax_ + 0.6, 8.0, "2. block: shared memory", 12, weight="bold")
    arrow(ax, x0 + 5 * cs + 0.1, y0 + cs / 2, ax_ - 1.5 * s_ - 0.15, y0 + s_ / 2, color="#888888")
    # 3. one thread, one element of C: row tx of As times column ty of Bs
    rx, rs = 18.6, 3.6
    cell = rs / 8
    box(ax, rx, y0, rs, rs, fc=GLOBAL, alpha=0.25)
    box(ax, rx + 5 * cell, y0 + 2 * cell, cell, cell, fc=REG)
    box(ax, rx - 2.1 * cell, y0 + 2 * cell, 1.8 * cell, cell, fc=SMEM, alpha=0.7)
    box(ax, rx + 5 * cell, y0 + rs + 0.4 * cell, cell, 1.8 * cell, fc=SMEM, alpha=0.7)
    arrow(ax, rx - 0.3 * cell, y0 + 2.5 * cell, rx + 5 * cell - 0.05, y0 + 2.5 * cell, color=SMEM)
    arrow(ax, rx + 5.5 * cell, y0 + rs + 0.4 * cell, rx + 5.5 * cell, y0 + 3 * cell + 0.05, color=SMEM)
    text(ax, rx - 1.2 * cell, y0 + 1.8 * cell, "row tx\nof As", 9, va="top")
    text(ax, rx + 6.3 * cell, y0 + rs + 1.3 * cell, "column ty\nof Bs", 9, ha="left")
    text(ax, rx + 5.5 * cell, y0 + 1.8 * cell, "thread (tx, ty):\nits sum in a register", 9, va="top")
    text(ax, rx + rs / 2, y0 - 0.3, f"the block: {t} x {t} threads,\none element of C each", 10, va="top")
    text(ax, rx + rs / 2, 8.0, "3. thread", 12, weight="bold")
    lines = [f"per k slice: each thread copies one value of A and one of B into shared memory; __syncthreads();",
             f"then {t} multiply-adds out of shared memory; __syncthreads()  ->  from global memory: "
             f"2 x {t}^2 loads per {t}^3 multiply-adds"]
    for i, l in enumerate(lines):
        text(ax, 12.0, 10.2 - 0.55 * i, l, 10, color="#333333")
    legend(ax, [(GLOBAL, "global memory"), (SMEM, "shared memory"), (REG, "register")], loc="lower right",
           bbox_to_anchor=(1.0, -0.03), ncol=3)
    ax.set_title(f"step05: each block stages {t} x {t} tiles of A and B in shared memory", fontsize=13)
    save(fig, out / "step05_cuda_shared" / "shared_tile.png")


# ---- step06: grid -> block tile -> warp tile -> thread's registers, and the DMMA piece ---------------
def draw_step06(out):
    p = step06_params()
    bm, bn, bk, wm, wn, tm, tn = p["bm"], p["bn"], p["bk"], p["wm"], p["wn"], p["tm"], p["tn"]
    wgm, wgn = bm // wm, bn // wn           # warps of a block (2 x 2)
    tgm, tgn = wm // tm, wn // tn           # threads of a warp (8 x 4)
    fig, ax = canvas(16, 7.6, (-0.3, 28.6), (-1.9, 11.4))
    y0, top = 1.6, 10.3
    # 1. C: a grid of bm x bn block tiles, one thread block each
    cw = 0.7
    ch = cw * bm / bn
    rows = int(5.6 // ch)
    for i in range(rows):
        for j in range(6):
            box(ax, 0.3 + j * cw, y0 + i * ch, cw, ch, fc="#f4f4f4", lw=0.6)
    box(ax, 0.3 + 3 * cw, y0 + (rows - 2) * ch, cw, ch, fc=GLOBAL, alpha=0.8)
    text(ax, 0.3 + 3 * cw, y0 - 0.3, f"C in global memory:\none thread block\nper {bm} x {bn} tile", 10, va="top")
    text(ax, 0.3 + 3 * cw, top, "1. grid", 12, weight="bold")
    # 2. the block tile: warps; As (bk x bm) and Bs (bk x bn) in shared memory, k-major
    bx, bw = 6.6, 3.2
    bh = bw * bm / bn
    box(ax, bx, y0, bw, bh, fc=GLOBAL, alpha=0.25)
    for i in range(wgm):
        for j in range(wgn):
            first = (i, j) == (wgm - 1, 0)
            box(ax, bx + j * bw / wgn, y0 + i * bh / wgm, bw / wgn, bh / wgm, fc="none", lw=2 if first else 1,
                ec=REG if first else "#555555", z=2)
            text(ax, bx + (j + 0.5) * bw / wgn, y0 + (i + 0.5) * bh / wgm, f"warp\n{wm} x {wn}", 9)
    box(ax, bx - 1.2, y0, 0.8, bh, fc=SMEM, alpha=0.6)
    box(ax, bx, y0 + bh + 0.35, bw, 0.8, fc=SMEM, alpha=0.6)
    text(ax, bx - 0.8, y0 + bh / 2, f"As: {bk} x {bm}", 9, rotation=90)
    text(ax, bx + bw / 2, y0 + bh + 0.75, f"Bs: {bk} x {bn}", 9)
    text(ax, bx + bw / 2 - 0.6, y0 - 0.3, f"block tile {bm} x {bn}: {wgm * wgn} warps;\n"
         f"A and B arrive in k slices of {bk}\nthrough shared memory", 10, va="top")
    text(ax, bx + bw / 2 - 0.6, top, "2. block", 12, weight="bold")
    arrow(ax, 0.3 + 4 * cw + 0.05, y0 + (rows - 1.5) * ch, bx - 1.3, y0 + bh * 0.6, color="#888888")
    # 3. the warp tile: 8 x 4 threads; the values of threads (0, 0) and (1, 1), in pairs
    wx, ww = 12.4, 3.2
    wh = ww * wm / wn
    ew, eh = ww / wn, wh / wm
    box(ax, wx, y0, ww, wh, fc="white", lw=2, ec=REG)
    for k in range(1, wm // 16):
        ax.plot([wx, wx + ww], [y0 + wh - 16 * k * eh] * 2, color="#dddddd", lw=0.6, zorder=2)
    for k in range(1, wn // 8):
        ax.plot([wx + 8 * k * ew] * 2, [y0, y0 + wh], color="#dddddd", lw=0.6, zorder=2)
    for tr, tc, col in ((0, 0, REG), (1, 1, L3)):
        for q in range(tm // 2):
            for r in range(tn // 2):
                for a in range(2):
                    for b in range(2):  # rows 2 tr + 16 q + {0, 1}, columns 2 tc + 8 r + {0, 1}
                        i, j = 2 * tr + 16 * q + a, 2 * tc + 8 * r + b
                        box(ax, wx + j * ew, y0 + wh - (i + 1) * eh, ew, eh, fc=col, lw=0, z=3)
    text(ax, wx + ww + 0.25, y0 + wh - 0.3, "thread (0, 0)", 9.5, ha="left", color=REG)
    text(ax, wx + ww + 0.25, y0 + wh - 0.8, "thread (1, 1)", 9.5, ha="left", color=L3)
    text(ax, wx + ww + 0.25, y0 + wh / 2 - 0.6, f"{tgm} x {tgn} = {tgm * tgn} threads,\neach {tm} x {tn} values\n"
         "as 2 x 2 pairs,\n16 rows and 8\ncolumns apart", 9.5, ha="left")
    text(ax, wx + ww / 2, y0 - 0.3, f"warp tile {wm} x {wn}", 10, va="top")
    text(ax, wx + ww / 2, top, "3. warp", 12, weight="bold")
    arrow(ax, bx + bw + 0.05, y0 + bh * 0.75, wx - 0.1, y0 + wh * 0.75, color=REG)
    # 4. the thread: per k step tm values of A and tn of B, tm x tn FMAs into registers
    tx, ts = 20.2, 2.6
    ty = y0 + 1.2
    box(ax, tx, ty, ts, ts, fc=REG, alpha=0.85)
    for k in range(1, tm):
        ax.plot([tx, tx + ts], [ty + k * ts / tm] * 2, color="white", lw=0.7, zorder=5)
    for k in range(1, tn):
        ax.plot([tx + k * ts / tn] * 2, [ty, ty + ts], color="white", lw=0.7, zorder=5)
    box(ax, tx - 0.55, ty, 0.3, ts, fc=SMEM, alpha=0.6)
    box(ax, tx, ty + ts + 0.25, ts, 0.3, fc=SMEM, alpha=0.6)
    text(ax, tx - 0.8, ty + ts / 2, f"{tm} of A", 9, rotation=90)
    text(ax, tx + ts / 2, ty + ts + 0.85, f"{tn} of B per k step", 9)
    text(ax, tx + ts / 2, y0 - 0.3, f"{tm} x {tn} = {tm * tn} accumulators\nin registers;\n"
         f"{tm + tn} loads : {tm * tn} FMAs", 10, va="top")
    text(ax, tx + ts / 2, top, "4. thread", 12, weight="bold")
    arrow(ax, wx + ww + 0.2, y0 + wh - 1.2, tx - 1.0, ty + ts, color="#888888")
    # 5. bonus, DMMA: a warp's tile as mma pieces (one mma.sync each)
    mm, mn, mk = p["mma_m"], p["mma_n"], p["mma_k"]
    dx, dw = 25.4, 1.6
    dh = dw * p["dwm"] / p["dwn"]
    pm, pn = p["dwm"] // mm, p["dwn"] // mn
    for i in range(pm):
        for j in range(pn):
            box(ax, dx + j * dw / pn, y0 + dh - (i + 1) * dh / pm, dw / pn, dh / pm,
                fc=REG if (i, j) == (0, 0) else "white", alpha=0.85, lw=0.8)
    text(ax, dx + dw / 2, y0 + dh + 0.3, f"{mm} x {mn} of C:\none mma.sync", 9, va="bottom", color=REG)
    text(ax, dx + dw / 2, y0 - 0.3, f"warp tile\n{p['dwm']} x {p['dwn']} =\n{pm} x {pn} pieces", 10, va="top")
    text(ax, dx + dw / 2, top, "5. bonus: DMMA", 12, weight="bold")
    ax.plot([24.3, 24.3], [y0 - 1.2, top + 0.4], color="#bbbbbb", lw=1, ls="--")
    text(ax, 0.3, -1.35, f"DMMA (dmma.cu): a block of {p['dbm']} x {p['dbn']}, warps of {p['dwm']} x {p['dwn']}; "
         f"each piece is ({mm} x {mk} of A) x ({mk} x {mn} of B) on the FP64 tensor cores, "
         f"its {mm} x {mn} results spread over the warp's 32 threads ({mm * mn // 32} each)", 9.5, ha="left",
         color="#333333")
    legend(ax, [(GLOBAL, "global memory"), (SMEM, "shared memory"), (REG, "registers")], loc="upper center",
           bbox_to_anchor=(0.5, 1.0), ncol=3)
    ax.set_title(f"step06: the tile hierarchy of the SIMT kernel (default tile {bm} x {bn} x {bk})", fontsize=13)
    save(fig, out / "step06_cuda_register_blocking" / "tile_hierarchy.png")


DRAW = {"step03": draw_step03, "step04": lambda out: (draw_step04(out), draw_step04_ways(out)), "step05": draw_step05, "step06": draw_step06}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("steps", nargs="*", metavar="STEP", help="step03, step04, step05, step06 (default: all)")
    ap.add_argument("--out", type=pathlib.Path, default=ROOT, help="root to write stepNN_*/NAME.png under")
    args = ap.parse_args()
    bad = [s for s in args.steps if s not in DRAW]
    if bad:
        ap.error(f"no picture for {', '.join(bad)} (choose from {', '.join(sorted(DRAW))})")
    try:
        import matplotlib
        matplotlib.use("Agg")
    except ImportError:
        sys.exit("diagrams: matplotlib is not installed (apt-get install python3-matplotlib)")
    for step in args.steps or sorted(DRAW):
        for d in ROOT.glob(step + "_*"):
            (args.out / d.name).mkdir(parents=True, exist_ok=True)
        DRAW[step](args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
