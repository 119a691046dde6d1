#!/usr/bin/env python3
"""Instructions per call of each machine instruction of the methods C2 compiled, from a kept
instructions.sh run: where inside a compiled method an operation's instructions go (spills,
bounds and liveness checks, a walk's loop), which instructions.py's per-method totals cannot say.

    KEEP=/tmp/run OPS=insert FLAGS='-XX:CompileCommand=quiet \\
        -XX:CompileCommand=print,dev.larder.internal.Evictor::act' larder-bench/instructions.sh
    python3 larder-bench/annotate.py /tmp/run/larder-insert-10000 [calls] [min-per-call]

The JVM prints each compiled method of the CompileCommand's pattern as raw bytes when it has no
disassembler plugin (hsdis, which no JDK ships); this script disassembles them with capstone
(`pip install capstone`) and puts callgrind's count of each instruction, between the probe's
marks and divided by the calls (1,000,000 unless given), in front of it. The JVM's own notes on
the code (the source line and inlining chain at each call, trap and safepoint) are kept. A
method compiled more than once is printed each time; versions that ran less than once per call
between the marks are left out. Instructions run fewer than min-per-call times a call (0.05 by
default: the cold paths) are left out too.
"""
import collections
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import instructions  # noqa: E402 (beside this script)

try:
    import capstone
except ImportError:
    sys.exit("annotate.py: needs capstone: pip install capstone")


def measured_counts(run_dir):
    """Instructions by address of the caller's part between the marks (instructions.py's choice)."""
    starts, ranges = instructions.perf_map(run_dir)
    parts, _ = instructions.parts_by_thread(run_dir)
    _, path, _ = instructions.measured_part(run_dir, parts, starts, ranges)
    counts = collections.Counter()
    for _, address, count in instructions.self_costs(path):
        counts[address] += count
    return counts


def compiled_methods(lines):
    """(title, base address, code bytes, notes by address) of each C2 method printed as raw bytes."""
    starts = [i for i, line in enumerate(lines) if line.startswith("Compiled method (c2)")]
    for s in starts:
        end = next(
            (i for i in range(s + 1, len(lines)) if lines[i].startswith(("Compiled method", "[Stub Code]"))),
            len(lines),
        )
        code, base, notes, last = bytearray(), None, collections.defaultdict(list), None
        for line in lines[s:end]:
            m = re.match(r"\s+0x([0-9a-f]+): (.*)$", line)
            if m:
                address, rest = int(m.group(1), 16), m.group(2)
                if rest.startswith(";"):
                    notes[address].append(rest)
                    last = address
                    continue
                hexes = re.sub(r"[ |]", "", rest)
                if re.fullmatch(r"[0-9a-f]+", hexes):
                    base = address if base is None else base
                    code.extend(b"\x90" * (address - base - len(code)))  # gaps, if any, as nops
                    code.extend(bytes.fromhex(hexes))
                    last = None
            elif line.strip().startswith(";") and last is not None:
                notes[last].append(line.strip())
        if base is not None:
            yield lines[s], base, bytes(code), notes


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    run_dir = sys.argv[1]
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
    min_per_call = float(sys.argv[3]) if len(sys.argv) > 3 else 0.05
    counts = measured_counts(run_dir)
    with open(run_dir + "/out.txt", errors="replace") as f:
        lines = f.read().split("\n")
    disassembler = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
    for title, base, code, notes in compiled_methods(lines):
        total = sum(counts[a] for a in range(base, base + len(code))) / calls
        if total < 1:
            continue
        print(f"==== {title.strip()}: {total:.1f} instructions per call")
        for ins in disassembler.disasm(code, base):
            per_call = counts[ins.address] / calls
            if per_call < min_per_call:
                continue
            print(f"{per_call:8.2f}  {ins.address:x}: {ins.mnemonic} {ins.op_str}")
            # A call's notes (what it calls, from which source line) sit at its return address,
            # which is inside the call instruction's bytes as the JVM prints them.
            for address in range(ins.address, ins.address + ins.size):
                for note in notes.get(address, []):
                    if re.search(r" - |call|trap", note):
                        print("                          " + note[:160])


if __name__ == "__main__":
    main()
