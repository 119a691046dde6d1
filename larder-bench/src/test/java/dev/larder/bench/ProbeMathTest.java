package dev.larder.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ProbeMathTest {
    @Test
    void perEntryOverheadAndProjection() {
        double perEntry = ProbeMath.bytesPerEntry(100_000_000, 200_000_000, 1_000_000);
        assertThat(perEntry).isEqualTo(300.0);
        assertThat(ProbeMath.overheadPerEntry(perEntry, 16, 256)).isEqualTo(28.0);
        assertThat(ProbeMath.projectBytes(perEntry, 1_000_000_000L)).isEqualTo(3.0e11);
        assertThat(ProbeMath.bytesPerEntry(-5, 1000, 10)).isEqualTo(100.0); // GC noise below zero counts as 0
        assertThat(ProbeMath.bytesPerEntry(1, 1, 0)).isNaN();
    }

    @Test
    void readsRssFromProcStatus() {
        String status = "Name:\tjava\nVmPeak:\t 9000 kB\nVmRSS:\t  123456 kB\nRssAnon:\t 1 kB\n";
        assertThat(ProbeMath.rssBytes(status)).isEqualTo(123456L * 1024);
        assertThat(ProbeMath.rssBytes("Name: x\n")).isEqualTo(-1);
    }

    @Test
    void childHeapFitsOnHeapCaches() {
        long heap = ProbeMath.childHeapBytes(true, 1_000_000, 256);
        assertThat(heap).isGreaterThan(1_000_000L * 400).isEqualTo(heap & -(1L << 20));
        assertThat(ProbeMath.childHeapBytes(false, 1_000_000, 256)).isLessThan(heap);
    }

    @Test
    void parsesTheChildLine() {
        String line = Json.write(Map.of("cache", "ohc"))
                .replace("}", ", \"n\": 5, \"d\": 1.5, \"e\": 3.0E11, \"ok\": true, \"f\": [\"a\", \"b=c\"]}");
        Map<String, Object> m = MemoryProbe.parseFlatJson(line);
        assertThat(m).containsEntry("cache", "ohc").containsEntry("n", 5L).containsEntry("ok", true);
        assertThat((double) m.get("d")).isCloseTo(1.5, within(1e-9));
        assertThat((double) m.get("e")).isEqualTo(3.0e11);
        assertThat(m.get("f")).isEqualTo(List.of("a", "b=c"));
    }

    @Test
    void extraTimeIsWhatTheChunksTookBeyondTheLastChunksRate() {
        // 1,000 ops per chunk; the last at 100 ns each: 4 ms and 1 ms beyond that rate, and a
        // chunk faster than it counts as none.
        long[] nanos = {4_100_000, 1_100_000, 50_000, 100_000};
        int[] counts = {1_000, 1_000, 1_000, 1_000};
        assertThat(ProbeMath.extraSeconds(nanos, counts)).isCloseTo(0.005, within(1e-12));
    }
}
