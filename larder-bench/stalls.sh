#!/usr/bin/env bash
# Where a cache's calls wait, per machine instruction: dev.larder.bench.InstructionProbe (fill,
# warm-up, CALLS calls) under `perf record -e cpu-clock`, with the JVM printing the machine code of
# METHODS; stalls.py then puts each instruction's share of the caller thread's samples in front of
# it. instructions.sh counts what a call does; this shows what it waits for (a dependent load that
# misses, a locked instruction that drains the stores before it), which a count cannot.
#
#   larder-bench/stalls.sh                          # Larder's GET at 10K: the index probe and the lookup
#   OPS=insert SIZES=100000 METHODS='dev.larder.internal.NativeCache::*' larder-bench/stalls.sh
#   BENCH='GetPutBenchmark.get$' THREADS=2 larder-bench/stalls.sh   # a JMH fork instead, its workers
#
# The samples cover the whole run, fill and warm-up included: a large CALLS (the default takes
# ~10 s at 10K) makes the measured calls most of them. Other threads are left out (an executor
# that evicts shows as its own thread in perf report -i $KEEP/perf.data --sort comm,sym).
# Needs perf (linux-perf) allowed to sample (perf_event_paranoid <= 1, or root) and capstone
# (pip install capstone); a virtual machine without hardware counters still has cpu-clock. A
# timer's sample lands on the instruction after the one that waited, hence the context shown.
set -euo pipefail

: "${CACHE:=larder}"
: "${OPS:=get}"                   # get, overwrite, insert
: "${SIZES:=10000}"
: "${VALUE_BYTES:=256}"
: "${WARMUP:=2000000}"
: "${CALLS:=40000000}"
: "${METHODS:=dev.larder.internal.index.IndexShard::probe dev.larder.internal.NativeCache::lookupOptimistically}"
: "${MIN_SHARE:=0.005}"           # show instructions with at least this share of the samples
: "${CONTEXT:=4}"                 # and this many instructions before each
: "${TOP:=12}"                    # symbols listed by their share of the caller's samples
: "${JAR:=larder-bench/target/benchmarks.jar}"
: "${FLAGS:=}"                    # extra JVM flags (a -D switch to compare)
: "${KEEP:=}"                     # a directory to keep the runs in
: "${BENCH:=}"                    # a JMH benchmark regex: one fork of it instead of the probe
: "${THREADS:=1}"                 # JMH's threads (with BENCH)
: "${FORK_OPTS:=-wi 3 -w 1s -i 5 -r 2s}"  # JMH's warm-up and measurement (with BENCH)

cd "$(dirname "$0")/.."
source larder-bench/probe-setup.sh
probe_setup stalls.sh perf # JAR made absolute; JAVA; WORK (KEEP, or a temporary directory)

PEER=$("$JAVA" -cp "$JAR" dev.larder.bench.Peer "$CACHE") # the cache's own JVM flags
PRINT=(-XX:CompileCommand=quiet)
for m in $METHODS; do PRINT+=("-XX:CompileCommand=print,$m"); done

# The probe's main thread is "java" to perf; JMH's workers are dev.larder.bench...-jmh-worker-N,
# cut to 15 characters.
CALLER=java
[[ -n "$BENCH" ]] && CALLER=dev.larder.benc
for op in $OPS; do for size in $SIZES; do
  if [[ -n "$BENCH" ]]; then
    run="$WORK/$CACHE-${BENCH//[^A-Za-z0-9]/}-$size-t$THREADS"
    # shellcheck disable=SC2206 # FORK_OPTS is a word list
    what=("$JAVA" -jar "$JAR" "$BENCH" -p cache="$CACHE" -p size="$size" -p valueSize="$VALUE_BYTES" -f 1 $FORK_OPTS
      -t "$THREADS" -bm avgt -jvmArgsAppend "$PEER -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit $FLAGS ${PRINT[*]}")
  else
    run="$WORK/$CACHE-$op-$size"
    # shellcheck disable=SC2086 # the cache's flags and FLAGS are word lists
    what=("$JAVA" -Xms2g -Xmx2g -XX:+AlwaysPreTouch -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit
      $PEER $FLAGS "${PRINT[@]}"
      -cp "$JAR" dev.larder.bench.InstructionProbe --cache "$CACHE" --op "$op" --entries "$size"
      --value-bytes "$VALUE_BYTES" --warmup "$WARMUP" --calls "$CALLS")
  fi
  rm -rf "$run"; mkdir -p "$run"
  perf record -q -e cpu-clock -F 20000 -o "$run/perf.data" -- "${what[@]}" > "$run/out.txt" 2> "$run/perf.log" \
    || { tail -n 20 "$run/perf.log" >&2; echo "stalls.sh: the run failed ($run)" >&2; exit 1; }
  perf script -i "$run/perf.data" -F comm,ip 2>/dev/null > "$run/samples.txt"
  echo "$CACHE ${BENCH:-$op} N=$size ${VALUE_BYTES}-byte values${BENCH:+, $THREADS thread(s)} ${FLAGS:+($FLAGS) }"
  [[ -n "$BENCH" ]] && grep -A1 '^Benchmark ' "$run/out.txt" || true # JMH's result
  echo "where the caller's samples fall, by symbol (the JIT's names from its perf map):"
  perf report -i "$run/perf.data" --comm "$CALLER" --sort sym --stdio 2>/dev/null | grep -v '^#' | grep -v '^$' | head -n "$TOP" || true
  python3 larder-bench/stalls.py "$run" "$MIN_SHARE" "$CONTEXT" "$CALLER"
done; done
