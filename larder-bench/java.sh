# Sourced by larder-bench's scripts from the repository root: sets JAVA, unless the caller set
# it, to the java of the JDK 25 the Maven wrapper finds (LARDER_JAVA_HOME, JAVA_HOME, then the
# usual places), so that every script runs the JDK the build used.
: "${JAVA:=$(./mvnw -B --version | sed -n 's/^Java version:.*runtime: //p')/bin/java}"
