#!/usr/bin/env python3
"""multi-gpu-check's summary: every table of a multi-GPU run, beside its goals.

    multi_gpu_summary.py DIR

DIR holds the CSVs the benchmark stages of common/tools/multi-gpu-check write
(the plots stage is not needed, nor matplotlib):
  step07_g<G>.csv          step07 on G GPUs (streams on 1 GPU, multigpu on each count)
  step07_big_g4.csv        step07 at the large n on 4 GPUs
  step07_probe_multi.csv   step07_probe: copy rates and the bounds (plain and with
                           panel sharing, on all GPUs and on paper for --model-gpus)
  step08_multi.csv         step08: blocks born on the GPUs (note "data=ranks") and the
                           rank-0 entry (note "data=root"), one row per rank count
  step09_multi.csv         step09 min-plus, both shapes, one row per rank count
Tables, at every GPU count found: step07 (speed-up against 1 GPU, the goals
1.9x on 2 and 3.2x on 4, the probe's bounds and their ratio, the speed-up
where both calls come as close to their bounds: a goal above it is said), step07's large n (goal 3.5x
the 1-GPU rate at the smaller n), the probe's rates and bounds and the paper
table of a larger host, step08 blocks born on the GPUs (1.8x on 2, 3.2x on 4),
step08's rank-0 entry (its rate against step07's on as many GPUs, goal at
least 0.7x, and never slower with more GPUs), step09 min-plus in both shapes
(3.2x on 4). A goal is "met" or "MISSED"; a file that is missing is said, not
skipped in silence. A run measured twice keeps its last row. Exit status 0
(missed goals are reported, not failures), 2 for bad usage.
"""
import argparse
import csv
import pathlib
import re
import sys

STEP07_GOALS = {2: 1.9, 4: 3.2}
STEP07_BIG_OF_BOUND = 0.92  # the large n on 4 GPUs against the probe's bound with sharing
STEP08_GOALS = {2: 1.8, 4: 3.2}
ROOT_ENTRY_GOAL = 0.7    # the rank-0 entry's rate against step07's on as many GPUs
STEP09_GOALS = {4: 3.2}
STEP09_SHAPES = [((8192, 8192, 2048), "the lecture's shape"), ((16384, 16384, 16384), "n = 16384")]


def read_rows(path):
    """The rows of a benchmark CSV as dicts, or (None, why) when it cannot be used."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except FileNotFoundError:
        return None, "missing"
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        return None, f"unreadable ({e.__class__.__name__})"
    need = {"step", "variant", "m", "n", "k", "median_s", "gflops", "check", "note"}
    if rows and not need <= set(rows[0]):
        return None, f"lacks the column(s) {','.join(sorted(need - set(rows[0])))}"
    return rows, None


def number(text):
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return v if v == v and abs(v) != float("inf") else None


def note_fields(note):
    """'p=4 layout=2x2x1 data=root overhead=0.03' -> {'p': '4', 'layout': ..., ...}."""
    return dict(part.split("=", 1) for part in (note or "").split() if "=" in part)


class Run:
    """One timed row: seconds, TFLOP/s, check, and the note's fields."""

    def __init__(self, row):
        self.s = number(row["median_s"])
        gf = number(row["gflops"])
        self.tf = gf / 1e3 if gf is not None else None
        if not self.s or self.s <= 0 or self.tf is None:
            self.s = self.tf = None  # not timed: a failed, refused or unfinished row
        self.check = row["check"] or "-"
        self.row = row
        self.note = note_fields(row.get("note"))


def fmt(v, spec, none="-"):
    return none if v is None else format(v, spec)


def verdict(value, goal):
    """'met' or 'MISSED' for a figure that must reach `goal`; '' where there is no goal or no figure."""
    if goal is None or value is None:
        return ""
    return "met" if value >= goal else "MISSED"


def gpus(g):
    return f"{g} GPU" + ("s" if g != 1 else "")


