package dev.larder.simulator.report;

import dev.larder.simulator.policy.PolicyType;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Turns the simulator's CSV files into plain SVG charts, with no plotting library:
 *
 * <ul>
 *   <li>{@code hit-rates-trace.svg} and {@code hit-rates-synthetic.svg}: horizontal grouped bars,
 *       one group per {@code trace@size}, one bar per policy (from {@code hit-rates.csv});
 *   <li>{@code windows-<trace>-<size>.svg}: hit rate per window over time, one line per policy,
 *       phase starts dashed (from {@code windows.csv} and {@code phases.csv}).
 * </ul>
 *
 * Standalone: {@code Charts [--in larder-simulator/target] [--out <in>/img]}.
 */
public final class Charts {
    private Charts() {}

    private static final Map<String, String> COLORS = Map.of(
            "lru", "#4e79a7",
            "caffeine", "#f28e2b",
            "larder", "#59a14f",
            "belady", "#8c8c8c");
    private static final String[] PALETTE = {"#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f"};
    private static final String FONT = "font-family=\"Helvetica,Arial,sans-serif\"";

    public static void main(String[] args) throws IOException {
        Path in = Path.of("larder-simulator/target");
        Path out = null;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--in" -> in = Path.of(args[i + 1]);
                case "--out" -> out = Path.of(args[i + 1]);
                default -> throw new IllegalArgumentException("usage: Charts [--in DIR] [--out DIR]");
            }
        }
        List<Path> written = write(in, out != null ? out : in.resolve("img"));
        written.forEach(p -> System.out.println("wrote " + p));
    }

    /** The bar chart's file name for rows of that kind ({@code trace} or {@code synthetic}). */
    public static String barFile(String kind) {
        return "hit-rates-" + kind + ".svg";
    }

    /** The windowed chart's file name for {@code trace@size}. */
    public static String windowFile(String trace, int size) {
        return "windows-" + trace.replaceAll("[^A-Za-z0-9._-]", "_") + "-" + size + ".svg";
    }

    /** Reads the CSVs in {@code in} and writes the charts to {@code out}; returns the files written. */
    public static List<Path> write(Path in, Path out) throws IOException {
        Files.createDirectories(out);
        List<Path> written = new ArrayList<>();
        List<String[]> hitRates =
                readCsv(in.resolve(ResultFiles.HIT_RATES_CSV), "trace", "kind", "size", "policy", "hit_rate");
        for (String kind : List.of("trace", "synthetic")) {
            List<String[]> ofKind =
                    hitRates.stream().filter(r -> r[1].equals(kind)).toList();
            if (!ofKind.isEmpty()) {
                Path file = out.resolve(barFile(kind));
                Files.writeString(file, barChart(kind.equals("trace") ? "Traces" : "Synthetic workloads", ofKind));
                written.add(file);
            }
        }
        Path windowsCsv = in.resolve(ResultFiles.WINDOWS_CSV);
        if (Files.exists(windowsCsv)) {
            List<String[]> windows = readCsv(windowsCsv, "trace", "size", "policy", "start", "end", "hit_rate");
            List<String[]> phases = Files.exists(in.resolve(ResultFiles.PHASES_CSV))
                    ? readCsv(in.resolve(ResultFiles.PHASES_CSV), "trace", "size", "start")
                    : List.of();
            Map<String, List<String[]>> byRow = new LinkedHashMap<>();
            for (String[] w : windows) {
                byRow.computeIfAbsent(w[0] + "@" + w[1], k -> new ArrayList<>()).add(w);
            }
            for (var e : byRow.entrySet()) {
                String trace = e.getValue().get(0)[0];
                int size = Integer.parseInt(e.getValue().get(0)[1]);
                List<Long> starts = phases.stream()
                        .filter(p -> p[0].equals(trace) && p[1].equals(Integer.toString(size)))
                        .map(p -> Long.parseLong(p[2]))
                        .filter(s -> s > 0)
                        .toList();
                Path file = out.resolve(windowFile(trace, size));
                Files.writeString(file, lineChart(e.getKey(), e.getValue(), starts));
                written.add(file);
            }
        }
        return written;
    }

    /**
     * Rows of a CSV file without its header line, their fields reordered as {@code columns}, so
     * that a file with more or reordered columns still reads. Fails if a column is missing.
     */
    static List<String[]> readCsv(Path file, String... columns) throws IOException {
        List<String> lines = Files.readAllLines(file);
        if (lines.isEmpty()) {
            throw new IOException(file + " is empty");
        }
        List<String> header = List.of(lines.get(0).split(",", -1));
        int[] index = new int[columns.length];
        for (int c = 0; c < columns.length; c++) {
            index[c] = header.indexOf(columns[c]);
            if (index[c] < 0) {
                throw new IOException(file + " has no column " + columns[c]);
            }
        }
        List<String[]> rows = new ArrayList<>();
        for (int i = 1; i < lines.size(); i++) {
            if (!lines.get(i).isBlank()) {
                String[] fields = lines.get(i).split(",", -1);
                String[] row = new String[columns.length];
                for (int c = 0; c < columns.length; c++) {
                    row[c] = fields[index[c]];
                }
                rows.add(row);
            }
        }
        return rows;
    }

    /** Grouped horizontal bars from hit-rates.csv rows as (trace, kind, size, policy, hit_rate). */
    static String barChart(String title, List<String[]> csv) {
        Map<String, Map<String, Double>> rows = new LinkedHashMap<>();
        List<String> policies = new ArrayList<>();
        for (String[] r : csv) {
            rows.computeIfAbsent(r[0] + "@" + r[2], k -> new LinkedHashMap<>())
                    .put(r[3], 100 * Double.parseDouble(r[4]));
            if (!policies.contains(r[3])) {
                policies.add(r[3]);
            }
        }
        int left = 160;
        int plotWidth = 620;
        int top = 62;
        int bar = 6;
        int rowHeight = policies.size() * bar + 8;
        int height = top + rows.size() * rowHeight + 36;
        int width = left + plotWidth + 56;
        StringBuilder svg = header(width, height);
        svg.append(text(left, 20, 15, "start", "bold", title + ": hit rate (%) per trace@size and policy"));
        legend(svg, policies, left, 40);
        int bottom = top + rows.size() * rowHeight;
        int index = 0;
        for (var row : rows.entrySet()) {
            int y = top + index * rowHeight;
            if (index % 2 == 0) {
                svg.append(String.format(
                        Locale.ROOT,
                        "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#f3f3f3\"/>%n",
                        8,
                        y,
                        left + plotWidth - 8,
                        rowHeight));
            }
            svg.append(text(left - 6, y + rowHeight / 2 + 4, 11, "end", "normal", row.getKey()));
            int p = 0;
            for (String policy : policies) {
                Double rate = row.getValue().get(policy);
                if (rate != null) {
                    double w = plotWidth * Math.max(0, Math.min(100, rate)) / 100;
                    svg.append(String.format(
                            Locale.ROOT,
                            "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>%s %s: %.2f%%</title></rect>%n",
                            left,
                            y + 4 + p * bar,
                            w,
                            bar - 1,
                            color(policy, policies),
                            escape(row.getKey()),
                            escape(label(policy)),
                            rate));
                }
                p++;
            }
            index++;
        }
        for (int pct = 0; pct <= 100; pct += 10) {
            double x = left + plotWidth * pct / 100.0;
            svg.append(String.format(
                    Locale.ROOT,
                    "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#bbb\" stroke-width=\"0.5\"/>%n",
                    x,
                    top,
                    x,
                    bottom));
            svg.append(text((int) x, bottom + 16, 11, "middle", "normal", pct + "%"));
        }
        return svg.append("</svg>\n").toString();
    }

    /** One line per policy from windows.csv rows as (trace, size, policy, start, end, hit_rate). */
    static String lineChart(String label, List<String[]> csv, List<Long> phaseStarts) {
        Map<String, List<double[]>> series = new LinkedHashMap<>();
        long maxEnd = 1;
        long window = 0;
        for (String[] r : csv) {
            long start = Long.parseLong(r[3]);
            long end = Long.parseLong(r[4]);
            window = Math.max(window, end - start);
            maxEnd = Math.max(maxEnd, end);
            series.computeIfAbsent(r[2], k -> new ArrayList<>())
                    .add(new double[] {(start + end) / 2.0, 100 * Double.parseDouble(r[5])});
        }
        List<String> policies = new ArrayList<>(series.keySet());
        int left = 56;
        int top = 56;
        int plotWidth = 700;
        int plotHeight = 260;
        int width = left + plotWidth + 24;
        int height = top + plotHeight + 44;
        StringBuilder svg = header(width, height);
        svg.append(text(
                left,
                20,
                15,
                "start",
                "bold",
                String.format(Locale.ROOT, "%s: hit rate (%%) per window of %,d requests", label, window)));
        legend(svg, policies, left, 36);
        for (int pct = 0; pct <= 100; pct += 20) {
            double y = top + plotHeight - plotHeight * pct / 100.0;
            svg.append(String.format(
                    Locale.ROOT,
                    "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ccc\" stroke-width=\"0.5\"/>%n",
                    left,
                    y,
                    left + plotWidth,
                    y));
            svg.append(text(left - 6, (int) y + 4, 11, "end", "normal", pct + "%"));
        }
        long step = niceStep(maxEnd, 8);
        for (long x = 0; x <= maxEnd; x += step) {
            double px = left + plotWidth * (double) x / maxEnd;
            svg.append(String.format(
                    Locale.ROOT,
                    "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ccc\" stroke-width=\"0.5\"/>%n",
                    px,
                    top,
                    px,
                    top + plotHeight));
            svg.append(text((int) px, top + plotHeight + 16, 11, "middle", "normal", count(x)));
        }
        svg.append(text(left + plotWidth / 2, top + plotHeight + 34, 11, "middle", "normal", "requests"));
        for (long s : phaseStarts) {
            double px = left + plotWidth * (double) s / maxEnd;
            svg.append(String.format(
                    Locale.ROOT,
                    "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#444\" stroke-dasharray=\"4 3\"/>%n",
                    px,
                    top,
                    px,
                    top + plotHeight));
        }
        svg.append(String.format(
                Locale.ROOT,
                "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#888\"/>%n",
                left,
                top,
                plotWidth,
                plotHeight));
        // The bound first, wide and pale, so that a policy that matches it stays visible on top.
        List<String> drawOrder = new ArrayList<>(policies);
        if (drawOrder.remove("belady")) {
            drawOrder.addFirst("belady");
        }
        for (String policy : drawOrder) {
            StringBuilder points = new StringBuilder();
            for (double[] p : series.get(policy)) {
                double px = left + plotWidth * p[0] / maxEnd;
                double py = top + plotHeight - plotHeight * Math.max(0, Math.min(100, p[1])) / 100;
                points.append(String.format(Locale.ROOT, "%.1f,%.1f ", px, py));
            }
            svg.append(String.format(
                    Locale.ROOT,
                    "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%s\" points=\"%s\"><title>%s</title></polyline>%n",
                    color(policy, policies),
                    policy.equals("belady") ? "3.5\" stroke-opacity=\"0.5" : "1.6",
                    points.toString().trim(),
                    escape(label(policy))));
        }
        return svg.append("</svg>\n").toString();
    }

    /** A round tick step (1, 2 or 5 times a power of ten) giving about {@code ticks} ticks. */
    static long niceStep(long range, int ticks) {
        double raw = Math.max(1, (double) range / ticks);
        double magnitude = Math.pow(10, Math.floor(Math.log10(raw)));
        double[] multiples = {1, 2, 5, 10};
        for (double m : multiples) {
            if (m * magnitude >= raw) {
                return Math.max(1, (long) (m * magnitude));
            }
        }
        return Math.max(1, (long) (10 * magnitude));
    }

    private static String count(long x) {
        if (x == 0) {
            return "0";
        }
        if (x % 1_000_000 == 0) {
            return x / 1_000_000 + "M";
        }
        if (x >= 1_000_000) {
            return String.format(Locale.ROOT, "%.1fM", x / 1e6);
        }
        if (x % 1_000 == 0) {
            return x / 1_000 + "K";
        }
        return Long.toString(x);
    }

    private static StringBuilder header(int width, int height) {
        StringBuilder svg = new StringBuilder();
        svg.append(String.format(
                Locale.ROOT,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">%n",
                width,
                height,
                width,
                height));
        svg.append(String.format(
                Locale.ROOT, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"white\"/>%n", width, height));
        return svg;
    }

    private static void legend(StringBuilder svg, List<String> policies, int x, int y) {
        for (String policy : policies) {
            svg.append(String.format(
                    Locale.ROOT,
                    "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>%n",
                    x,
                    y - 10,
                    color(policy, policies)));
            String label = label(policy);
            svg.append(text(x + 16, y, 12, "start", "normal", label));
            x += 30 + 8 * label.length();
        }
    }

    private static String text(int x, int y, int size, String anchor, String weight, String content) {
        return String.format(
                Locale.ROOT,
                "<text x=\"%d\" y=\"%d\" %s font-size=\"%d\" font-weight=\"%s\" text-anchor=\"%s\">%s</text>%n",
                x,
                y,
                FONT,
                size,
                weight,
                anchor,
                escape(content));
    }

    /** The policy's display name ({@code Caffeine} for {@code caffeine}), or the id itself. */
    private static String label(String policy) {
        try {
            return PolicyType.of(policy).label();
        } catch (IllegalArgumentException e) {
            return policy;
        }
    }

    private static String color(String policy, List<String> policies) {
        String c = COLORS.get(policy);
        return c != null ? c : PALETTE[Math.floorMod(policies.indexOf(policy), PALETTE.length)];
    }

    private static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
