#!/usr/bin/env python3
"""Write the expected-results tables of the handouts from benchmark CSVs.

    results_tables.py                 rewrite every marked table from common/docs/results/
    results_tables.py --check         exit 1 where a committed table differs from what
                                      the CSVs give (a hand edit, or a CSV changed alone)
    results_tables.py --record CSV NAME [--machine TEXT] [--command TEXT]
                                      keep CSV as common/docs/results/NAME.csv (machine,
                                      today's date and the command in runs.json), then
                                      rewrite the tables

Each table sits between markers, and is replaced in place on every run:

    <!-- results:begin source=PATH[,PATH] machine="..." date=YYYY-MM-DD[,...] command="..." -->
    | a Markdown table |
    <!-- results:end -->

The marker is written by this script from common/docs/results/runs.json, which
says for every CSV there the machine, the date and the command of its run, and
whether it was measured by that command or transcribed from an earlier table
(the CSV's note column says so too). The CSVs start with the lab's columns
step,variant,impl,m,n,k,threads,median_s,gflops (more follow); the layout of
each handout's table is one small function below (TABLES).

A typical instructor's round: `./lab bench --record epyc-2core` on the lab CPU,
`common/tools/gpu-check` on a GPU host and `--record` of its CSVs, then commit
common/docs/results/ with the handouts.
"""
import argparse
import csv
import datetime
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
RESULTS = ROOT / "common" / "docs" / "results"
RUNS = RESULTS / "runs.json"
BEGIN = re.compile(r"^<!-- results:begin .*-->\s*$")
END = re.compile(r"^<!-- results:end -->\s*$")


class Data:
    """The CSVs of common/docs/results and what runs.json says of each."""

    def __init__(self, root=RESULTS):
        self.root = pathlib.Path(root)
        self.runs = json.loads((self.root / "runs.json").read_text())
        self._rows = {}

    def rows(self, name):
        if name not in self._rows:
            if name not in self.runs:
                raise SystemExit(f"results_tables: {name}.csv is not in runs.json")
            with open(self.root / f"{name}.csv", newline="") as f:
                rows = list(csv.DictReader(f))
            for r in rows:
                for c in ("m", "n", "k", "threads"):
                    r[c] = int(r[c])
                for c in ("gflops", "median_s", "peak_gflops"):
                    r[c] = float(r.get(c) or 0)
            self._rows[name] = rows
        return self._rows[name]

    def machine(self, name):
        return self.runs[name]["machine"]


def pick(rows, **want):
    """The first passing row whose columns equal `want` (None: no such row)."""
    for r in rows:
        if r.get("check", "pass") == "pass" and all(r.get(k) == v for k, v in want.items()):
            return r
    return None


def rate(v, scale=1.0):
    """A rate as the tables print it: three significant figures or so."""
    if v is None:
        return "-"
    v /= scale
    return f"{v:.0f}" if v >= 100 else f"{v:.1f}" if v >= 10 else f"{v:.2f}"


def gf(r, scale=1.0):
    return rate(r["gflops"], scale) if r else "-"


def ratio(a, b, pct=True, digits=1):
    if not a or not b or not b["gflops"]:
        return "-"
    x = a["gflops"] / b["gflops"]
    return f"{100 * x:.0f} %" if pct else f"{x:.{digits}f}x"


def peak(r):
    return rate(r["peak_gflops"]) if r and r["peak_gflops"] else "-"


# ---- one function per table: (CSV names, header, rows) ----------------------------------

CPU_LADDERS = ("epyc-2core-ladder", "xeon-2core-ladder", "xeon-16core-ladder")


def readme_ladder(d):
    src = "epyc-2core-ladder"
    rows = d.rows(src)
    base = pick(rows, step="step01", variant="naive_ijk")
    vendor = pick(rows, variant="openblas")
    out = []
    for r in rows:
        if r.get("check") != "pass":
            continue
        name = r["variant"] if r["variant"] == "openblas" else f'{r["step"]} `{r["variant"]}`'
        out.append([name, gf(r), ratio(r, base, pct=False), ratio(r, vendor), ratio(r, {"gflops": r["peak_gflops"]})])
    return [src], ["step / variant (n = 1024, 1 thread)", "GFLOP/s", "vs step01 ijk", "% of OpenBLAS",
                   "% of FMA peak"], out


