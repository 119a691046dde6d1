package dev.larder.simulator.report;

import static org.assertj.core.api.Assertions.assertThat;

import dev.larder.simulator.Options;
import dev.larder.simulator.Row;
import dev.larder.simulator.Simulator;
import dev.larder.simulator.Workload;
import dev.larder.simulator.policy.PolicyType;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.zip.GZIPOutputStream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SimulatorEndToEndTest {
    @TempDir
    Path dir;

    private void trace(String name, int requests, int distinct, long base) throws IOException {
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < requests; i++) {
            text.append(base + (i % distinct)).append('\n');
        }
        try (OutputStream out =
                new GZIPOutputStream(Files.newOutputStream(dir.resolve("traces/" + name + ".keys.gz")))) {
            out.write(text.toString().getBytes(StandardCharsets.US_ASCII));
        }
    }

    @Test
    void runsASubsetAndWritesTablesFilesAndCharts() throws Exception {
        Files.createDirectories(dir.resolve("traces"));
        trace("loop", 5_000, 1_011, 0);
        trace("corda", 3_000, 2_000, 1L << 50);
        Options options = Options.parse(
                "--trace-dir", dir.resolve("traces").toString(),
                "--out", dir.resolve("out").toString(),
                "--docs", dir.resolve("docs").toString(),
                "--traces", "loop,corda-loop-corda,zipf-0.99",
                "--sizes", "500,512,1000",
                "--limit", "20000",
                "--window", "1000",
                "--repeat", "2");
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        PrintStream stdout = new PrintStream(console, true, StandardCharsets.UTF_8);
        Simulator simulator = new Simulator(options, stdout, new PrintStream(OutputStream.nullOutputStream()));
        List<Workload> workloads = simulator.workloads(dir);
        assertThat(workloads).extracting(Workload::name).containsExactly("loop", "zipf-0.99", "corda-loop-corda");
        List<Row> rows = simulator.run(workloads);
        assertThat(rows)
                .extracting(Row::label)
                .containsExactly("loop@500", "loop@1000", "zipf-0.99@1000", "corda-loop-corda@512");
        assertThat(rows.get(0).percent(PolicyType.LRU)).isZero();
        assertThat(rows.get(3).phaseStarts()).containsExactly(0, 3_000, 8_000);
        simulator.report(dir, rows, new String[] {"--quick"}, 1_000_000_000L);

        String table = console.toString(StandardCharsets.UTF_8);
        assertThat(table).contains("trace@size", "Larder-Caffeine", "loop@500", "mean (4 rows)");
        Path out = dir.resolve("out");
        assertThat(Files.readString(out.resolve("hit-rates.json")))
                .contains("\"trace\": \"loop\"", "\"mean\"", "\"belady\"");
        List<String> csv = Files.readAllLines(out.resolve("hit-rates.csv"));
        assertThat(csv).hasSize(1 + 4 * 4);
        assertThat(csv.get(0)).contains("runs", "hit_rate");
        assertThat(csv).anyMatch(line -> line.startsWith("loop,trace,500,5000,caffeine,2,"));
        assertThat(csv).anyMatch(line -> line.startsWith("loop,trace,500,5000,lru,1,"));
        // 11 windows of 1,000 requests per policy for corda-loop-corda@512.
        assertThat(Files.readAllLines(out.resolve("windows.csv"))).hasSize(1 + 4 * 11);
        String md = Files.readString(dir.resolve("docs/hit-rates.md"));
        assertThat(md)
                .contains(
                        "| Machine |",
                        "| JDK |",
                        "| Command |",
                        "**mean**",
                        "img/windows-corda-loop-corda-512.svg",
                        "Caffeine: each value is the mean of 2 runs");
        for (String svg :
                List.of("hit-rates-trace.svg", "hit-rates-synthetic.svg", "windows-corda-loop-corda-512.svg")) {
            Path file = dir.resolve("docs/img").resolve(svg);
            assertThat(file).exists();
            // Well-formed XML.
            DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(file.toFile());
        }
    }

    @Test
    void niceTickSteps() {
        assertThat(Charts.niceStep(2_000_000, 8)).isEqualTo(500_000);
        assertThat(Charts.niceStep(776_904, 8)).isEqualTo(100_000);
        assertThat(Charts.niceStep(5, 8)).isEqualTo(1);
    }
}
