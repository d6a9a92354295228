#!/usr/bin/env python3
"""Instructions per update in the hot loop of step09's FP64 semiring kernels.

    cuobjdump -sass build/.../bin/step09_ceiling | python3 step09_semiring/sass_mix.py

For every FP64 min-plus or max-plus instance of semiring_kernel (and of
small_tile_kernel, the small register tiles) in the disassembly, takes the
loop (a backward branch and the code it jumps back over) with the most DADD
instructions, that is the slice loop (its full and its short-slice paths
both), counts each opcode there and divides by the DADD count (one DADD an
update). An update's floor is DADD + DSETP + 2 FSEL; the rest is what the
loop adds (loads, addresses, moves).
"""
import collections
import re
import sys

FUNC = re.compile(r"Function : (\S+)")
INSN = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)*)([^;]*);")
LABEL = re.compile(r"^\s*(\.L_x_\d+):")
BRA_ADDR = re.compile(r"0x([0-9a-f]+)")
BRA_LABEL = re.compile(r"`\((\.L_x_\d+)\)")
SHOWN = ["DADD", "DSETP", "FSEL", "SEL", "DMNMX", "MOV", "IMAD.MOV", "LDS", "IADD3", "ISETP", "LOP3", "BAR", "LDGSTS"]


def short_name(mangled):
    """semiring, tile numbers and update of a mangled semiring_kernel<S, TileConfig<...>, U> or
    small_tile_kernel<S, SmallTile<...>, U> name."""
    s = re.search(r"(MinPlus|MaxPlus)E", mangled)
    tile = re.search(r"(?:TileConfigId|SmallTileI)((?:Li\d+E)+)", mangled)
    nums = re.findall(r"Li(\d+)E", tile.group(1)) if tile else []
    upd = re.search(r"sweep\d+(\w+?)E", mangled)
    form = upd.group(1) if upd else "Step<S> (shipped)"
    kind = "small " if "small_tile_kernel" in mangled else ""
    return "%s %s%s %s" % (s.group(1) if s else "?", kind, "x".join(nums), form)


def analyse(name, lines):
    insns, labels, pending = [], {}, []
    for line in lines:
        m = LABEL.match(line)
        if m:
            pending.append(m.group(1))
            continue
        m = INSN.search(line)
        if not m:
            continue
        addr = int(m.group(1), 16)
        for lab in pending:
            labels[lab] = addr
        pending = []
        insns.append((addr, m.group(2), m.group(3)))
    best = None
    for i, (addr, op, rest) in enumerate(insns):
        if not op.startswith("BRA"):
            continue
        m = BRA_LABEL.search(rest)
        target = labels.get(m.group(1)) if m else None
        if target is None:
            m = BRA_ADDR.search(rest)
            target = int(m.group(1), 16) if m else None
        if target is None or target >= addr:
            continue
        body = [ins for ins in insns if target <= ins[0] <= addr]
        dadd = sum(1 for ins in body if ins[1].split(".")[0] == "DADD")
        if best is None or dadd > best[0]:
            best = (dadd, body)
    if not best or best[0] == 0:
        return
    dadd, body = best
    counts = collections.Counter()
    for _, op, _ in body:
        base = op.split(".")[0]
        counts["IMAD.MOV" if op.startswith("IMAD.MOV") else base] += 1
    shown = " ".join("%s %.3f" % (k, counts[k] / dadd) for k in SHOWN if counts[k])
    other = sum(v for k, v in counts.items() if k not in SHOWN)
    print("%-40s loop %5d insns, %5d DADD; per update: total %.3f | %s | other %.3f"
          % (short_name(name), len(body), dadd, len(body) / dadd, shown, other / dadd))


def main():
    name, lines = None, []
    for line in sys.stdin:
        m = FUNC.search(line)
        if m:
            if name:
                analyse(name, lines)
            name, lines = m.group(1), []
            continue
        if (name and ("semiring_kernel" in name or "small_tile_kernel" in name) and "MinPlusI32" not in name
                and "PlusTimes" not in name):
            lines.append(line)
    if name:
        analyse(name, lines)


if __name__ == "__main__":
    main()
