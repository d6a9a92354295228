#!/usr/bin/env python3
"""Kernels side by side from Nsight Compute's raw pages.

    ncu --import K.ncu-rep --page raw --csv > K.raw.csv     (one per kernel)
    common/tools/ncu_compare.py A.raw.csv B.raw.csv ...

Prints, for each report (a column), the launch shape, time, cycles and clock,
the pipes' and shared memory's use, the instruction counts and the warp-state
stalls per issued instruction: the rows that say where one kernel spends the
cycles another does not. A metric a report lacks shows as '-'. gpu-check's
profile stage runs it (profile_<n>.txt).
"""
import argparse
import csv
import os
import re
import sys

# (label, metric): the fixed rows, in order; missing ones are skipped.
ROWS = [
    ("block size", "launch__block_size"),
    ("grid size", "launch__grid_size"),
    ("registers / thread", "launch__registers_per_thread"),
    ("dynamic shared memory / block", "launch__shared_mem_per_block_dynamic"),
    ("static shared memory / block", "launch__shared_mem_per_block_static"),
    ("blocks / SM (registers)", "launch__occupancy_limit_registers"),
    ("blocks / SM (shared memory)", "launch__occupancy_limit_shared_mem"),
    ("warps active / SM (% of peak)", "sm__warps_active.avg.pct_of_peak_sustained_active"),
    ("duration (ns)", "gpu__time_duration.sum"),
    ("SM cycles elapsed", "sm__cycles_elapsed.max"),
    ("SM clock (cycles / s)", "sm__cycles_elapsed.avg.per_second"),
    ("instructions issued", "smsp__inst_executed.sum"),
    ("issue slots busy (%)", "smsp__issue_active.avg.pct_of_peak_sustained_active"),
    ("shared loads (instructions)", "smsp__inst_executed_op_shared_ld.sum"),
    ("shared load wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"),
    ("shared load bank conflicts", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"),
    ("shared store bank conflicts", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"),
    ("L1/shared throughput (%)", "l1tex__throughput.avg.pct_of_peak_sustained_active"),
    ("L2 hit rate (%)", "lts__t_sector_hit_rate.pct"),
    ("DRAM bytes read", "dram__bytes_read.sum"),
    ("DRAM throughput (%)", "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"),
    ("SM throughput (%)", "sm__throughput.avg.pct_of_peak_sustained_elapsed"),
]
# Any further metric whose name matches: the tensor and FP64 pipes, the stalls.
EXTRA = re.compile(r"(dmma|tensor_op|pipe_fp64|pipe_tensor|average_warps_issue_stalled_.*_per_issue_active)")


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def read(path):
    """The first kernel of an ncu raw CSV page: {metric: value text}."""
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(line for line in f if line.startswith('"'))]
    if len(rows) < 3:
        raise ValueError(f"{path}: no kernel in this raw page")
    return dict(zip(rows[0], rows[2])), rows[0]


def show(value):
    x = number(value)
    if x is None:
        return value[:14] if value else "-"
    if abs(x) >= 1e6:
        return f"{x:.4g}"
    return f"{x:.3f}".rstrip("0").rstrip(".") if x != int(x) else f"{int(x)}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("raw", nargs="+", help="ncu --page raw --csv outputs, one kernel each")
    args = ap.parse_args()
    reports, names = [], []
    for path in args.raw:
        try:
            reports.append(read(path))
        except (OSError, ValueError) as e:
            print(f"ncu_compare: {e}", file=sys.stderr)
            return 2
        names.append(re.sub(r"^ncu_|\.raw\.csv$", "", os.path.basename(path)))
    kernels = [r[0].get("Kernel Name", "?") for r in reports]
    for name, kernel in zip(names, kernels):
        print(f"{name}: {kernel[:160]}")
    width = max(12, *(len(n) for n in names))
    label_w = 44
    print(f"{'':{label_w}}" + "".join(f"{n:>{width + 1}}" for n in names))
    seen = set()
    for label, metric in ROWS:
        if not any(metric in r[0] for r in reports):
            continue
        seen.add(metric)
        print(f"{label:{label_w}}" + "".join(f"{show(r[0].get(metric, '')):>{width + 1}}" for r in reports))
    extra = sorted({m for r in reports for m in r[1] if EXTRA.search(m) and m not in seen})
    for metric in extra:
        values = [r[0].get(metric, "") for r in reports]
        if all(number(v) in (None, 0.0) for v in values):
            continue
        label = metric.replace("smsp__average_warps_issue_stalled_", "stall ").replace("_per_issue_active.ratio", "")
        print(f"{label[:label_w - 1]:{label_w}}" + "".join(f"{show(v):>{width + 1}}" for v in values))
    return 0


if __name__ == "__main__":
    sys.exit(main())
