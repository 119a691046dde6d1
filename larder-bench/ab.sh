#!/usr/bin/env bash
# Paired A/B forks: is B faster than A, on a machine whose speed drifts by minutes?
#
#   A=/tmp/before.jar B=/tmp/after.jar BENCH='GetPutBenchmark.putInsert$' \
#     PARAMS='-p cache=larder -p size=10000' larder-bench/ab.sh
#   A=jar B=jar B_FLAGS='-Dlarder.sketchScale=0.5' BENCH=... larder-bench/ab.sh   # one jar, two settings
#
# Runs PAIRS pairs of single JMH forks, A then B, then B then A (ABBA), so that each pair's two
# forks run seconds apart and a drift of the machine moves both. Prints each pair's
# means and their ratio B/A, then the median ratio with a 90% bootstrap interval of it. Only an
# interval that excludes 1.00 is a difference; on the 2-core guest this was written on, the
# ratio of a pair spreads by ~10% and ten pairs resolve ~3% (docs/speed-work.md, thirty-fourth
# session). A jar is a benchmarks.jar copied out of larder-bench/target after a build of the
# commit it stands for.
#
# With PLACEMENT=1 (the default) each fork is bracketed by CoreDistanceProbe, which prints what a
# line costs to move between two threads' cores: a guest whose host moves its vCPUs between near
# and distant cores runs every shared-line benchmark at one of two speeds, and a pair whose forks
# ran in different placements compares the placements, not the jars. The summary then repeats the
# median over the pairs whose four readings are within 2x of each other (one placement), when
# there are three or more. The probe comes from PROBE_JAR (a jar that has it; "-" if not). The
# forks' means and the slowest fork of each jar are printed too: a change that only shortens slow
# spells moves those and not the median.
set -euo pipefail

: "${A:?A: the first benchmarks.jar}"
: "${B:?B: the second benchmarks.jar (the same jar with other B_FLAGS is fine)}"
: "${BENCH:?BENCH: a JMH benchmark regex, e.g. GetPutBenchmark.putInsert\$}"
: "${PARAMS:=-p cache=larder}"                  # JMH -p parameters, passed as they are
: "${THREADS:=1}"
: "${PAIRS:=10}"
: "${FORK_OPTS:=-wi 2 -w 1s -i 3 -r 1s}"        # warm-up and measurement of each single fork
: "${JVM_FLAGS:=-Xms4g -Xmx4g -XX:+AlwaysPreTouch --enable-native-access=ALL-UNNAMED}"
: "${A_FLAGS:=}"
: "${B_FLAGS:=}"
: "${PLACEMENT:=1}"
: "${PROBE_JAR:=larder-bench/target/benchmarks.jar}"

for jar in "$A" "$B"; do
    [[ -f "$jar" ]] || { echo "ab.sh: no such jar: $jar" >&2; exit 2; }
done
A=$(realpath "$A")
B=$(realpath "$B")
cd "$(dirname "$0")/.."
source larder-bench/java.sh # JAVA: the JDK 25 the Maven wrapper finds

# One fork of the benchmark; prints the mean of its measured iterations (ns/op in avgt).
fork() {
    local jar=$1 flags=$2 out
    # shellcheck disable=SC2086 # PARAMS, FORK_OPTS and the flags are word lists on purpose
    out=$("$JAVA" -jar "$jar" "$BENCH" $PARAMS -bm avgt -f 1 $FORK_OPTS -t "$THREADS" \
        -jvmArgsAppend "$JVM_FLAGS $flags" 2>&1) || { echo "$out" >&2; echo "ab.sh: the fork failed" >&2; exit 1; }
    awk '/^Iteration/ {s += $3; n++} END {if (n == 0) exit 1; printf "%.1f", s / n}' <<<"$out" \
        || { echo "$out" >&2; echo "ab.sh: no iterations measured (does BENCH match one benchmark?)" >&2; exit 1; }
}

# Nanoseconds per line crossing between two threads' cores now (CoreDistanceProbe), or "-".
distance() {
    if [[ "$PLACEMENT" == 1 ]]; then
        "$JAVA" -cp "$PROBE_JAR" dev.larder.bench.CoreDistanceProbe 2>/dev/null || echo "-"
    else
        echo "-"
    fi
}

# A fork bracketed by distance readings: sets the globals ns and placement ("before/after").
bracketed() {
    local d1 d2
    d1=$(distance)
    ns=$(fork "$1" "$2")
    d2=$(distance)
    placement="$d1/$d2"
}

ratios=()
means=()
placements=()
echo "pair  A ns/op  B ns/op  B/A    crossing ns before/after: A, B"
for ((i = 1; i <= PAIRS; i++)); do
    if ((i % 2)); then
        bracketed "$A" "$A_FLAGS"; a=$ns; pa=$placement
        bracketed "$B" "$B_FLAGS"; b=$ns; pb=$placement
    else
        bracketed "$B" "$B_FLAGS"; b=$ns; pb=$placement
        bracketed "$A" "$A_FLAGS"; a=$ns; pa=$placement
    fi
    r=$(python3 -c "print(f'{$b / $a:.3f}')")
    ratios+=("$r")
    means+=("$a/$b")
    placements+=("$pa/$pb")
    printf '%4d %8s %8s  %s  %s, %s\n' "$i" "$a" "$b" "$r" "$pa" "$pb"
done

python3 - "${ratios[@]}" -- "${means[@]}" -- "${placements[@]}" <<'EOF2'
import random, statistics, sys
cut = sys.argv.index("--")
cut2 = sys.argv.index("--", cut + 1)
r = [float(x) for x in sys.argv[1:cut]]
forks = [tuple(float(v) for v in x.split("/")) for x in sys.argv[cut + 1:cut2]]
places = sys.argv[cut2 + 1:]


def summary(label, ratios):
    rng = random.Random(1)  # a fixed seed: the same ratios always print the same interval
    meds = sorted(statistics.median(rng.choices(ratios, k=len(ratios))) for _ in range(4000))
    lo, hi = meds[int(0.05 * len(meds))], meds[int(0.95 * len(meds)) - 1]
    m = statistics.median(ratios)
    verdict = "B faster" if hi < 1 else "B slower" if lo > 1 else "no difference resolved"
    if len(ratios) < 3:
        verdict = "too few pairs for a verdict"  # a bootstrap of one or two ratios is no interval
    print(f"{label}median B/A {m:.3f}  90% interval [{lo:.3f}, {hi:.3f}]  ({len(ratios)} pairs): {verdict}")


def one_placement(readings):
    try:
        d = [float(x) for x in readings.split("/")]
    except ValueError:
        return False  # no probe
    return min(d) > 0 and max(d) <= 2 * min(d)


summary("", r)
# The median follows the typical fork; a change that only shortens slow spells shows in these.
a_ns, b_ns = [f[0] for f in forks], [f[1] for f in forks]
print(f"mean of the forks A {statistics.mean(a_ns):.1f}, B {statistics.mean(b_ns):.1f} ns/op;"
      f" slowest fork A {max(a_ns):.1f}, B {max(b_ns):.1f}")
same = [x for x, p in zip(r, places) if one_placement(p)]
if len(same) >= 3 and len(same) < len(r):
    summary("pairs in one placement: ", same)
EOF2
