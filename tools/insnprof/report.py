#!/usr/bin/env python3
"""Turns insnprof.so's counts into a profile: instructions per operation by
program and by function.

    report.py [--base BASE] COUNTS OPS ELF...

COUNTS is the plugin's output, OPS how many operations the run did (every
count is divided by it); BASE the counts of a run of the same boot doing
fewer operations, subtracted first so that boot and setup drop out (OPS is
then the difference); ELF the programs that may have run (the kernel,
the native programs, the UNIX programs). An instruction belongs to the
program whose file holds the same bytes at that address (native programs
all start at 0x400000); a position-independent program is found at the
base where its bytes match.
"""
import collections
import struct
import subprocess
import sys


class Elf:
    def __init__(self, path):
        self.path = path
        self.name = path.rsplit("/", 1)[-1]
        data = open(path, "rb").read()
        self.data = data
        (etype,) = struct.unpack_from("<H", data, 16)
        self.pie = etype == 3
        phoff, = struct.unpack_from("<Q", data, 32)
        phentsize, phnum = struct.unpack_from("<HH", data, 54)
        self.loads = []
        for i in range(phnum):
            o = phoff + i * phentsize
            ptype, flags, off, vaddr, _, filesz = struct.unpack_from("<IIQQQQ", data, o)
            if ptype == 1 and flags & 1:
                self.loads.append((vaddr, off, filesz))
        self.base = 0
        self.syms = []
        out = subprocess.run(["nm", "-n", "-C", path], capture_output=True, text=True).stdout
        for line in out.splitlines():
            parts = line.split(" ", 2)
            if len(parts) == 3 and parts[1] in "tTwW":
                self.syms.append((int(parts[0], 16), parts[2]))
        self.addrs = [a for a, _ in self.syms]

    def bytes_at(self, vaddr, n):
        v = vaddr - self.base
        for start, off, size in self.loads:
            if start <= v and v + n <= start + size:
                return self.data[off + v - start: off + v - start + n]
        return None

    def symbol(self, vaddr):
        import bisect
        i = bisect.bisect_right(self.addrs, vaddr - self.base) - 1
        return self.syms[i][1] if i >= 0 else "?"

    def starts(self, vaddr):
        """Whether `vaddr` is a function's first instruction."""
        import bisect
        i = bisect.bisect_left(self.addrs, vaddr - self.base)
        return i < len(self.addrs) and self.addrs[i] == vaddr - self.base


def find_base(elf, vaddr, code):
    """The load base at which `code` (at `vaddr`) is `elf`'s, if unique."""
    bases = set()
    for start, off, size in elf.loads:
        seg = elf.data[off: off + size]
        i = seg.find(code)
        while i >= 0:
            base = vaddr - (start + i)
            if base % 4096 == 0:
                bases.add(base)
            i = seg.find(code, i + 1)
    return bases.pop() if len(bases) == 1 else None


def main():
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--base")
    ap.add_argument("--callers", help="also list who calls functions whose name contains this")
    ap.add_argument("counts")
    ap.add_argument("ops", type=int)
    ap.add_argument("elfs", nargs="+")
    a = ap.parse_args()
    ops = a.ops
    elfs = [Elf(p) for p in a.elfs]
    recs = collections.Counter()
    for sign, path in ((1, a.counts), (-1, a.base)):
        if path is None:
            continue
        for line in open(path):
            va, n, _, code = line.split()
            recs[(int(va, 16), code)] += sign * int(n)
    owner = {}
    unknown = 0
    by_prog = collections.Counter()
    by_fn = collections.Counter()
    calls = collections.Counter()
    edges = collections.Counter()
    # Longest instructions first: they pin a position-independent base.
    for (va, code), n in sorted(recs.items(), key=lambda r: -len(r[0][1])):
        raw = bytes.fromhex(code)
        hit = None
        for e in elfs:
            if e.pie and e.base == 0 and len(raw) >= 5 and n >= ops:
                b = find_base(e, va, raw)
                if b:
                    e.base = b
            if e.bytes_at(va, len(raw)) == raw:
                hit = e
                break
        if hit is None:
            unknown += n
            by_prog["(unknown)"] += n
            continue
        by_prog[hit.name] += n
        by_fn[(hit.name, hit.symbol(va))] += n
        if hit.starts(va):
            calls[(hit.name, hit.symbol(va))] += n
        if raw[0] == 0xE8 and len(raw) == 5:
            # call rel32: who calls whom, for --callers.
            target = va + 5 + struct.unpack("<i", raw[1:5])[0]
            edges[(hit.name, hit.symbol(va), hit.symbol(target))] += n
    total = sum(by_prog.values())
    print(f"{total / ops:,.0f} instructions per operation ({ops} operations)")
    print("\nby program:")
    for name, n in by_prog.most_common():
        if n >= ops:
            print(f"  {n / ops:>12,.1f}  {name}")
    print("\nby function (at least 1 per operation), with calls per operation:")
    for (prog, fn), n in by_fn.most_common():
        if n < ops:
            break
        c = calls[(prog, fn)] / ops
        print(f"  {n / ops:>12,.1f}  {c:>8,.1f}  {prog}: {fn}")
    if a.callers:
        print(f"\ncalls per operation to functions matching {a.callers!r}, by caller:")
        for (prog, caller, callee), n in edges.most_common():
            if a.callers in callee and n >= ops:
                print(f"  {n / ops:>8,.1f}  {prog}: {caller} -> {callee}")


main()
