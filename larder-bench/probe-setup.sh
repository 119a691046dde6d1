# Sourced by the scripts that run a probe under a tool (instructions.sh, stalls.sh), from the
# repository root, after their settings. probe_setup NAME TOOL checks that TOOL is installed and
# that JAR was built, makes JAR absolute, sets JAVA (java.sh) and WORK: KEEP if set, else a
# temporary directory removed when the script exits.
probe_setup() {
  local name=$1 tool=$2
  command -v "$tool" >/dev/null || { echo "$name: $tool is not installed" >&2; exit 2; }
  [[ -f "$JAR" ]] || { echo "$name: no $JAR; build it: ./mvnw -q -pl larder-bench -am -DskipTests package" >&2; exit 2; }
  JAR=$(realpath "$JAR")
  source larder-bench/java.sh # JAVA: the JDK 25 the Maven wrapper finds
  WORK=${KEEP:-$(mktemp -d)}
  mkdir -p "$WORK"
  [[ -n "$KEEP" ]] || trap 'rm -rf "$WORK"' EXIT
}
