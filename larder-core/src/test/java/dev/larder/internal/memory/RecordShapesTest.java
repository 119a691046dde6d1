package dev.larder.internal.memory;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

/** The shapes a cache learns: the first two, for good, the same answer for every thread. */
class RecordShapesTest {

    @Test
    void theFirstTwoShapesAreLearnedAndNoOther() {
        RecordShapes shapes = new RecordShapes();
        assertThat(shapes.shape(RecordLayout.FORMAT_SHAPE_0)).isZero();
        assertThat(shapes.formatFor(16, 32, false)).isEqualTo(RecordLayout.FORMAT_SHAPE_0);
        assertThat(shapes.formatFor(16, 33, false)).isEqualTo(RecordLayout.FORMAT_SHAPE_1);
        assertThat(shapes.formatFor(17, 32, false)).isEqualTo(RecordLayout.FORMAT_VARINT);
        assertThat(shapes.formatFor(16, 32, false)).isEqualTo(RecordLayout.FORMAT_SHAPE_0);
        assertThat(shapes.formatFor(16, 33, false)).isEqualTo(RecordLayout.FORMAT_SHAPE_1);
        assertThat(shapes.shape(RecordLayout.FORMAT_SHAPE_0)).isEqualTo(16L << 32 | 32);
        assertThat(shapes.shape(RecordLayout.FORMAT_SHAPE_1)).isEqualTo(16L << 32 | 33);
    }

    @Test
    void largeValuesAndBadLengthsAreNeverShaped() {
        RecordShapes shapes = new RecordShapes();
        assertThat(shapes.formatFor(16, 1 << 20, true)).isEqualTo(RecordLayout.FORMAT_VARINT);
        assertThat(shapes.formatFor(0, 10, false)).isEqualTo(RecordLayout.FORMAT_VARINT);
        assertThat(shapes.formatFor(8, -1, false)).isEqualTo(RecordLayout.FORMAT_VARINT);
        // None of them took a slot.
        assertThat(shapes.shape(RecordLayout.FORMAT_SHAPE_0)).isZero();
        assertThat(shapes.formatFor(8, 0, false)).isEqualTo(RecordLayout.FORMAT_SHAPE_0);
        assertThat(shapes.formatFor(65_535, Integer.MAX_VALUE, false)).isEqualTo(RecordLayout.FORMAT_SHAPE_1);
        assertThat(shapes.shape(RecordLayout.FORMAT_SHAPE_1)).isEqualTo(65_535L << 32 | Integer.MAX_VALUE);
    }

    /**
     * Threads race to learn shapes from an empty set: every thread gets the same format for the
     * same shape, at most two shapes are learned, and a learned format names its own shape.
     */
    @RepeatedTest(20)
    void racingThreadsAgreeOnEveryShape() throws Exception {
        RecordShapes shapes = new RecordShapes();
        int threads = 4;
        int kinds = 5;
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<int[]>> results = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int first = t;
                results.add(pool.submit(() -> {
                    start.await();
                    int[] formats = new int[kinds];
                    for (int round = 0; round < 1000; round++) {
                        for (int i = 0; i < kinds; i++) {
                            int kind = (first + i) % kinds; // each thread starts with another shape
                            int format = shapes.formatFor(8 + kind, 100, false);
                            if (round > 0 && formats[kind] != format) {
                                throw new AssertionError("shape " + kind + " changed format to " + format);
                            }
                            formats[kind] = format;
                        }
                    }
                    return formats;
                }));
            }
            start.countDown();
            int[] agreed = results.get(0).get();
            for (Future<int[]> f : results) {
                assertThat(f.get()).isEqualTo(agreed);
            }
            Map<Integer, Integer> kindsByFormat = new HashMap<>();
            for (int kind = 0; kind < kinds; kind++) {
                int format = agreed[kind];
                if (format != RecordLayout.FORMAT_VARINT) {
                    assertThat(kindsByFormat.put(format, kind))
                            .as("two shapes in format %d", format)
                            .isNull();
                    assertThat(shapes.shape(format)).isEqualTo((8L + kind) << 32 | 100);
                }
            }
            assertThat(kindsByFormat).hasSize(2);
        } finally {
            pool.shutdownNow();
        }
    }
}
