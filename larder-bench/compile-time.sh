#!/usr/bin/env bash
# How long the JIT's C2 compiler works on a cache's code while it warms up: runs WarmUpProbe
# (one cache, from a fresh JVM) under a flight recording of every compilation and sums C2's time,
# in all and on the cache's own packages, with the methods it compiled most. On a shared machine a
# sum of compile times moves less than the inserts' speed in the same seconds, which the compiler
# decides on a 2-core machine (docs/speed-work.md, forty-sixth session): a change that means to
# shorten the warm-up (fewer uncommon traps, smaller compile units) shows here first.
#
#   larder-bench/compile-time.sh                             # Larder, 10K entries, 4 s of inserts
#   ENTRIES=1000000 RUNS=3 TOP=15 larder-bench/compile-time.sh
#   CACHE=ohc PACKAGE=org.caffinitas.ohc larder-bench/compile-time.sh
#
# Prints, per run: the probe's row (ns per insert per 250 ms slice), C2's total ms and its ms on
# PACKAGE, then (TOP > 0) the methods by C2 ms on PACKAGE with how many times each was compiled.
set -euo pipefail

: "${CACHE:=larder}"
: "${ENTRIES:=10000}"
: "${SLICES:=16}"                 # 250 ms each
: "${RUNS:=1}"
: "${TOP:=10}"
: "${PACKAGE:=dev.larder.internal}"  # whose compiles are summed apart (a peer's: e.g. org.caffinitas.ohc)
: "${JAR:=larder-bench/target/benchmarks.jar}"
: "${HEAP:=4g}"

cd "$(dirname "$0")/.."
[[ -f "$JAR" ]] || { echo "compile-time.sh: no $JAR; build it: ./mvnw -q -pl larder-bench -am -DskipTests package" >&2; exit 2; }
JAR=$(realpath "$JAR")
source larder-bench/java.sh # JAVA: the JDK 25 the Maven wrapper finds
JFR_TOOL="$(dirname "$JAVA")/jfr"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
# The cache's own JVM flags (a peer may need some), as every harness fork gets them.
read -r -a FLAGS <<<"$("$JAVA" -cp "$JAR" dev.larder.bench.Peer "$CACHE")"

for run in $(seq "$RUNS"); do
    "$JAVA" "${FLAGS[@]}" "-Xms$HEAP" "-Xmx$HEAP" \
        "-XX:StartFlightRecording:filename=$WORK/run.jfr,jdk.Compilation#enabled=true,jdk.Compilation#threshold=0ms" \
        -cp "$JAR" dev.larder.bench.WarmUpProbe --cache "$CACHE" --entries "$ENTRIES" --caches 1 \
        --slices "$SLICES" --slice-ms 250 2>/dev/null | grep 'ns/insert'
    "$JFR_TOOL" print --json --events jdk.Compilation "$WORK/run.jfr" >"$WORK/run.json"
    python3 - "$WORK/run.json" "$PACKAGE" "$TOP" "$run" <<'EOF'
import json, re, sys
from collections import defaultdict

path, package, top, run = sys.argv[1], sys.argv[2].replace(".", "/"), int(sys.argv[3]), sys.argv[4]
events = json.load(open(path))["recording"]["events"]

def millis(iso):  # an ISO-8601 duration such as PT0.058716S
    m = re.fullmatch(r"PT(?:(\d+)M)?([\d.]+)S", iso)
    return (int(m.group(1) or 0) * 60 + float(m.group(2))) * 1000 if m else 0.0

total = mine = 0.0
by_method = defaultdict(lambda: [0, 0.0])
for e in events:
    v = e["values"]
    if v.get("compiler") != "c2":
        continue
    ms = millis(v["duration"])
    total += ms
    owner = v["method"]["type"]["name"]
    if owner.startswith(package):
        mine += ms
        entry = by_method[owner.replace("/", ".") + "." + v["method"]["name"]]
        entry[0] += 1
        entry[1] += ms
print(f"run {run}: C2 {total:.0f} ms in all, {mine:.0f} ms on {package.replace('/', '.')}")
for name, (count, ms) in sorted(by_method.items(), key=lambda kv: -kv[1][1])[:top]:
    print(f"  {ms:7.0f} ms  {count:2d}x  {name}")
EOF
done