class Summary:
    def __init__(self, out):
        self.out = pathlib.Path(out)
        self.verdicts = []  # (what, met: bool)

    def note_verdict(self, what, v):
        if v:
            self.verdicts.append((what, v == "met"))

    def load(self, name, made_by):
        rows, why = read_rows(self.out / name)
        if rows is None:
            print(f"{name}: {why} ({made_by} writes it): its tables are left out")
        elif not rows:
            print(f"{name}: no rows ({made_by} writes them): its tables are left out")
        return rows or []

    # ---- the probe ---------------------------------------------------------
    def probe(self):
        """{what: value} from step07_probe's CSV (what may hold commas, quoted or not)."""
        path = self.out / "step07_probe_multi.csv"
        try:
            with open(path, newline="", encoding="utf-8") as f:
                lines = list(csv.reader(f))
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError, csv.Error) as e:
            print(f"  (step07_probe_multi.csv: unreadable ({e.__class__.__name__}))")
            return None
        rates = {}
        for fields in lines[1:]:
            if len(fields) >= 4 and number(fields[-2]) is not None:
                rates[",".join(fields[:-3])] = (number(fields[-2]), fields[-1])
        return rates

    # ---- step07 --------------------------------------------------------------
    def step07(self, probe):
        print("\nstep07: pinned host matrices (host-resident A, B, C through each GPU's link)")
        runs, streams = {}, None
        paths = sorted(self.out.glob("step07_g*.csv"))
        if not paths:
            print("  (no step07_g<G>.csv; the step07 stage writes them)")
        for path in paths:
            m = re.search(r"_g(\d+)\.csv$", path.name)
            rows, why = read_rows(path)
            if not m or rows is None:
                print(f"  ({path.name}: {why or 'not a step07_g<G>.csv name'})")
                continue
            g = int(m.group(1))
            for r in rows:
                if r["variant"] == "multigpu":
                    runs[g] = Run(r)
                elif r["variant"] == "streams":
                    streams = Run(r)
        n = next((int(r.row["n"]) for r in list(runs.values()) + [streams] if r), None)
        bound = {}
        if probe and n:
            for what, (v, _) in probe.items():
                m = re.fullmatch(r"bound pinned(, sharing)? n=(\d+)(?: on (\d+) GPUs)?", what)
                if m and int(m.group(2)) == n:
                    bound[(int(m.group(3) or 1), bool(m.group(1)))] = v
        if runs or streams:
            print(f"  n = {n}; speed-up against multigpu on 1 GPU; bounds: the probe's higher bound on G GPUs over "
                  f"its bound on 1 (the speed-up where both calls come as close to their bounds); bound: "
                  f"step07_probe's on 1 GPU and on all (TFLOP/s), without and with panel sharing")
            print(f"  {'GPUs':>4} {'variant':<9} {'s':>8} {'TFLOP/s':>8} {'speed-up':>9} {'bounds':>7} {'goal':>6} "
                  f"{'verdict':<7} {'bound':>7} {'sharing':>7} {'of bound':>8}  check")
            one = runs.get(1)
            lines = ([(1, "streams", streams)] if streams else []) + [(g, "multigpu", runs[g]) for g in sorted(runs)]
            above = []  # goals above what the bounds allow
            for g, variant, r in lines:
                up = r.tf / one.tf if variant == "multigpu" and one and one.tf and r.tf else None
                goal = STEP07_GOALS.get(g) if variant == "multigpu" else None
                v = verdict(up, goal)
                self.note_verdict(f"step07 multigpu on {gpus(g)}: {fmt(up, '.3f')}x (goal {goal}x)", v)
                b, bs = bound.get((g, False)), bound.get((g, True))
                b1 = bound.get((1, False))
                best = max((x for x in (b, bs) if x), default=None)
                allowed = best / b1 if best and b1 and variant == "multigpu" else None
                if allowed and goal and goal > allowed:
                    above.append(f"  the goal on {gpus(g)} ({goal}x) is above the ratio of the probe's bounds "
                                 f"({allowed:.3f}x: {best:.1f} against {b1:.1f} TFLOP/s on 1 GPU): met only where "
                                 f"that call comes closer to its bound than the call on 1 GPU")
                of = f"{100 * r.tf / b:.0f} %" if b and r.tf else "-"
                print(f"  {g:>4} {variant:<9} {fmt(r.s, '8.3f'):>8} {fmt(r.tf, '8.2f'):>8} "
                      f"{fmt(up, '.2f') + 'x' if up else '-':>9} {fmt(allowed, '.2f') + 'x' if allowed else '-':>7} "
                      f"{fmt(goal, '.2f') + 'x' if goal else '-':>6} "
                      f"{v:<7} {fmt(b, '7.1f'):>7} {fmt(bs, '7.1f'):>7} {of:>8}  {r.check}")
            for a in above:
                print(a)
        big = []  # the large n runs on hosts of 4 GPUs or more
        if (self.out / "step07_big_g4.csv").exists() or max(runs, default=0) >= 4:
            big = self.load("step07_big_g4.csv", "the step07 stage")
        for r in big:
            rb = Run(r)
            one = runs.get(1)
            ratio = rb.tf / one.tf if one and one.tf and rb.tf else None
            b, bs = None, None
            if probe:
                b = probe.get(f"bound pinned n={r['n']} on 4 GPUs", (None,))[0]
                bs = probe.get(f"bound pinned, sharing n={r['n']} on 4 GPUs", (None,))[0]
            of = rb.tf / bs if bs and rb.tf else None
            v = verdict(of, STEP07_BIG_OF_BOUND)
            self.note_verdict(f"step07 n = {r['n']} on 4 GPUs: {fmt(of, '.3f')} of the bound with sharing "
                              f"(goal {STEP07_BIG_OF_BOUND})", v)
            print(f"  n = {r['n']} on 4 GPUs: {fmt(rb.s, '.3f')} s, {fmt(rb.tf, '.2f')} TFLOP/s, "
                  f"{fmt(ratio, '.2f')}x the 1-GPU rate at n = {n}; bound {fmt(b, '.1f')}, with sharing "
                  f"{fmt(bs, '.1f')} TFLOP/s: {fmt(of, '.3f')} of it (goal {STEP07_BIG_OF_BOUND}): {v or '-'}; "
                  f"{rb.check}")
            # the probe's second bound: the products at the rate of the plan's own (not square) products
            bp = probe.get(f"bound pinned, sharing n={r['n']} on 4 GPUs at the panel rate", (None,))[0] if probe else None
            if bp and rb.tf:
                print(f"  n = {r['n']} on 4 GPUs against the bound with sharing and the products at the rate of the "
                      f"plan's panel products: {bp:.1f} TFLOP/s, {rb.tf / bp:.3f} of it")
            # and a third: the panel products at the rate the GPUs keep for seconds (probe --sustain)
            bz = probe.get(f"bound pinned, sharing n={r['n']} on 4 GPUs at the sustained rate",
                           (None,))[0] if probe else None
            if bz and rb.tf:
                print(f"  n = {r['n']} on 4 GPUs against the bound with sharing and the panel products at their "
                      f"sustained rate: {bz:.1f} TFLOP/s, {rb.tf / bz:.3f} of it")
        return runs

    def probe_tables(self, probe):
        print("\nstep07_probe: what bounds step07 (step07_probe_multi.csv)")
        if probe is None:
            print("  (step07_probe_multi.csv: missing; the probe stage writes it)")
            return
        for what, (v, unit) in probe.items():
            if re.match(r"(pinned (H2D|D2H|both ways), all GPUs at once|peer copy"
                        r"|device-resident cublasDgemm n=\d+(, all GPUs at once \(slowest\))?$"
                        r"|device-resident cublasDgemm \d+x\d+x\d+ \(the plan's panel products"
                        r"|device-resident cublasDgemm \d+x\d+x\d+ \(beta = 1\), \d+ GPU\(s\) at once"
                        r"|sustained panel products, all GPUs at once)", what):
                print(f"  {what}: {v:.1f} {unit}")
        for paper in (False, True):
            table = {}  # n -> {(G, sharing): TFLOP/s}
            for what, (v, _) in probe.items():
                m = re.fullmatch(r"bound pinned(, sharing)? n=(\d+)(?: on (\d+) GPUs)?( \(on paper\))?", what)
                if m and bool(m.group(4)) == paper:
                    table.setdefault(int(m.group(2)), {})[(int(m.group(3) or 1), bool(m.group(1)))] = v
            if not table:
                if paper:
                    print("  (no paper table: the probe ran without --model-gpus)")
                continue
            counts = sorted({g for cols in table.values() for g, _ in cols})
            head = "  on paper, a host of such GPUs (each GPU's rates as measured here):" if paper else \
                "  bounds measured here (TFLOP/s):"
            print(head)
            print(f"  {'n':>6} {'GPUs':>4} {'plain':>8} {'sharing':>8} {'gain':>6}")
            for n in sorted(table):
                for g in counts:
                    p, s = table[n].get((g, False)), table[n].get((g, True))
                    if p is None and s is None:
                        continue
                    gain = f"{s / p:.2f}x" if p and s else "-"
                    print(f"  {n:>6} {g:>4} {fmt(p, '8.1f'):>8} {fmt(s, '8.1f'):>8} {gain:>6}")

    # ---- step08 and step09 ---------------------------------------------------
    @staticmethod
    def by_count(rows, keep):
        """{p: Run} of the rows `keep` accepts, the last row of each p."""
        runs = {}
        for r in rows:
            run = Run(r)
            p = number(run.note.get("p"))
            if p and keep(r, run):
                runs[int(p)] = run
        return runs

    def scaling_table(self, title, runs, goals, what):
        print(f"\n{title}")
        if not runs:
            print("  (no rows)")
            return
        print(f"  {'GPUs':>4} {'grid':<8} {'s':>8} {'TFLOP/s':>8} {'speed-up':>9} {'goal':>6} {'verdict':<7} "
              f"{'overhead':>8}  check")
        one = runs.get(1)
        for g in sorted(runs):
            r = runs[g]
            up = one.s / r.s if one and one.s and r.s else None
            goal = goals.get(g)
            v = verdict(up, goal)
            self.note_verdict(f"{what} on {gpus(g)}: {fmt(up, '.3f')}x (goal {goal}x)", v)
            ov = number(r.note.get("overhead"))
            print(f"  {g:>4} {r.note.get('layout', '-'):<8} {fmt(r.s, '8.4f'):>8} {fmt(r.tf, '8.2f'):>8} "
                  f"{fmt(up, '.2f') + 'x' if up else '-':>9} {fmt(goal, '.2f') + 'x' if goal else '-':>6} "
                  f"{v:<7} {fmt(100 * ov, '6.1f') + ' %' if ov is not None else '-':>8}  {r.check}")

    def step08(self, step07_runs):
        print()
        rows = [r for r in self.load("step08_multi.csv", "the step08 stage") if r["step"] == "step08"]
        if not rows:
            return
        n = rows[0]["n"]
        born = self.by_count(rows, lambda r, run: run.note.get("data") == "ranks" and r["variant"] == "cube")
        self.scaling_table(f"step08: blocks born on the GPUs, n = {n}, speed-up against 1 GPU", born,
                           STEP08_GOALS, "step08 blocks born on the GPUs")
        root = self.by_count(rows, lambda r, run: run.note.get("data") == "root" and r["variant"] == "cube")
        print(f"\nstep08: the rank-0 entry (rank 0's host matrices: scatter + multiply + gather), n = {n}, "
              f"against step07 multigpu on as many GPUs (goal at least {ROOT_ENTRY_GOAL}x), never slower with "
              f"more GPUs")
        if not root:
            print("  (no rows with data=root)")
            return
        print(f"  {'GPUs':>4} {'host':<8} {'s':>8} {'TFLOP/s':>8} {'step07':>8} {'ratio':>6} {'goal':>6} "
              f"{'verdict':<7} {'with more GPUs':<32} check")
        best = None  # (seconds, GPUs): the fastest on fewer GPUs so far
        slower = []
        for g in sorted(root):
            r = root[g]
            s07 = step07_runs.get(g)
            ratio = r.tf / s07.tf if s07 and s07.tf and r.tf else None
            v = verdict(ratio, ROOT_ENTRY_GOAL)
            self.note_verdict(f"step08 rank-0 entry on {gpus(g)}: {fmt(ratio, '.3f')}x step07's rate "
                              f"(goal {ROOT_ENTRY_GOAL}x)", v)
            trend = "-"
            if r.s and best:
                if r.s > best[0]:
                    trend = f"SLOWER than on {gpus(best[1])} ({r.s:.3f} s > {best[0]:.3f} s)"
                    slower.append(g)
                else:
                    trend = "ok"
            if r.s and (best is None or r.s < best[0]):
                best = (r.s, g)
            print(f"  {g:>4} {r.note.get('host', 'pageable'):<8} {fmt(r.s, '8.3f'):>8} {fmt(r.tf, '8.2f'):>8} "
                  f"{fmt(s07 and s07.tf, '8.2f'):>8} "
                  f"{fmt(ratio, '.2f') + 'x' if ratio else '-':>6} {ROOT_ENTRY_GOAL:>5.2f}x {v:<7} {trend:<32} "
                  f"{r.check}")
        if len([g for g in root if root[g].s]) > 1:
            ok = not slower
            self.verdicts.append(("step08 rank-0 entry never slower with more GPUs", ok))
            print("  never slower with more GPUs: " + ("met" if ok else
                  "MISSED (FLAGGED: slower on " + ", ".join(gpus(g) for g in slower) + ")"))

    def step09(self):
        print()
        rows = [r for r in self.load("step09_multi.csv", "the step09 stage") if r["step"] == "step09"]
        if not rows:
            return
        for (m, k, n), name in STEP09_SHAPES:
            runs = self.by_count(rows, lambda r, run: r["variant"] == "minplus_mpi" and
                                 (int(r["m"]), int(r["k"]), int(r["n"])) == (m, k, n))
            self.scaling_table(f"step09 min-plus, {name} (M, K, N) = ({m}, {k}, {n}), speed-up against 1 GPU "
                               f"(TFLOP/s: tera semiring operations per second)", runs, STEP09_GOALS,
                               f"step09 min-plus ({m}, {k}, {n})")

    def run(self):
        print(f"multi-gpu-check summary: {self.out}")
        probe = self.probe()
        step07_runs = self.step07(probe)
        self.probe_tables(probe)
        self.step08(step07_runs)
        self.step09()
        met = sum(ok for _, ok in self.verdicts)
        print(f"\ngoals: {met} met, {len(self.verdicts) - met} missed")
        for what, ok in self.verdicts:
            if not ok:
                print(f"  MISSED: {what}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", help="the results folder of multi-gpu-check (its --out)")
    args = ap.parse_args()
    if not pathlib.Path(args.dir).is_dir():
        print(f"multi_gpu_summary.py: error: {args.dir} is not a folder", file=sys.stderr)
        return 2
    Summary(args.dir).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