def step01(d):
    out, srcs = [], []
    for src in CPU_LADDERS:
        rows = d.rows(src)
        ijk, jki = pick(rows, variant="naive_ijk", n=1024), pick(rows, variant="naive_jki", n=1024)
        if not jki:
            continue
        srcs.append(src)
        blas = pick(rows, variant="openblas", n=1024)
        out.append([d.machine(src), gf(ijk), gf(jki), gf(blas), peak(jki)])
    return srcs, ["machine (n = 1024, 1 thread), GFLOP/s", "ijk (`naive_ijk`)", "jki (`naive_jki`)", "OpenBLAS",
                  "FMA peak, 1 core"], out


def step02(d):
    out, srcs = [], []
    for src in CPU_LADDERS:
        rows = d.rows(src)
        for n in (1024, 256):
            t = pick(rows, variant="transpose", n=n)
            if not t:
                continue
            if src not in srcs:
                srcs.append(src)
            out.append([d.machine(src), str(n), gf(pick(rows, variant="naive_jki", n=n)),
                        gf(pick(rows, variant="naive_ijk", n=n)), gf(t), gf(pick(rows, variant="openblas", n=n))])
    return srcs, ["machine (1 thread), GFLOP/s", "n", "step01 `naive_jki`", "step01 `naive_ijk`", "step02 `transpose`",
                  "OpenBLAS"], out


def step03(d):
    out, srcs = [], []
    for src in CPU_LADDERS:
        rows = d.rows(src)
        t = pick(rows, variant="tiled", n=1024)
        if not t:
            continue
        srcs.append(src)
        blas = pick(rows, variant="openblas", n=1024)
        out.append([d.machine(src), gf(pick(rows, variant="transpose", n=1024)), gf(t), gf(blas), ratio(t, blas)])
    return srcs, ["machine (n = 1024, 1 thread), GFLOP/s", "step02", "step03 (default tiles)", "OpenBLAS",
                  "step03 / OpenBLAS"], out


def step04(d):
    out, srcs = [], []
    for src in ("epyc-2core-ladder", "epyc-2core-openblas-check", "xeon-16core-openblas-check"):
        rows = d.rows(src)
        for r in rows:
            if r["variant"] != "simd" or r.get("check") != "pass":
                continue
            if src not in srcs:
                srcs.append(src)
            at = dict(n=r["n"], threads=r["threads"])
            blas = pick(rows, variant="openblas", **at)
            out.append([d.machine(src), f'{r["n"]}, {r["threads"]}', gf(r),
                        gf(pick(rows, variant="openblas_probe", **at)), gf(blas), ratio(r, blas), peak(r)])
    return srcs, ["machine", "n, threads", "step04 GFLOP/s", "OpenBLAS alone (probe)", "OpenBLAS in the harness",
                  "step04 / OpenBLAS", "FMA peak"], out


def step05(d):
    src = "h100-gpu-check"
    rows = [r for r in d.rows(src) if r["step"] == "step05"]
    out = []
    for n in sorted({r["n"] for r in rows}):
        v = {r["variant"]: r for r in rows if r["n"] == n}
        T = 1e3
        out.append([str(n), gf(v.get("naive"), T), gf(v.get("naive_coalesced"), T), gf(v.get("tiled"), T),
                    ratio(v.get("tiled"), v.get("naive"), pct=False), gf(v.get("ata"), T),
                    ratio(v.get("ata"), v.get("tiled"), pct=False), gf(v.get("cublas_dsyrk"), T),
                    gf(v.get("cublas"), T)])
    return [src], ["n (TFLOP/s)", "naive", "naive_coalesced", "tiled", "tiled / naive", "A^T A",
                   "A^T A over the full product", "cublasDsyrk", "cuBLAS dgemm"], out


