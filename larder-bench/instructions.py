#!/usr/bin/env python3
"""Instructions per call from a callgrind run of InstructionProbe (see instructions.sh).

    instructions.py <run-dir> <warmup> <calls> [top]

The run directory holds callgrind's files and the JVM's perf map (perf-<pid>.map, from
-XX:+DumpPerfMapAtExit), which names the JIT's code by address. callgrind ran with
--dump-before=sched_yield, and the probe calls Thread.yield (sched_yield) just before and just
after its measured calls, so the caller's thread has a part (cg.<pid>.<n>-<thread>) that holds
exactly those calls: its instructions divided by the calls are the caller's figure. Other threads
(an executor that evicts, the GC, the compilers) are not cut at the marks; their counts over the
whole run (fill, warm-up and measured calls) are divided by all the calls made, an average that
the fill inflates, shown apart.
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


def self_costs(path):
    """(function, address, instructions) of each self-cost line of one callgrind file (run with
    --dump-instr=yes): a call's inclusive cost is left out."""
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
                yield fn, int(parts[0], 16), int(parts[-1])


def costs(path, starts, ranges):
    """Self instructions per piece of code in one callgrind file."""
    cost = collections.Counter()
    for fn, addr, count in self_costs(path):
        i = bisect.bisect_right(starts, addr) - 1
        if i >= 0 and addr < ranges[i][0] + ranges[i][1]:
            name = short_name(ranges[i][2])
        else:
            name = "[native] " + fn
        cost[name] += count
    return cost


def role(cost):
    """What a thread did, by the code it ran: 'java', 'jit', 'gc' or 'other'."""
    total = sum(cost.values()) or 1
    native = {n: c for n, c in cost.items() if n.startswith("[native] ")}
    jit = sum(c for n, c in native.items() if re.search(r"Compile|Compilation|PhaseChaitin|LinearScan|C2|Matcher", n))
    gc = sum(c for n, c in native.items() if re.search(r"G1|GC|Gc", n))
    if jit > 0.3 * total:
        return "jit"
    if total - sum(native.values()) > 0.5 * total:
        return "java"
    if gc > 0.3 * total:
        return "gc"
    return "other"


def parts_by_thread(run_dir):
    """The parts callgrind cut at the marks, by thread ([(part, path)]), and each thread's final file."""
    parts = collections.defaultdict(list)
    finals = {}
    for path in glob.glob(os.path.join(run_dir, "cg.*")):
        m = re.search(r"cg\.\d+(?:\.(\d+))?-(\d+)$", path)
        if not m:
            continue
        if m.group(1):
            parts[m.group(2)].append((int(m.group(1)), path))
        else:
            finals[m.group(2)] = path
    return parts, finals


def measured_part(run_dir, parts, starts, ranges):
    """(thread, path, costs) of the part that holds the probe's measured calls: the caller's last
    part, the one that ran the probe's loop (not the largest, which is the fill at 1M entries)."""
    for thread, ps in parts.items():
        path = max(ps)[1]
        last = costs(path, starts, ranges)
        if any(n.startswith("dev.larder.bench.InstructionProbe") for n in last):
            return thread, path, last
    sys.exit(f"instructions.py: no thread of {run_dir} has a part between the probe's marks")


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    run_dir, warmup, calls = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    top = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    starts, ranges = perf_map(run_dir)
    parts, finals = parts_by_thread(run_dir)
    caller, _, measured = measured_part(run_dir, parts, starts, ranges)
    per_call = sum(measured.values()) / calls
    others = collections.Counter()
    for thread, path in finals.items():
        if thread == caller:
            continue
        c = costs(path, starts, ranges)
        others[role(c)] += sum(c.values())
    made = calls + warmup
    print(f"instructions per call: {per_call:.0f} in the caller's thread (other threads, averaged over the "
          f"whole run: Java {others['java'] / made:.0f}, GC {others['gc'] / made:.0f})")
    if top:
        print(f"  top {top} of the caller's, per call:")
        for name, c in measured.most_common(top):
            print(f"  {c / calls:8.1f}  {name}")


if __name__ == "__main__":
    main()
