package dev.larder.simulator.report;

import dev.larder.simulator.Row;
import dev.larder.simulator.policy.PolicyType;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/** The results as a fixed-width table for the console and as the Markdown report. */
public final class Table {
    private Table() {}

    /** Rows where Larder is at least this many points below Caffeine are listed in the report. */
    static final double FAR_BELOW = 5.0;

    private static boolean hasDelta(List<PolicyType> policies) {
        return policies.contains(PolicyType.LARDER) && policies.contains(PolicyType.CAFFEINE);
    }

    /** Larder minus Caffeine in points. */
    static double delta(Row row) {
        return row.percent(PolicyType.LARDER) - row.percent(PolicyType.CAFFEINE);
    }

    /** The mean hit rate (percent) of {@code policy} over {@code rows}, each row weighing the same. */
    public static double mean(List<Row> rows, PolicyType policy) {
        return rows.stream().mapToDouble(r -> r.percent(policy)).average().orElse(Double.NaN);
    }

    /**
     * A paragraph on the policies that are not deterministic: how many runs each row averages and
     * the widest spread between runs.
     */
    static String variability(List<Row> rows, List<PolicyType> policies) {
        StringBuilder sb = new StringBuilder();
        for (PolicyType p : policies) {
            if (p.deterministic() || rows.isEmpty()) {
                continue;
            }
            int runs = rows.stream()
                    .mapToInt(r -> r.outcomes().get(p).runs())
                    .max()
                    .orElse(1);
            Row widest = rows.stream()
                    .max(Comparator.comparingDouble(r -> spread(r, p)))
                    .orElseThrow();
            sb.append("- ");
            if (runs == 1) {
                sb.append(p.label()).append(": one run per value.");
            } else if (spread(widest, p) == 0) {
                sb.append(String.format(
                        Locale.ROOT,
                        "%s: each value is the mean of %d runs, which were identical in every row.",
                        p.label(),
                        runs));
            } else {
                sb.append(String.format(
                        Locale.ROOT,
                        "%s: each value is the mean of %d runs; the widest spread between runs was %.2f points (%s).",
                        p.label(),
                        runs,
                        spread(widest, p),
                        widest.label()));
            }
            if (p == PolicyType.CAFFEINE) {
                sb.append(" Caffeine is not deterministic: its admission lets a warm candidate in at random"
                        + " (`ThreadLocalRandom`, about 1 in 128) to resist hash flooding, so a row can move by a"
                        + " point or two between runs.");
            }
            if (p == PolicyType.LARDER) {
                sb.append(" Larder's runs differ because each cache draws a random hash seed, which decides"
                        + " where keys collide in the frequency sketch; for a given seed a replay is"
                        + " deterministic.");
            }
            sb.append('\n');
        }
        return sb.isEmpty() ? "" : sb.append('\n').toString();
    }

    private static double spread(Row row, PolicyType p) {
        var o = row.outcomes().get(p);
        return 100 * (o.maxHitRate() - o.minHitRate());
    }

    /** One line per {@code trace@size}, a column per policy, then Larder-Caffeine, then the mean. */
    public static String fixedWidth(List<Row> rows, List<PolicyType> policies) {
        boolean delta = hasDelta(policies);
        StringBuilder sb = new StringBuilder();
        StringBuilder header = new StringBuilder(String.format(Locale.ROOT, "%-24s %12s", "trace@size", "requests"));
        for (PolicyType p : policies) {
            header.append(String.format(Locale.ROOT, " %9s", p.label()));
        }
        if (delta) {
            header.append(String.format(Locale.ROOT, " %16s", "Larder-Caffeine"));
        }
        String rule = "-".repeat(header.length());
        sb.append(header).append('\n').append(rule).append('\n');
        for (Row row : rows) {
            sb.append(String.format(Locale.ROOT, "%-24s %,12d", row.label(), row.requests()));
            for (PolicyType p : policies) {
                sb.append(String.format(Locale.ROOT, " %9.2f", row.percent(p)));
            }
            if (delta) {
                sb.append(String.format(Locale.ROOT, " %+16.2f", delta(row)));
            }
            sb.append('\n');
        }
        sb.append(rule).append('\n');
        sb.append(String.format(Locale.ROOT, "%-24s %12s", "mean (" + rows.size() + " rows)", ""));
        for (PolicyType p : policies) {
            sb.append(String.format(Locale.ROOT, " %9.2f", mean(rows, p)));
        }
        if (delta) {
            sb.append(String.format(
                    Locale.ROOT, " %+16.2f", mean(rows, PolicyType.LARDER) - mean(rows, PolicyType.CAFFEINE)));
        }
        sb.append('\n');
        return sb.toString();
    }

