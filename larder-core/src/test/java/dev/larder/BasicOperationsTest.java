package dev.larder;

import static org.assertj.core.api.Assertions.assertThat;

import dev.larder.internal.memory.NativeMemory;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class BasicOperationsTest {

    private static LarderCache<String, byte[]> cache(long bytes) {
        return Larder.newBuilder(Codecs.utf8(), Codecs.bytes())
                .maximumBytes(bytes)
                .build();
    }

    private static byte[] value(int i, int size) {
        byte[] v = new byte[size];
        for (int j = 0; j < size; j++) {
            v[j] = (byte) (i * 31 + j);
        }
        return v;
    }

    @Test
    void putGetOverwriteRemove() {
        try (var c = cache(8 << 20)) {
            assertThat(c.getIfPresent("a")).isNull();
            c.put("a", value(1, 10));
            assertThat(c.getIfPresent("a")).isEqualTo(value(1, 10));
            c.put("a", value(2, 300));
            assertThat(c.getIfPresent("a")).isEqualTo(value(2, 300));
            assertThat(c.size()).isEqualTo(1);
            assertThat(c.remove("a")).isTrue();
            assertThat(c.remove("a")).isFalse();
            assertThat(c.getIfPresent("a")).isNull();
            assertThat(c.size()).isZero();
        }
    }

    @Test
    void manyEntriesSurviveIndexGrowth() {
        try (var c = cache(64 << 20)) {
            for (int i = 0; i < 100_000; i++) {
                c.put("key-" + i, value(i, 32));
            }
            assertThat(c.size()).isEqualTo(100_000);
            for (int i = 0; i < 100_000; i++) {
                assertThat(c.getIfPresent("key-" + i)).as("key-" + i).isEqualTo(value(i, 32));
            }
            for (int i = 0; i < 100_000; i += 2) {
                assertThat(c.remove("key-" + i)).isTrue();
            }
            assertThat(c.size()).isEqualTo(50_000);
            for (int i = 0; i < 100_000; i++) {
                assertThat(c.containsKey("key-" + i)).isEqualTo(i % 2 == 1);
            }
        }
    }

    @Test
    void evictsWhenFullAndStaysWithinBudget() {
        AtomicInteger evicted = new AtomicInteger();
        try (var c = Larder.newBuilder(Codecs.utf8(), Codecs.bytes())
                .maximumBytes(1 << 20)
                .removalListener((k, v, cause) -> {
                    if (cause == RemovalCause.SIZE) evicted.incrementAndGet();
                })
                .executor(Runnable::run) // every notice delivered before the count is compared
                .build()) {
            for (int i = 0; i < 50_000; i++) {
                c.put("key-" + i, value(i, 200));
                assertThat(c.memoryUsed()).isLessThanOrEqualTo(1 << 20);
            }
            assertThat(evicted.get()).isGreaterThan(40_000);
            assertThat(c.size()).isEqualTo(50_000 - evicted.get());
            int present = 0;
            for (int i = 0; i < 50_000; i++) {
                byte[] v = c.getIfPresent("key-" + i);
                if (v != null) {
                    assertThat(v).isEqualTo(value(i, 200));
                    present++;
                }
            }
            assertThat(present).isEqualTo((int) c.size());
        }
    }

    @Test
    void maximumEntriesIsExact() {
        try (var c = Larder.newBuilder(Codecs.utf8(), Codecs.bytes())
                .maximumBytes(8 << 20)
                .maximumEntries(100)
                .build()) {
            for (int i = 0; i < 1000; i++) {
                c.put("key-" + i, value(i, 20));
                assertThat(c.size()).isLessThanOrEqualTo(100);
            }
            assertThat(c.size()).isEqualTo(100);
        }
    }

    @Test
    void largeValuesAndIteration() {
        long before = NativeMemory.outstandingBytes();
        try (var c = cache(64 << 20)) {
            Map<String, byte[]> expected = new HashMap<>();
            for (int i = 0; i < 20; i++) {
                byte[] v = value(i, 1 << 20);
                c.put("big-" + i, v);
                expected.put("big-" + i, v);
            }
            for (int i = 0; i < 200; i++) {
                byte[] v = value(i, 100);
                c.put("small-" + i, v);
                expected.put("small-" + i, v);
            }
            Map<String, byte[]> seen = new HashMap<>();
            for (Iterator<Map.Entry<String, byte[]>> it = c.entries(); it.hasNext(); ) {
                var e = it.next();
                seen.put(e.getKey(), e.getValue());
            }
            assertThat(seen).containsOnlyKeys(expected.keySet());
            expected.forEach((k, v) -> assertThat(seen.get(k)).isEqualTo(v));
            int length = c.read("big-3", seg -> (int) seg.byteSize());
            assertThat(length).isEqualTo(1 << 20);
        }
        assertThat(NativeMemory.outstandingBytes()).isEqualTo(before);
    }

    @Test
    void computeAndMerge() {
        try (var c = Larder.newBuilder(Codecs.utf8(), Codecs.utf8())
                .maximumBytes(1 << 20)
                .build()) {
            assertThat(c.merge("k", "a", String::concat)).isEqualTo("a");
            assertThat(c.merge("k", "b", String::concat)).isEqualTo("ab");
            assertThat(c.compute("k", (k, v) -> v + "c")).isEqualTo("abc");
            assertThat(c.computeIfAbsent("k", k -> "x")).isEqualTo("abc");
            assertThat(c.computeIfPresent("k", (k, v) -> null)).isNull();
            assertThat(c.getIfPresent("k")).isNull();
            assertThat(c.putIfAbsent("k", "1")).isTrue();
            assertThat(c.putIfAbsent("k", "2")).isFalse();
            assertThat(c.replace("k", "2", "3")).isFalse();
            assertThat(c.replace("k", "1", "3")).isTrue();
            assertThat(c.getAndPut("k", "4")).isEqualTo("3");
            assertThat(c.getAndRemove("k")).isEqualTo("4");
            assertThat(new String("x".getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8))
                    .isEqualTo("x");
        }
    }
}
