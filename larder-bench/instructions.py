#!/usr/bin/env python3
"""Instructions per call from two callgrind runs of InstructionProbe (see instructions.sh).

    instructions.py <run-dir-1> <calls-1> <run-dir-2> <calls-2> [top]

Each run directory holds callgrind's per-thread files (cg.<pid>-<nn>) and the JVM's perf map
(perf-<pid>.map, from -XX:+DumpPerfMapAtExit), which names the JIT's code by address. Every
thread is given a role by what it ran: 'main' (the probe's thread: the cache's calls), 'java'
(other threads running Java code: a cache's executor, its maintenance), 'gc', 'jit' (the
compilers, left out of the totals: they compile, they do not serve calls) and 'other'. The
figures are the second run minus the first, divided by the calls between them, so that the
start, the fill and the warm-up cancel; the per-method lines do the same per method name.
"""
import bisect
import collections
import glob
import os
import re
import sys


def perf_map(run_dir):
    maps = glob.glob(os.path.join(run_dir, "perf-*.map"))
    if len(maps) != 1:
        sys.exit(f"instructions.py: expected one perf-*.map in {run_dir}, found {len(maps)}")
    ranges = []
    with open(maps[0]) as f:
        for line in f:
            parts = line.rstrip("\n").split(" ", 2)
            if len(parts) == 3:
                ranges.append((int(parts[0], 16), int(parts[1], 16), parts[2]))
    ranges.sort()
    return [r[0] for r in ranges], ranges


def short_name(name):
    """'byte[] dev.larder.X.m(java.lang.String)' -> 'dev.larder.X.m'."""
    m = re.search(r"([\w$.<>]+)\(", name)
    return m.group(1) if m else name


def thread_costs(path, starts, ranges):
    """Self instructions per code name in one callgrind thread file."""
    cost = collections.Counter()
    fn = "?"
    skip_next = False
    with open(path) as f:
        for line in f:
            if line.startswith("fn="):
                fn = line[3:].strip()
            elif line.startswith("calls="):
                skip_next = True  # the next cost line is the call's inclusive cost
            elif line.startswith("0x"):
                if skip_next:
                    skip_next = False
                    continue
                parts = line.split()
                addr = int(parts[0], 16)
                i = bisect.bisect_right(starts, addr) - 1
                if i >= 0 and addr < ranges[i][0] + ranges[i][1]:
                    name = short_name(ranges[i][2])
                else:
                    name = "[native] " + fn
                cost[name] += int(parts[-1])
    return cost


def role(cost):
    total = sum(cost.values()) or 1
    if any(n.startswith("dev.larder.bench.InstructionProbe") for n in cost):
        return "main"
    native = collections.Counter()
    for n, c in cost.items():
        if n.startswith("[native] "):
            native[n] += c
    jit = sum(c for n, c in native.items() if re.search(r"Compile|Compilation|PhaseChaitin|LinearScan|C2|Matcher", n))
    gc = sum(c for n, c in native.items() if re.search(r"G1|Par|Gc|GC|oop|Oop", n))
    java = total - sum(native.values())
    if jit > 0.3 * total:
        return "jit"
    if java > 0.5 * total:
        return "java"
    if gc > 0.3 * total:
        return "gc"
    return "other"


def run_costs(run_dir):
    starts, ranges = perf_map(run_dir)
    by_role = collections.defaultdict(collections.Counter)
    for path in sorted(glob.glob(os.path.join(run_dir, "cg.*-*"))):
        cost = thread_costs(path, starts, ranges)
        by_role[role(cost)].update(cost)
    if "main" not in by_role:
        sys.exit(f"instructions.py: no thread of {run_dir} ran InstructionProbe")
    return by_role


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    a, calls_a, b, calls_b = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    top = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    if calls_b <= calls_a:
        sys.exit("instructions.py: the second run must make more calls than the first")
    ra, rb = run_costs(a), run_costs(b)
    n = calls_b - calls_a
    totals = {}
    for r in ("main", "java", "gc", "other"):
        totals[r] = (sum(rb[r].values()) - sum(ra[r].values())) / n
    served = totals["main"] + totals["java"] + totals["gc"]
    print(f"instructions per call: {served:.0f} (caller {totals['main']:.0f}, other Java threads "
          f"{totals['java']:.0f}, GC {totals['gc']:.0f}; not counted: JIT compilers, other {totals['other']:.0f})")
    if top:
        diff = collections.Counter()
        for r in ("main", "java"):
            for name in set(ra[r]) | set(rb[r]):
                diff[(r, name)] += (rb[r][name] - ra[r][name]) / n
        print(f"  top {top} by instructions per call (thread role, code):")
        for (r, name), c in sorted(diff.items(), key=lambda kv: -kv[1])[:top]:
            print(f"  {c:8.1f}  {r:4}  {name}")


if __name__ == "__main__":
    main()
