package dev.larder.simulator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.larder.simulator.policy.PolicyType;
import dev.larder.simulator.synthetic.SyntheticWorkload;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class OptionsTest {
    private static final List<Workload> TRACES =
            List.of(fake("loop", 500, 1000), fake("corda", 512, 1024), fake("p2", 32768));
    private static final List<Workload> SYNTHETIC = List.of(fake("zipf-0.99", 1000, 10000), fake("uniform-2x", 1000));

    private static Workload fake(String name, Integer... sizes) {
        return new SyntheticWorkload(name, name, List.of(sizes), false, (size, n, seed) -> null);
    }

    private static List<String> names(List<Workload> workloads) {
        return workloads.stream().map(Workload::name).toList();
    }

    @Test
    void defaultsRunEverything() {
        Options o = Options.parse();
        assertThat(names(o.select(TRACES, SYNTHETIC)))
                .containsExactly("loop", "corda", "p2", "zipf-0.99", "uniform-2x");
        assertThat(o.policies()).containsExactly(PolicyType.values());
        assertThat(o.limit()).isEqualTo(Long.MAX_VALUE);
        assertThat(o.threads()).isEqualTo(1);
        assertThat(o.help()).isFalse();
    }

    @Test
    void selectsASubsetInCatalogOrder() {
        Options o = Options.parse("--traces", "p2,loop", "--policies=caffeine,lru");
        assertThat(names(o.select(TRACES, SYNTHETIC))).containsExactly("loop", "p2");
        // Columns keep the fixed order whatever the order on the command line.
        assertThat(o.policies()).containsExactly(PolicyType.LRU, PolicyType.CAFFEINE);
    }

    @Test
    void groupsAndSizes() {
        Options o = Options.parse("--traces", "synthetic,loop", "--sizes", "1000");
        List<Workload> chosen = o.select(TRACES, SYNTHETIC);
        assertThat(names(chosen)).containsExactly("loop", "zipf-0.99", "uniform-2x");
        assertThat(o.sizesOf(chosen.get(0))).containsExactly(1000);
        assertThat(o.sizesOf(chosen.get(1))).containsExactly(1000);
        assertThat(names(Options.parse("--traces", "traces").select(TRACES, SYNTHETIC)))
                .containsExactly("loop", "corda", "p2");
    }

    @Test
    void atSizesReplaceEachWorkloadsOwnSizes() {
        Options o = Options.parse("--traces", "loop,p2", "--at-sizes", "777,65536");
        for (Workload w : o.select(TRACES, SYNTHETIC)) {
            assertThat(w.sizes()).doesNotContain(777);
            assertThat(o.sizesOf(w)).containsExactly(777, 65536);
        }
        assertThatThrownBy(() -> Options.parse("--at-sizes", "0"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--at-sizes");
    }

    @Test
    void quickLimitsAndOtherFlags() {
        Options o = Options.parse(
                "--quick",
                "--trace-dir",
                "/t",
                "--out",
                "o",
                "--docs",
                "docs",
                "--window",
                "5_000",
                "--threads",
                "2",
                "--repeat",
                "3");
        assertThat(o.limit()).isEqualTo(Options.QUICK_LIMIT);
        assertThat(o.traceDir()).isEqualTo(Path.of("/t"));
        assertThat(o.resolveTraceDir(Path.of("/repo"))).isEqualTo(Path.of("/t"));
        assertThat(o.resolveOutDir(Path.of("/repo"))).isEqualTo(Path.of("/repo/o"));
        assertThat(o.resolveDocsDir(Path.of("/repo"))).isEqualTo(Path.of("/repo/docs"));
        assertThat(o.window()).isEqualTo(5_000);
        assertThat(o.threads()).isEqualTo(2);
        assertThat(o.repeat()).isEqualTo(3);
        assertThat(Options.parse().repeat()).isEqualTo(1);
        assertThat(Options.parse("--limit", "10", "--quick").limit()).isEqualTo(10);
        assertThat(Options.parse().resolveOutDir(Path.of("/repo"))).isEqualTo(Path.of("/repo/larder-simulator/target"));
    }

    @Test
    void defaultTraceDirIsBesideTheRepository() {
        if (System.getProperty("larder.traces") == null) {
            assertThat(Options.parse().resolveTraceDir(Path.of("/work/main")))
                    .isEqualTo(Path.of("/work/shared/traces"));
        }
    }

    @Test
    void badArgumentsSayWhy() {
        assertThatThrownBy(() -> Options.parse("--bogus", "1")).hasMessageContaining("unknown option --bogus");
        assertThatThrownBy(() -> Options.parse("--traces")).hasMessageContaining("needs a value");
        assertThatThrownBy(() -> Options.parse("--limit", "-3")).hasMessageContaining("positive");
        assertThatThrownBy(() -> Options.parse("--policies", "arc")).hasMessageContaining("unknown policy");
        assertThatThrownBy(() -> Options.parse("--traces", "nope").select(TRACES, SYNTHETIC))
                .hasMessageContaining("unknown trace 'nope'")
                .hasMessageContaining("loop, corda, p2");
    }
}
