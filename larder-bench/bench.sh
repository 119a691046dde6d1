#!/usr/bin/env bash
# Runs Larder's benchmarks against its peers and regenerates docs/benchmarks.md (or $DOC).
#
#   larder-bench/bench.sh                 # everything, with the defaults below
#   SCENARIOS="getput memory" SIZES=10000 larder-bench/bench.sh
#
# Every setting is an environment variable; the run records the exact command (with every
# setting spelled out) in results/run-info.json and docs/benchmarks.md shows it. Each cache's
# forks get only that cache's JVM flags (dev.larder.bench.Peer), so Larder runs without the
# Unsafe and --add-opens flags its peers need.
#
# To regenerate docs/benchmarks.md from results already on disk:
#   python3 larder-bench/report.py
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)

: "${SCENARIOS:=getput zerocopy readthrough memory sidebyside}"
: "${CACHES:=larder caffeine ohc chronicle ehcache mapdb cache2k}"
: "${SIZES:=10000 100000 1000000}"            # add 10000000 where memory allows
: "${VALUE_BYTES:=256}"                         # GET/PUT and zero-copy values' size (keys: 16 bytes)
: "${THREADS:=1 max}"                           # max = every core
: "${MODES:=avgt,sample}"
: "${JMH_OPTS:=-f 1 -wi 3 -w 2s -i 5 -r 2s}"
: "${ROUNDS:=1}"                                # GET/PUT rounds; each table cell is the median of its rounds
: "${LATER_MODES:=avgt}"                        # modes of rounds 2.. (SampleTime's tails come from round 1)
: "${LATER_CACHES:=$CACHES}"                    # caches of rounds 2.. (leave out those far from every bar)
: "${PROF:=gc}"                                 # JMH profiler; empty for none
: "${RT_SIZES:=100000}"                         # read-through cache sizes
: "${RT_THREADS:=1 2 4}"
: "${RT_OPTS:=$JMH_OPTS}"
: "${PROBE_ENTRIES:=1000000,10000000}"
: "${PROBE_VALUES:=256,32}"
: "${SBS_CACHES:=larder ohc chronicle}"            # side by side in one JVM: Larder first (the reference)
: "${SBS_ROWS:=}"                                # op:size:threads ...; empty: get, overwrite and insert at SIZES x THREADS
: "${SBS_OPTS:=--slice-ms 500 --rounds 16 --warmup-rounds 6}"
: "${OUT:=larder-bench/results}"
: "${DOC:=docs/benchmarks.md}"                 # the page the report writes (another OUT, another DOC)
: "${CLEAN:=1}"                                 # 1: remove earlier results of the scenarios run

[[ $VALUE_BYTES =~ ^[1-9][0-9]*$ ]] \
  || { echo "bench.sh: VALUE_BYTES must be a whole number of bytes above 0, not '$VALUE_BYTES'" >&2; exit 2; }

SETTINGS=(SCENARIOS CACHES SIZES VALUE_BYTES THREADS MODES JMH_OPTS ROUNDS LATER_MODES LATER_CACHES PROF RT_SIZES RT_THREADS RT_OPTS PROBE_ENTRIES PROBE_VALUES SBS_CACHES SBS_ROWS SBS_OPTS OUT DOC)
COMMAND=""
for s in "${SETTINGS[@]}"; do COMMAND+="$s='${!s}' "; done
COMMAND+="larder-bench/bench.sh"

./mvnw -q -B -pl larder-bench -am package -DskipTests
JAR=larder-bench/target/benchmarks.jar
unset JAVA # always the JDK the build used
source larder-bench/java.sh # JAVA: the JDK 25 the Maven wrapper finds
"$JAVA" -version 2>&1 | head -n 1

