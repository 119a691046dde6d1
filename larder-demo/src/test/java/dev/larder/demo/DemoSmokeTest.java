package dev.larder.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Runs the demo's measurement in-process on a small size for both caches. */
class DemoSmokeTest {
    private static final int ENTRIES = 20_000;

    @Test
    void measuresBothCachesSanely() {
        Settings settings = Settings.of(ENTRIES, 500, 2);
        PrintStream quiet = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);

        Result larder = Measurement.run(CacheKind.LARDER, settings, quiet);
        Result caffeine = Measurement.run(CacheKind.CAFFEINE, settings, quiet);

        for (Result r : new Result[] {larder, caffeine}) {
            assertThat(r.entries()).isEqualTo(ENTRIES);
            assertThat(r.held()).as("%s holds every filled entry", r.cache()).isEqualTo(ENTRIES);
            assertThat(r.reads()).isPositive();
            assertThat(r.writes()).isPositive();
            assertThat(r.hitRate()).isGreaterThan(0.0).isLessThanOrEqualTo(1.0);
            assertThat(r.badValues())
                    .as("%s returned another entry's bytes", r.cache())
                    .isZero();
            assertThat(r.opsPerSecond()).isPositive();
            assertThat(r.gcCount()).isNotNegative();
            assertThat(r.bytesPerEntry()).isPositive();
            // Travels between JVMs as one line of text.
            assertThat(Result.parse(r.toLine())).isEqualTo(r);
        }
        assertThat(larder.nativeBytes())
                .as("Larder keeps the entries off-heap")
                .isGreaterThanOrEqualTo((long) ENTRIES * settings.valueBytes());
        assertThat(caffeine.nativeBytes()).isZero();
        // Caffeine keeps ~20,000 x (256-byte array + key + node) on the heap: several MiB.
        assertThat(caffeine.heapGrowthBytes()).isGreaterThan((long) ENTRIES * settings.valueBytes());
        assertThat(larder.heapGrowthBytes())
                .as("Larder's heap growth is well below Caffeine's")
                .isLessThan(caffeine.heapGrowthBytes() / 4);

        Map<CacheKind, Demo.Outcome> outcomes = new LinkedHashMap<>();
        outcomes.put(CacheKind.LARDER, new Demo.Outcome(larder, null));
        outcomes.put(CacheKind.CAFFEINE, new Demo.Outcome(caffeine, null));
        ByteArrayOutputStream table = new ByteArrayOutputStream();
        Demo.printTable(new PrintStream(table, true, StandardCharsets.UTF_8), outcomes);
        assertThat(table.toString(StandardCharsets.UTF_8))
                .contains("Larder", "Caffeine", "Hit rate", "Bytes per entry", "GC pause time");
    }
}
