package dev.larder.simulator.report;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;

/**
 * Where and how a run happened, for the top of the report: date, machine, JDK, the command that
 * reproduces it.
 */
public record Environment(
        String date, int cores, String cpu, String jdk, String command, long limit, long elapsedNanos) {

    /** The Maven command that runs the simulator from the repository root. */
    public static final String MAVEN_COMMAND = "./mvnw -q -pl larder-simulator -am -DskipTests -Dsimulate verify";

    private static final String MAVEN_PREFIX = "./mvnw -q -pl larder-simulator -am -DskipTests -Dsimulate";

    public static Environment capture(String[] args, long limit, long elapsedNanos) {
        String date =
                ZonedDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss 'UTC'"));
        String jdk = Runtime.version() + " (" + System.getProperty("java.vm.name") + ", "
                + System.getProperty("java.vendor") + ")";
        return new Environment(
                date, Runtime.getRuntime().availableProcessors(), cpuModel(), jdk, command(args), limit, elapsedNanos);
    }

    /** The command line that reproduces this run. */
    static String command(String[] args) {
        String joined = String.join(" ", args).trim();
        if ("maven".equals(System.getProperty("larder.launcher"))) {
            return joined.isEmpty() ? MAVEN_COMMAND : MAVEN_PREFIX + " -Dsimulate.args=\"" + joined + "\" verify";
        }
        return "java -cp <classpath> dev.larder.simulator.Simulator" + (joined.isEmpty() ? "" : " " + joined);
    }

    /** The CPU model from {@code /proc/cpuinfo}, or the OS architecture where there is none. */
    static String cpuModel() {
        Path cpuinfo = Path.of("/proc/cpuinfo");
        try {
            if (Files.isReadable(cpuinfo)) {
                for (String line : Files.readAllLines(cpuinfo)) {
                    if (line.startsWith("model name")) {
                        int colon = line.indexOf(':');
                        if (colon > 0) {
                            return line.substring(colon + 1).trim();
                        }
                    }
                }
            }
        } catch (IOException e) {
            // fall through
        }
        return System.getProperty("os.arch");
    }
}