mkdir -p "$OUT/logs"
peer_flags() { "$JAVA" -cp "$JAR" dev.larder.bench.Peer "$1"; }
heap_gib() { # the forks' heap (GiB) for a cache size: keys, insert keys and on-heap caches must fit.
  # Pre-touched: without it the first pass through a multi-GiB young generation page-faults on
  # every fresh 4 KiB, which slowed every cache that allocates per GET (Larder, OHC, ...) by 2-5x
  # in whichever iterations it fell (measured 190 -> 1,000 ns/op for a 272-byte GET copy).
  # At least 4 GiB (14 at 10M); more where an on-heap cache's values need it: twice N values
  # and their arrays' headers, and 3 GiB for the keys and the insert pool.
  local base=4 values
  [ "$1" -ge 10000000 ] && base=14
  values=$(( ($1 * (VALUE_BYTES + 64) * 2 + (1 << 30) - 1) / (1 << 30) + 3 ))
  local gib=$(( values > base ? values : base ))
  echo "$gib"
}
heap_for() { local gib; gib=$(heap_gib "$1"); echo "-Xms${gib}g -Xmx${gib}g -XX:+AlwaysPreTouch"; }

if [ "$CLEAN" = 1 ]; then
  for sc in $SCENARIOS; do
    case $sc in
      getput) rm -f "$OUT"/getput-*.json ;;
      zerocopy) rm -f "$OUT"/zerocopy-*.json ;;
      readthrough) rm -f "$OUT"/readthrough-*.json ;;
      memory) rm -f "$OUT"/memory.json ;;
      sidebyside) rm -f "$OUT"/sidebyside-*.json ;;
    esac
  done
fi

# Which peers start on this JVM (the report lists the ones that don't, with the reason).
: > "$OUT/peers.jsonl"
for c in $CACHES; do
  # shellcheck disable=SC2046
  "$JAVA" $(peer_flags "$c") -cp "$JAR" dev.larder.bench.PeerCheck "$c" 2>"$OUT/logs/peer-$c.log" \
    | grep '^{' >> "$OUT/peers.jsonl" || echo "{\"cache\": \"$c\", \"ok\": false, \"reason\": \"peer check crashed; see logs/peer-$c.log\"}" >> "$OUT/peers.jsonl"
done
cat "$OUT/peers.jsonl"

