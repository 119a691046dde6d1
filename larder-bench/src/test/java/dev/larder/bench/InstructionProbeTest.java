package dev.larder.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * {@code InstructionProbe}'s loops must make the calls they are counted for: every GET a hit of a
 * present key, every overwrite a put of a present key, every insert a key new to the cache.
 */
class InstructionProbeTest {
    private static final int ENTRIES = 5_000;

    private static InstructionProbe.Workload workload(boolean inserting) {
        String[] keys = Keys.keys(0, ENTRIES);
        return new InstructionProbe.Workload(
                keys,
                inserting ? Keys.keys(ENTRIES, GetPutBenchmark.insertPoolSize(ENTRIES)) : null,
                Keys.value(-1, 256));
    }

    private static BenchCache filled(InstructionProbe.Workload w) {
        BenchCache cache = Caches.create("larder", ENTRIES, 256);
        for (int i = 0; i < ENTRIES; i++) {
            cache.put(w.keys[i], Keys.value(i, 256));
        }
        return cache;
    }

    @Test
    void everyGetIsAHit() {
        InstructionProbe.Workload w = workload(false);
        try (BenchCache cache = filled(w)) {
            assertThat(InstructionProbe.gets(cache, w, 20_000)).isEqualTo(20_000L * 256);
        }
    }

    @Test
    void overwritesPutTheProbesValueUnderPresentKeys() {
        InstructionProbe.Workload w = workload(false);
        try (BenchCache cache = filled(w)) {
            InstructionProbe.overwrites(cache, w, 20_000);
            long overwritten = Arrays.stream(w.keys)
                    .filter(k -> Arrays.equals(cache.get(k), w.value))
                    .count();
            // 20,000 uniform draws over 5,000 keys miss e^-4 of them (~92 expected).
            assertThat(overwritten).isBetween(ENTRIES - 300L, ENTRIES - 1L);
        }
    }

    @Test
    void insertsPutKeysNewToTheCacheSoItEvicts() {
        InstructionProbe.Workload w = workload(true);
        try (BenchCache cache = filled(w)) {
            for (int i = 0; i < 1_000; i++) {
                String key = w.fresh[w.next];
                assertThat(cache.get(key)).as(key).isNull();
                InstructionProbe.inserts(cache, w, 1);
            }
            InstructionProbe.inserts(cache, w, 3L * ENTRIES);
            long original =
                    Arrays.stream(w.keys).filter(k -> cache.get(k) != null).count();
            assertThat(original).as("filled keys left after inserts").isLessThan(ENTRIES);
        }
    }

    @Test
    void thePerfMapIsWrittenBeforeTheMarks() throws IOException {
        assumeTrue(System.getProperty("os.name").startsWith("Linux"), "perf maps are a Linux format");
        Path map = Path.of("/tmp", "perf-" + ProcessHandle.current().pid() + ".map");
        Files.deleteIfExists(map);
        try {
            InstructionProbe.writePerfMap();
            // This JVM's compiled code, named: the map instructions.py resolves addresses with.
            assertThat(Files.readAllLines(map)).anyMatch(line -> line.matches("0x[0-9a-f]+ 0x[0-9a-f]+ .+"));
        } finally {
            Files.deleteIfExists(map);
        }
    }

    @Test
    void anUnknownOperationIsNamed() {
        assertThatThrownBy(() -> InstructionProbe.main(new String[] {"--op", "scan", "--entries", "10"}))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("scan");
    }
}