def step06(d):
    src = "h100-step06"
    rows = [r for r in d.rows(src) if r["step"] == "step06"]
    out = []
    for n in sorted({r["n"] for r in rows}):
        v = {r["variant"]: r for r in rows if r["n"] == n}
        simt, cublas = v.get("simt"), v.get("cublas")
        ata = v.get("ata_dmma")
        out.append([str(n), gf(simt, 1e3), ratio(simt, {"gflops": simt["peak_gflops"]}) if simt else "-",
                    gf(v.get("dmma"), 1e3), ratio(v.get("dmma"), cublas), gf(v.get("dmma_k8"), 1e3),
                    ratio(v.get("dmma_k8"), cublas), gf(cublas, 1e3), gf(ata, 1e3),
                    ratio(ata, v.get("cublas_dsyrk"), pct=False, digits=2)])
    return [src], ["n", "simt TFLOP/s", "simt % of FP64 peak", "dmma TFLOP/s", "dmma % of cuBLAS",
                   "dmma_k8 TFLOP/s", "dmma_k8 % of cuBLAS", "cuBLAS TFLOP/s", "ata_dmma (A^T A)",
                   "ata_dmma / cublasDsyrk"], out


def step07(d):
    src = "h100-step07"
    rows = d.rows(src)
    mem = lambda r: re.search(r"host memory (\w+)", r["note"]).group(1)  # noqa: E731
    out = []
    for n in sorted({r["n"] for r in rows}):
        for m in ("pinned", "pageable"):
            v = {r["variant"]: r for r in rows if r["n"] == n and mem(r) == m}
            if not v:
                continue
            out.append([str(n), m] + [gf(v.get(k), 1e3) if k in v else ("" if k == "cublas" else "-")
                                      for k in ("sync", "streams", "multigpu", "cublasxt", "cublas")])
    return [src], ["n (TFLOP/s)", "host memory", "sync", "streams", "multigpu `0,0`", "cuBLASXt, best block",
                   "device-resident cuBLAS"], out


def step08(d):
    out, srcs = [], ["xeon-2core-step08-scaling", "xeon-16core-step08-scaling"]
    for src in srcs:
        rows = d.rows(src)
        for r in rows:
            if r["variant"] != "cube":
                continue
            pd = pick(rows, variant="pdgemm", n=r["n"], p=r["p"])
            p = r["p"] + (" (oversubscribed)" if "oversubscribed" in r["note"] else "")
            out.append([d.machine(src), str(r["n"]), p, r["layout"], f'{r["median_s"]:.3g}',
                        f'{100 * float(r["overhead"]):.1f} %', f'{pd["median_s"]:.3g}' if pd else "-"])
    return srcs, ["machine", "n", "p", "grid", "step08 + step04: wall s", "overhead", "pdgemm (nb 256): wall s"], out


def step09(d):
    out, srcs = [], []
    # (the 2-core rows at the handout's own timing command, n = 2048, not the ladder's 1024)
    for src in ("epyc-2core-step09", "xeon-16core-step09"):
        rows = d.rows(src)
        for r in rows:
            if r["step"] != "step09" or r["variant"] not in ("minplus", "maxplus") or r.get("check") != "pass":
                continue
            if src not in srcs:
                srcs.append(src)
            dg = pick(rows, variant="step04_dgemm", n=r["n"], threads=r["threads"]) or \
                pick(rows, step="step04", variant="simd", n=r["n"], threads=r["threads"])
            against = f'{ratio(r, dg)} of step04 DGEMM ({gf(dg)})' if dg else "-"
            out.append([d.machine(src), str(r["n"]), str(r["threads"]), f'`{r["variant"]}`', f"{gf(r)} GFLOP/s",
                        against])
    src = "h100-step09"
    srcs.append(src)
    for r in d.rows(src):
        bound = "add + select" if r["variant"] == "minplus_gpu" else "`__viaddmin_s32`"
        out.append([d.machine(src), str(r["n"]), "GPU", f'`{r["variant"]}`', f'{r["gflops"]:.0f} G ops/s',
                    f'{ratio(r, {"gflops": r["peak_gflops"]})} of the {bound} bound'])
    return srcs, ["machine", "n", "threads", "variant", "rate", "against"], out


TABLES = {
    "README.md": readme_ladder,
    "step01_naive/README.md": step01,
    "step02_transpose/README.md": step02,
    "step03_tiling/README.md": step03,
    "step04_simd/README.md": step04,
    "step05_cuda_shared/README.md": step05,
    "step06_cuda_register_blocking/README.md": step06,
    "step07_streams_multigpu/README.md": step07,
    "step08_mpi_3d/README.md": step08,
    "step09_semiring/README.md": step09,
}


