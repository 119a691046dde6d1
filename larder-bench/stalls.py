#!/usr/bin/env python3
"""Where a call's time waits, per machine instruction: the cpu-clock samples that perf took of
the caller's thread, put in front of the instructions of the methods C2 compiled and the JVM
printed (what annotate.py does with callgrind's counts, but with time instead of instructions).

    python3 larder-bench/stalls.py RUN_DIR [min-share] [context] [thread]

RUN_DIR is what stalls.sh leaves: out.txt (the probe's output with the printed code) and
samples.txt (perf script's "comm ip" lines). An instruction that waits for a load is rarely the
load itself: a timer's sample lands on the instruction after the one the core could not retire,
so each instruction with at least min-share of the caller's samples (0.005 by default) is shown
with the context instructions before it (4 by default), and the JVM's notes of source lines.
The caller is the thread perf names `thread`: "java" (InstructionProbe's main thread) by default,
"dev.larder.benc" for JMH's workers (their names cut to 15 characters), all of them together.
"""
import collections
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import annotate  # noqa: E402 (beside this script)


def caller_samples(path, caller):
    """Samples by address of the caller's threads, and their total."""
    counts = collections.Counter()
    for line in open(path, errors="replace"):
        parts = line.split()
        if len(parts) >= 2 and parts[0] == caller:
            counts[int(parts[-1], 16)] += 1
    return counts, sum(counts.values())


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    run_dir = sys.argv[1]
    min_share = float(sys.argv[2]) if len(sys.argv) > 2 else 0.005
    context = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    caller = sys.argv[4] if len(sys.argv) > 4 else "java"
    counts, total = caller_samples(run_dir + "/samples.txt", caller)
    if total == 0:
        sys.exit(f"stalls.py: no samples of thread {caller!r} in {run_dir}/samples.txt")
    with open(run_dir + "/out.txt", errors="replace") as f:
        lines = f.read().split("\n")
    disassembler = annotate.capstone.Cs(annotate.capstone.CS_ARCH_X86, annotate.capstone.CS_MODE_64)
    print(f"{total} samples of the caller's thread")
    for title, base, code, notes in annotate.compiled_methods(lines):
        n = sum(counts[a] for a in range(base, base + len(code)))
        if n < total * 0.01:
            continue  # a version that barely ran
        print(f"==== {title.strip()}: {100 * n / total:.1f}% of the samples")
        instructions = list(disassembler.disasm(code, base))
        shown = -1
        for i, ins in enumerate(instructions):
            if counts[ins.address] < total * min_share:
                continue
            first = max(i - context, shown + 1)
            if first > shown + 1 and shown >= 0:
                print("          ...")
            for x in instructions[first : i + 1]:
                share = 100 * counts[x.address] / total
                print(f"{share:7.2f}%  {x.address:x}: {x.mnemonic} {x.op_str}")
                for address in range(x.address, x.address + x.size):
                    for note in notes.get(address, []):
                        if re.search(r" - ", note):
                            print("                    " + note.strip()[:150])
            shown = i


if __name__ == "__main__":
    main()