    /** The Markdown report: how it was made, the table, the rows far below Caffeine, the charts. */
    public static String markdownReport(List<Row> rows, List<PolicyType> policies, Environment env, String imgDir) {
        boolean delta = hasDelta(policies);
        StringBuilder md = new StringBuilder();
        md.append("# Hit rates\n\n");
        md.append("Generated by `larder-simulator` (`dev.larder.simulator.Simulator`); do not edit by hand.\n\n");
        md.append("| | |\n|---|---|\n");
        md.append("| Date | ").append(env.date()).append(" |\n");
        md.append("| Machine | ")
                .append(env.cores())
                .append(" cores (nproc), ")
                .append(env.cpu())
                .append(" |\n");
        md.append("| JDK | ").append(env.jdk()).append(" |\n");
        md.append("| Command | `").append(env.command()).append("` |\n");
        md.append("| Requests | ")
                .append(
                        env.limit() == Long.MAX_VALUE
                                ? "all of each workload"
                                : String.format(Locale.ROOT, "the first %,d of each workload", env.limit()))
                .append(" |\n");
        md.append(String.format(Locale.ROOT, "| Run time | %.1f min |%n%n", env.elapsedNanos() / 60e9));
        md.append("Hit rate = hits / requests, in percent, from a cold cache with compulsory misses included;"
                + " every miss inserts the key (read-through). Policies: LRU (`LinkedHashMap` in access order),"
                + " Caffeine (`maximumSize(n)`, maintenance on the calling thread), Larder (the real off-heap"
                + " cache through its public API, `maximumEntries(n)`, maintenance on the calling thread), Bélády (the clairvoyant optimum, an"
                + " upper bound for every policy, admission included).");
        if (delta) {
            md.append(" The last column is Larder minus Caffeine in points.");
        }
        md.append(" Synthetic workloads are described in `../shared/traces/README.md` and"
                + " `SyntheticWorkloads`.\n\n");
        md.append(variability(rows, policies));
        md.append("| trace@size | requests |");
        for (PolicyType p : policies) {
            md.append(' ').append(p.label()).append(" |");
        }
        if (delta) {
            md.append(" Larder − Caffeine |");
        }
        md.append("\n|---|---:|");
        md.append("---:|".repeat(policies.size() + (delta ? 1 : 0)));
        md.append('\n');
        for (Row row : rows) {
            md.append("| ").append(row.label()).append(String.format(Locale.ROOT, " | %,d |", row.requests()));
            for (PolicyType p : policies) {
                md.append(String.format(Locale.ROOT, " %.2f |", row.percent(p)));
            }
            if (delta) {
                md.append(String.format(Locale.ROOT, " %+.2f |", delta(row)));
            }
            md.append('\n');
        }
        md.append("| **mean** (").append(rows.size()).append(" rows) | |");
        for (PolicyType p : policies) {
            md.append(String.format(Locale.ROOT, " **%.2f** |", mean(rows, p)));
        }
        if (delta) {
            md.append(String.format(
                    Locale.ROOT, " **%+.2f** |", mean(rows, PolicyType.LARDER) - mean(rows, PolicyType.CAFFEINE)));
        }
        md.append("\n\n");
        if (delta) {
            List<Row> far = new ArrayList<>(
                    rows.stream().filter(r -> delta(r) <= -FAR_BELOW).toList());
            far.sort(Comparator.comparingDouble(Table::delta));
            md.append(String.format(
                    Locale.ROOT, "## Rows where Larder is %.0f or more points below Caffeine%n%n", FAR_BELOW));
            if (far.isEmpty()) {
                md.append("None.\n\n");
            } else {
                for (Row r : far) {
                    md.append(String.format(
                            Locale.ROOT,
                            "- %s: Larder %.2f, Caffeine %.2f (%+.2f points)%s%n",
                            r.label(),
                            r.percent(PolicyType.LARDER),
                            r.percent(PolicyType.CAFFEINE),
                            delta(r),
                            policies.contains(PolicyType.LRU)
                                    ? String.format(Locale.ROOT, "; LRU %.2f", r.percent(PolicyType.LRU))
                                    : ""));
                }
                md.append('\n');
            }
        }
        md.append("## Charts\n\n");
        for (String kind : List.of("trace", "synthetic")) {
            if (rows.stream().anyMatch(r -> r.kind().equals(kind))) {
                String file = Charts.barFile(kind);
                md.append("![Hit rate per ")
                        .append(kind)
                        .append(" and size](")
                        .append(imgDir)
                        .append('/');
                md.append(file).append(")\n\n");
            }
        }
        List<Row> phased = rows.stream().filter(Row::phaseChange).toList();
        if (!phased.isEmpty()) {
            md.append("### Hit rate over time, phase-change workloads\n\n");
            md.append("Hit rate per window of requests; dashed lines mark where a phase starts.\n\n");
            for (Row r : phased) {
                md.append("![")
                        .append(r.label())
                        .append("](")
                        .append(imgDir)
                        .append('/')
                        .append(Charts.windowFile(r.trace(), r.size()))
                        .append(")\n\n");
            }
        }
        return md.toString();
    }
}
