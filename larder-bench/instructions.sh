#!/usr/bin/env bash
# Instructions per call of a cache, counted by valgrind: a figure that, unlike a time, is the
# same run after run on a machine shared with other jobs.
#
#   larder-bench/instructions.sh                                  # Larder's GET at 10K entries
#   CACHES='larder ohc caffeine' OPS='get overwrite insert' SIZES='10000 100000' TOP=20 \
#     larder-bench/instructions.sh
#
# For each cache, operation and size it runs dev.larder.bench.InstructionProbe once under
# `valgrind --tool=callgrind`: fill, WARMUP calls, a mark, CALLS calls, a mark. callgrind dumps its
# counts at each mark (Thread.yield's sched_yield), so the caller's instructions between the marks,
# divided by CALLS, are exact; with TOP=N it lists the N pieces of code (by the JIT's names) that
# take most of them. Other threads (an executor that evicts, the GC) are averaged over the whole
# run. The JVM runs with -Xbatch, so the measured calls run compiled code. Each cache gets only its
# own JVM flags. Needs valgrind (Debian: apt-get install valgrind). A count says nothing about
# cache misses or waits: confirm a change with a timed A/B (ab.sh).
set -euo pipefail

: "${CACHES:=larder}"
: "${OPS:=get}"                   # get, overwrite, insert
: "${SIZES:=10000}"
: "${VALUE_BYTES:=256}"           # the values' size (the keys are 16 bytes)
: "${WARMUP:=300000}"             # calls before either run's measured calls (compiled by then)
: "${CALLS:=1000000}"             # calls measured, between the marks
: "${TOP:=0}"                     # show the TOP pieces of code by instructions per call
: "${JAR:=larder-bench/target/benchmarks.jar}"
: "${FLAGS:=}"                    # extra JVM flags (e.g. a -D switch to compare)
: "${KEEP:=}"                     # a directory to keep the callgrind files in

cd "$(dirname "$0")/.."
source larder-bench/probe-setup.sh
probe_setup instructions.sh valgrind # JAR made absolute; JAVA; WORK (KEEP, or a temporary directory)

# One run under callgrind, its files in $1: per-thread counts, cut at the marks, and the JIT's perf map.
count() {
  local dir=$1 cache=$2 op=$3 size=$4
  rm -rf "$dir"; mkdir -p "$dir"
  # shellcheck disable=SC2046,SC2086 # the peer's flags and FLAGS are word lists
  (cd "$dir" && valgrind --tool=callgrind --smc-check=all-non-file --separate-threads=yes \
      --dump-instr=yes --compress-pos=no --compress-strings=no --dump-before=sched_yield \
      --callgrind-out-file="$dir/cg.%p" \
      "$JAVA" -Xbatch -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit -Xms2g -Xmx2g \
      $("$JAVA" -cp "$JAR" dev.larder.bench.Peer "$cache") $FLAGS \
      -cp "$JAR" dev.larder.bench.InstructionProbe --cache "$cache" --op "$op" --entries "$size" --value-bytes "$VALUE_BYTES" \
      --warmup "$WARMUP" --calls "$CALLS" > "$dir/out.txt" 2> "$dir/valgrind.log") \
    || measured_then_failed "$dir"
  # The probe writes /tmp/perf-<pid>.map before its marks, DumpPerfMapAtExit again at exit; keep
  # it with its run.
  local pid
  pid=$(sed -n 's/^==\([0-9]*\)== Command:.*/\1/p' "$dir/valgrind.log" | head -n 1)
  mv "/tmp/perf-$pid.map" "$dir/"
}

# A JVM that fails after the probe's measured calls (some crash under valgrind as they exit) has
# still counted them: go on, and say so. One that failed before is a failed run.
measured_then_failed() {
  if grep -q 'calls measured' "$1/out.txt"; then
    echo "instructions.sh: the JVM failed after the measured calls (see $1/valgrind.log); counted anyway" >&2
  else
    tail -n 20 "$1/valgrind.log" >&2; echo "instructions.sh: the run failed ($1)" >&2; exit 1
  fi
}

for cache in $CACHES; do for op in $OPS; do for size in $SIZES; do
  run="$WORK/$cache-$op-$size"
  count "$run" "$cache" "$op" "$size"
  echo "$cache $op N=$size ${VALUE_BYTES}-byte values ${FLAGS:+($FLAGS) }$(python3 larder-bench/instructions.py "$run" "$WARMUP" "$CALLS" "$TOP")"
done; done; done