cat > "$OUT/run-info.json" <<EOF
{"date": "$(date -u +%Y-%m-%dT%H:%M:%SZ)", "command": $(python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$COMMAND"),
 "commit": "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)",
 "nproc": $(nproc), "cpu": $(python3 -c 'import json,re; m=re.search(r"model name\s*:\s*(.*)", open("/proc/cpuinfo").read()); print(json.dumps(m.group(1) if m else "unknown"))'),
 "cpuId": $(python3 -c 'import json,re; t=open("/proc/cpuinfo").read(); f=[re.search(r"^"+k+r"\s*:\s*(\S+)", t, re.M) for k in ("cpu family", "model", "stepping")]; print(json.dumps(", ".join(k+" "+m.group(1) for k,m in zip(("family","model","stepping"),f) if m)))'),
 "memTotalKb": $(awk '/MemTotal/ {print $2}' /proc/meminfo),
 "thp": "$(sed -n 's/.*\[\(.*\)\].*/\1/p' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)",
 "java": $(python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$("$JAVA" -version 2>&1 | tr '\n' ' ')"),
 "valueBytes": $VALUE_BYTES, "jmhOpts": "$JMH_OPTS", "rounds": $ROUNDS, "modes": "$MODES", "laterModes": "$LATER_MODES", "laterCaches": "$LATER_CACHES", "prof": "$PROF", "threads": "$THREADS"}
EOF

prof_args=()
[ -n "$PROF" ] && prof_args=(-prof "$PROF")

jmh() { # jmh <result-file> <log-file> <cache-for-flags> <size-for-heap> args...
  local rff=$1 log=$2 cache=$3 size=$4; shift 4
  # shellcheck disable=SC2046
  "$JAVA" -jar "$JAR" "$@" -rf json -rff "$rff" \
    -jvmArgsAppend "$(heap_for "$size") $(peer_flags "$cache")" > "$log" 2>&1 || true
  grep -E '^(Benchmark|[A-Za-z]+Benchmark\.)' "$log" | grep -v ':gc\.\|:·gc\|p0\.\|p1\.00' || true
  grep -E 'does not (evict|apply)|cannot run|Exception' "$log" | sort -u | head -n 3 || true
}

for sc in $SCENARIOS; do
  case $sc in
    getput)
      # Every cache runs one operation at one size and thread count in turn, so that the rows a
      # table compares ran within a minute or two of each other: this machine's speed drifts
      # 10-30% over minutes, and a cache measured a quarter of an hour after another was measured
      # on another machine, in effect. Rounds repeat the whole sweep; the report takes medians.
      for r in $(seq 1 "$ROUNDS"); do
        modes=$MODES caches=$CACHES
        [ "$r" -gt 1 ] && modes=$LATER_MODES caches=$LATER_CACHES
        for t in $THREADS; do for s in $SIZES; do for op in get putOverwrite putInsert; do for c in $caches; do
          echo "== GET/PUT round $r/$ROUNDS $op $c threads=$t size=$s"
          # shellcheck disable=SC2086
          jmh "$OUT/getput-$c-t$t-s$s-$op-r$r.json" "$OUT/logs/getput-$c-t$t-s$s-$op-r$r.log" "$c" "$s" \
            "dev.larder.bench.GetPutBenchmark.$op\$" -p cache="$c" -p size="$s" -p valueSize="$VALUE_BYTES" -t "$t" -bm "$modes" \
            "${prof_args[@]}" $JMH_OPTS
        done; done; done; done
      done ;;
    zerocopy)
      for t in $THREADS; do for s in $SIZES; do
        echo "== Larder zero-copy threads=$t size=$s"
        # shellcheck disable=SC2086
        jmh "$OUT/zerocopy-t$t-s$s.json" "$OUT/logs/zerocopy-t$t-s$s.log" larder "$s" \
          'dev.larder.bench.LarderZeroCopyBenchmark.(readZeroCopy|getCopy)$' -p size="$s" -p valueSize="$VALUE_BYTES" -t "$t" -bm "$MODES" \
          "${prof_args[@]}" $JMH_OPTS
      done; done ;;
    readthrough)
      for c in $CACHES; do
        [ "$c" = chronicle ] && { echo "== read-through: chronicle skipped (no eviction)"; continue; }
        for t in $RT_THREADS; do for s in $RT_SIZES; do
          echo "== read-through $c threads=$t size=$s"
          # shellcheck disable=SC2086
          jmh "$OUT/readthrough-$c-t$t-s$s.json" "$OUT/logs/readthrough-$c-t$t-s$s.log" "$c" "$((s * 10))" \
            'dev.larder.bench.ReadThroughBenchmark' -p cache="$c" -p size="$s" -t "$t" $RT_OPTS
        done; done
      done ;;
    memory)
      echo "== memory probe entries=$PROBE_ENTRIES values=$PROBE_VALUES"
      "$JAVA" -cp "$JAR" dev.larder.bench.MemoryProbe --caches "$(echo $CACHES | tr ' ' ',')" \
        --entries "$PROBE_ENTRIES" --value-sizes "$PROBE_VALUES" --out "$OUT/memory.json" ;;
    sidebyside)
      # The caches in one JVM, in slices of each in turn (SideBySideProbe): a round's ratio compares
      # them at one speed of the machine, which forks minutes apart do not.
      rows=$SBS_ROWS
      if [ -z "$rows" ]; then
        for t in $THREADS; do for s in $SIZES; do for op in get overwrite insert; do rows+="$op:$s:$t "; done; done; done
      fi
      for row in $rows; do
        IFS=: read -r op s t <<<"$row"
        [ "$t" = max ] && t=$(nproc)
        echo "== side by side $op size=$s threads=$t: $SBS_CACHES"
        # shellcheck disable=SC2086 # SBS_OPTS is a word list
        JAVA=$JAVA JAR=$JAR HEAP="$(heap_gib "$s")g" larder-bench/side-by-side.sh \
          --caches "$(echo $SBS_CACHES | tr ' ' ',')" --op "$op" --entries "$s" --value-bytes "$VALUE_BYTES" --threads "$t" \
          $SBS_OPTS --out "$OUT/sidebyside-$op-s$s-t$t.json" > "$OUT/logs/sidebyside-$op-s$s-t$t.log" 2>&1 \
          || echo "side by side $op size=$s threads=$t failed; see $OUT/logs/sidebyside-$op-s$s-t$t.log"
        grep -E ' / ' "$OUT/logs/sidebyside-$op-s$s-t$t.log" || true
      done ;;
    *) echo "unknown scenario: $sc" >&2; exit 2 ;;
  esac
done

# --compact drops JMH's raw samples from the JSON so the results are small enough to commit.
python3 larder-bench/report.py --compact --results "$OUT" --out "$DOC"
echo "wrote $DOC"
