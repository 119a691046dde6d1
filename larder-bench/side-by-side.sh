#!/usr/bin/env bash
# Caches measured side by side in one JVM, in alternating slices (dev.larder.bench.SideBySideProbe;
# its javadoc says why and what the options are):
#
#   larder-bench/side-by-side.sh --caches larder,ohc --op insert --entries 100000 --threads 2
#
# The JVM gets every cache's flags (Peer --all) and a pre-touched heap of HEAP (6g; an insert pool
# at 1M entries is 16M keys, ~1 GB), and FLAGS after them (e.g. a -D switch of an experiment, to
# compare runs with and without it by their ratios to the same peer).
set -euo pipefail

: "${JAR:=larder-bench/target/benchmarks.jar}"
: "${HEAP:=6g}"
: "${FLAGS:=}"

cd "$(dirname "$0")/.."
[[ -f "$JAR" ]] || { echo "side-by-side.sh: no $JAR; build it: ./mvnw -q -pl larder-bench -am -DskipTests package" >&2; exit 2; }
source larder-bench/java.sh # JAVA: the JDK 25 the Maven wrapper finds
# shellcheck disable=SC2046,SC2086 # the flags are word lists
exec "$JAVA" "-Xms$HEAP" "-Xmx$HEAP" -XX:+AlwaysPreTouch $("$JAVA" -cp "$JAR" dev.larder.bench.Peer --all) $FLAGS \
    -cp "$JAR" dev.larder.bench.SideBySideProbe "$@"