def unique(xs):
    return list(dict.fromkeys(xs))


def block(d, fn):
    """The marker, the table and the end marker of one handout, as lines."""
    srcs, header, rows = fn(d)
    if not rows:
        raise SystemExit(f"results_tables: {fn.__name__}: no rows in {', '.join(srcs)}")
    runs = [d.runs[s] for s in srcs]
    rel = [str((d.root / f"{s}.csv").relative_to(ROOT)) for s in srcs]
    marker = (f'<!-- results:begin source={",".join(rel)} machine="{"; ".join(unique(r["machine"] for r in runs))}" '
              f'date={",".join(sorted(unique(r["date"] for r in runs)))} '
              f'command="{"; ".join(unique(r["command"] for r in runs))}" -->')
    esc = lambda c: str(c).replace("|", "\\|")  # noqa: E731
    lines = [marker, "| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]
    return lines + ["<!-- results:end -->"]


def splice(text, new):
    """`text` with its one marked block replaced by the lines `new`."""
    lines = text.split("\n")
    begins = [i for i, l in enumerate(lines) if BEGIN.match(l)]
    if len(begins) != 1:
        raise ValueError(f"{len(begins)} results:begin markers, want exactly one")
    end = next((i for i in range(begins[0] + 1, len(lines)) if END.match(lines[i])), None)
    if end is None:
        raise ValueError("results:begin without results:end")
    return "\n".join(lines[:begins[0]] + new + lines[end + 1:])


def machine_name():
    model = "unknown CPU"
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        model = next(l.split(":", 1)[1].strip() for l in out.splitlines() if l.startswith("Model name"))
    except (OSError, subprocess.CalledProcessError, StopIteration):
        pass
    return f"{os.cpu_count()}-core VM, lscpu \"{model}\"".replace('"', "'")


def record(src, name, machine, command):
    if not re.fullmatch(r"[a-z0-9][a-z0-9.-]*", name):
        raise SystemExit(f"results_tables: --record NAME: lower-case letters, digits, '.' and '-' only, got {name!r}")
    with open(src, newline="") as f:
        head = next(csv.reader(f), [])
    if head[:9] != "step,variant,impl,m,n,k,threads,median_s,gflops".split(",") and head[:1] != ["probe"]:
        raise SystemExit(f"results_tables: {src} is not a benchmark CSV (its first columns are {head[:9]})")
    runs = json.loads(RUNS.read_text()) if RUNS.exists() else {}
    tmp = RESULTS / f".{name}.csv.tmp"
    shutil.copyfile(src, tmp)
    os.replace(tmp, RESULTS / f"{name}.csv")
    runs[name] = {"machine": machine or machine_name(), "date": datetime.date.today().isoformat(),
                  "command": command.replace('"', "'"), "origin": "measured"}
    tmp = RUNS.with_suffix(".tmp")
    tmp.write_text(json.dumps(runs, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, RUNS)
    print(f"results_tables: kept {src} as {(RESULTS / f'{name}.csv').relative_to(ROOT)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="compare, write nothing")
    ap.add_argument("--record", nargs=2, metavar=("CSV", "NAME"), action="append", default=[])
    ap.add_argument("--machine", help="with --record: the machine (default: core count and lscpu model name)")
    ap.add_argument("--command", default="./lab bench", help="with --record: the command that wrote the CSV")
    args = ap.parse_args()
    for src, name in args.record:
        record(src, name, args.machine, args.command)
    d = Data()
    stale = []
    for rel, fn in TABLES.items():
        path = ROOT / rel
        old = path.read_text()
        try:
            new = splice(old, block(d, fn))
        except ValueError as e:
            raise SystemExit(f"results_tables: {rel}: {e}")
        if new == old:
            continue
        if args.check:
            stale.append(rel)
            continue
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(new)
        os.replace(tmp, path)
        print(f"results_tables: rewrote the table of {rel}")
    if stale:
        print("results_tables: these tables differ from what common/docs/results gives (edit the CSVs, not the "
              "tables, then run common/tools/results_tables.py):\n  " + "\n  ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
