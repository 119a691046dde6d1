package dev.larder.bench;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * {@code InsertWhileReadingBenchmark} must measure what it says: the writer's keys are new to the
 * cache, so it evicts, and the reader's hot keys stay (nearly every read a hit).
 */
class InsertWhileReadingBenchmarkTest {
    private static final int SIZE = 10_000;

    @Test
    void theWriterInsertsNewKeysAndTheReaderHitsItsHotKeys() {
        InsertWhileReadingBenchmark bench = new InsertWhileReadingBenchmark();
        bench.cache = "larder";
        bench.size = SIZE;
        bench.valueSize = 256;
        bench.setUp();
        try {
            InsertWhileReadingBenchmark.Cursor writer = new InsertWhileReadingBenchmark.Cursor();
            InsertWhileReadingBenchmark.Cursor reader = new InsertWhileReadingBenchmark.Cursor();
            int hits = 0;
            int reads = 0;
            for (int i = 0; i < 3 * SIZE; i++) {
                String inserted = bench.insertKeys[writer.next];
                assertThat(bench.target.get(inserted))
                        .as("a new key: %s", inserted)
                        .isNull();
                bench.insert(writer);
                for (int r = 0; r < 4; r++, reads++) {
                    if (bench.get(reader) != null) {
                        hits++;
                    }
                }
            }
            assertThat(bench.hotKeys).hasSize(SIZE / 10);
            // Three times the cache's size inserted: the reader's keys stayed, the inserted ones
            // took the rest of the room. Not all of them: the hot keys are the fill's oldest, and
            // the first duels meet them before the reader's first reads of them are drained
            // (the sketch counts only once the cache is full), so a few percent are evicted at
            // the start and missed from then on. 0.952-0.975 in 30 runs (session 63); 0.949 once
            // in CI-like runs beside a CPU hog, where the drains came later.
            assertThat((double) hits / reads).isGreaterThan(0.9);
        } finally {
            bench.tearDown();
        }
    }
}
