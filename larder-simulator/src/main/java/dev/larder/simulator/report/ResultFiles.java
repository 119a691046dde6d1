package dev.larder.simulator.report;

import dev.larder.simulator.Row;
import dev.larder.simulator.Run.Outcome;
import dev.larder.simulator.policy.PolicyType;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Writes the results for other tools: {@code hit-rates.json} (everything), {@code hit-rates.csv}
 * (one line per row and policy), {@code windows.csv} (hit rate per window of the phase-change
 * workloads) and {@code phases.csv} (where their phases start).
 */
public final class ResultFiles {
    private ResultFiles() {}

    public static final String HIT_RATES_CSV = "hit-rates.csv";
    public static final String WINDOWS_CSV = "windows.csv";
    public static final String PHASES_CSV = "phases.csv";
    public static final String JSON = "hit-rates.json";

    public static void write(Path dir, List<Row> rows, List<PolicyType> policies, Environment env) throws IOException {
        Files.writeString(dir.resolve(HIT_RATES_CSV), hitRatesCsv(rows, policies));
        Files.writeString(dir.resolve(WINDOWS_CSV), windowsCsv(rows, policies));
        Files.writeString(dir.resolve(PHASES_CSV), phasesCsv(rows));
        Files.writeString(dir.resolve(JSON), json(rows, policies, env));
    }

    static String hitRatesCsv(List<Row> rows, List<PolicyType> policies) {
        StringBuilder csv = new StringBuilder(
                "trace,kind,size,requests,policy,runs,hits,hit_rate,hit_rate_min,hit_rate_max,ns_per_request\n");
        for (Row row : rows) {
            for (PolicyType p : policies) {
                Outcome o = row.outcomes().get(p);
                csv.append(String.format(
                        Locale.ROOT,
                        "%s,%s,%d,%d,%s,%d,%.1f,%.6f,%.6f,%.6f,%.1f%n",
                        row.trace(),
                        row.kind(),
                        row.size(),
                        row.requests(),
                        p.id(),
                        o.runs(),
                        o.meanHits(),
                        o.hitRate(),
                        o.minHitRate(),
                        o.maxHitRate(),
                        o.nanosPerRequest()));
            }
        }
        return csv.toString();
    }

    static String windowsCsv(List<Row> rows, List<PolicyType> policies) {
        StringBuilder csv = new StringBuilder("trace,size,policy,window,start,end,hit_rate\n");
        for (Row row : rows) {
            if (!row.phaseChange()) {
                continue;
            }
            for (PolicyType p : policies) {
                Outcome o = row.outcomes().get(p);
                for (int w = 0; w < o.windowHits().length; w++) {
                    long start = (long) w * o.window();
                    long end = Math.min(o.requests(), start + o.window());
                    csv.append(String.format(
                            Locale.ROOT,
                            "%s,%d,%s,%d,%d,%d,%.6f%n",
                            row.trace(),
                            row.size(),
                            p.id(),
                            w,
                            start,
                            end,
                            o.windowHitRate(w)));
                }
            }
        }
        return csv.toString();
    }

    static String phasesCsv(List<Row> rows) {
        StringBuilder csv = new StringBuilder("trace,size,phase,start\n");
        for (Row row : rows) {
            if (row.phaseChange()) {
                for (int i = 0; i < row.phaseStarts().length; i++) {
                    csv.append(row.trace())
                            .append(',')
                            .append(row.size())
                            .append(',')
                            .append(i)
                            .append(',')
                            .append(row.phaseStarts()[i])
                            .append('\n');
                }
            }
        }
        return csv.toString();
    }

    static String json(List<Row> rows, List<PolicyType> policies, Environment env) {
        StringBuilder j = new StringBuilder("{\n");
        j.append("  \"date\": ").append(str(env.date())).append(",\n");
        j.append("  \"machine\": {\"cores\": ")
                .append(env.cores())
                .append(", \"cpu\": ")
                .append(str(env.cpu()))
                .append("},\n");
        j.append("  \"jdk\": ").append(str(env.jdk())).append(",\n");
        j.append("  \"command\": ").append(str(env.command())).append(",\n");
        j.append("  \"limit\": ")
                .append(env.limit() == Long.MAX_VALUE ? "null" : Long.toString(env.limit()))
                .append(",\n");
        j.append(String.format(Locale.ROOT, "  \"elapsedSeconds\": %.1f,%n", env.elapsedNanos() / 1e9));
        j.append("  \"policies\": [");
        for (int i = 0; i < policies.size(); i++) {
            j.append(i > 0 ? ", " : "").append(str(policies.get(i).id()));
        }
        j.append("],\n  \"rows\": [\n");
        for (int r = 0; r < rows.size(); r++) {
            Row row = rows.get(r);
            j.append("    {\"trace\": ").append(str(row.trace()));
            j.append(", \"kind\": ").append(str(row.kind()));
            j.append(", \"size\": ").append(row.size());
            j.append(", \"requests\": ").append(row.requests());
            j.append(", \"phaseChange\": ").append(row.phaseChange());
            j.append(", \"results\": {");
            for (int i = 0; i < policies.size(); i++) {
                Outcome o = row.outcomes().get(policies.get(i));
                j.append(i > 0 ? ", " : "").append(str(policies.get(i).id()));
                j.append(String.format(
                        Locale.ROOT,
                        ": {\"runs\": %d, \"hits\": %.1f, \"hitRate\": %.6f, \"hitRateMin\": %.6f,"
                                + " \"hitRateMax\": %.6f, \"nsPerRequest\": %.1f}",
                        o.runs(),
                        o.meanHits(),
                        o.hitRate(),
                        o.minHitRate(),
                        o.maxHitRate(),
                        o.nanosPerRequest()));
            }
            j.append("}}").append(r + 1 < rows.size() ? "," : "").append('\n');
        }
        j.append("  ],\n  \"mean\": {");
        for (int i = 0; i < policies.size(); i++) {
            j.append(i > 0 ? ", " : "")
                    .append(str(policies.get(i).id()))
                    .append(String.format(Locale.ROOT, ": %.6f", Table.mean(rows, policies.get(i)) / 100));
        }
        j.append("}\n}\n");
        return j.toString();
    }

    private static String str(String s) {
        StringBuilder q = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> q.append("\\\"");
                case '\\' -> q.append("\\\\");
                case '\n' -> q.append("\\n");
                default -> {
                    if (c < 0x20) {
                        q.append(String.format("\\u%04x", (int) c));
                    } else {
                        q.append(c);
                    }
                }
            }
        }
        return q.append('"').toString();
    }
}
