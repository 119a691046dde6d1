package dev.larder;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The counters against a scripted single-threaded sequence. */
class StatsTest {
    private final FakeTicker ticker = new FakeTicker();
    private final RecordingListener<String, String> listener = new RecordingListener<>();
    private LarderCache<String, String> cache;

    @AfterEach
    void close() {
        if (cache != null) {
            cache.close();
        }
    }

    private LarderCache<String, String> cache(long maximumEntries) {
        cache = Larder.newBuilder(Codecs.utf8(), Codecs.utf8())
                .maximumBytes(LarderBuilder.MIN_MAXIMUM_BYTES * 4)
                .maximumEntries(maximumEntries)
                .ticker(ticker)
                .removalListener(listener)
                .build();
        return cache;
    }

    @Test
    void countersMatchAScriptedSequence() {
        LarderCache<String, String> c = cache(10);
        CacheStats empty = c.stats();
        assertThat(empty)
                .isEqualTo(new CacheStats(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, empty.memoryUsedBytes(), c.memoryMax()));

        c.put("a", "A");
        c.put("b", "B");
        c.put("c", "C"); // puts 3
        c.getIfPresent("a");
        c.getIfPresent("b"); // hits 2
        c.getIfPresent("x"); // misses 1
        assertThat(c.getAll(List.of("a", "x", "y"))).containsOnlyKeys("a"); // hits 3, misses 3 (totals)
        c.containsKey("a");
        c.containsKey("x"); // not lookups
        c.put("a", "A2"); // puts 4, REPLACED 1
        assertThat(c.replace("b", "B2")).isTrue(); // puts 5, REPLACED 2
        assertThat(c.replace("x", "X")).isFalse();
        assertThat(c.replace("c", "wrong", "C2")).isFalse();
        assertThat(c.replace("c", "C", "C2")).isTrue(); // puts 6, REPLACED 3
        assertThat(c.putIfAbsent("a", "no")).isFalse();
        assertThat(c.putIfAbsent("d", "D")).isTrue(); // puts 7
        assertThat(c.remove("c")).isTrue(); // removals 1
        assertThat(c.remove("x")).isFalse();
        assertThat(c.remove("d", "wrong")).isFalse();
        assertThat(c.remove("d", "D")).isTrue(); // removals 2
        c.compute("e", (k, v) -> "E"); // puts 8
        c.compute("e", (k, v) -> null); // removals 3
        c.merge("f", "F", String::concat); // puts 9
        assertThat(c.merge("f", "G", String::concat)).isEqualTo("FG"); // puts 10, REPLACED 4
        assertThat(c.getAndPut("g", "G")).isNull(); // puts 11
        assertThat(c.getAndRemove("g")).isEqualTo("G"); // removals 4
        c.put("h", "H", Duration.ofSeconds(1)); // puts 12
        ticker.advance(Duration.ofMillis(1_001));
        assertThat(c.getIfPresent("h")).isNull(); // misses 4, expirations 1
        listener.await(n -> n.cause() == RemovalCause.EXPIRED, 1, c::cleanUp);
        assertThatThrownBy(() -> c.put("big", "x".repeat(1 << 20)))
                .isInstanceOf(EntryTooLargeException.class); // rejected 1
        assertThat(c.size()).isEqualTo(3); // a, b, f
        c.clear(); // removals 7

        CacheStats s = c.stats();
        assertThat(s.hitCount()).as("hits").isEqualTo(3);
        assertThat(s.missCount()).as("misses").isEqualTo(4);
        assertThat(s.requestCount()).isEqualTo(7);
        assertThat(s.hitRate()).isEqualTo(3 / 7.0);
        assertThat(s.putCount()).as("puts").isEqualTo(12);
        assertThat(s.removalCount()).as("removals").isEqualTo(7);
        assertThat(s.expirationCount()).as("expirations").isEqualTo(1);
        assertThat(s.evictionCount()).as("evictions").isZero();
        assertThat(s.rejectedPutCount()).as("rejected puts").isEqualTo(1);
        assertThat(s.loadSuccessCount()).isZero();
        assertThat(s.loadFailureCount()).isZero();
        assertThat(s.size()).isZero();
        assertThat(s.memoryMaxBytes()).isEqualTo(c.memoryMax());
        assertThat(listener.count(RemovalCause.EXPLICIT)).isEqualTo(s.removalCount());
        assertThat(listener.count(RemovalCause.REPLACED)).isEqualTo(4);
        assertThat(listener.count(RemovalCause.EXPIRED)).isEqualTo(s.expirationCount());

        // Size eviction: 15 new keys into at most 10 entries.
        for (int i = 0; i < 15; i++) {
            c.put("e" + i, "v" + i);
        }
        c.cleanUp();
        s = c.stats();
        assertThat(c.size()).isLessThanOrEqualTo(10);
        assertThat(s.size()).isEqualTo(c.size());
        assertThat(s.putCount()).isEqualTo(27);
        assertThat(s.evictionCount()).as("evictions").isEqualTo(15 - c.size());
        listener.await(n -> n.cause() == RemovalCause.SIZE, (int) s.evictionCount(), () -> {});
        assertThat(listener.count(RemovalCause.SIZE)).isEqualTo(s.evictionCount());
        assertThat(s.evictionCountAllCauses()).isEqualTo(s.evictionCount() + 1);
        assertThat(s.hitCount()).isEqualTo(3);
        assertThat(s.memoryUsedBytes()).isPositive().isLessThanOrEqualTo(s.memoryMaxBytes());
    }

    @Test
    void zeroCopyReadsAndMapViewReadsAreLookups() {
        LarderCache<String, String> c = cache(100);
        c.put("a", "A");
        c.read("a", TestCodecs::utf8);
        c.read("x", TestCodecs::utf8);
        c.asMap().get("a");
        c.asMap().get("x");
        CacheStats s = c.stats();
        assertThat(s.hitCount()).isEqualTo(2);
        assertThat(s.missCount()).isEqualTo(2);
    }

    @Test
    void getWithLoaderCountsAMissAndALoadOrAHit() {
        LarderCache<String, String> c = cache(100);
        c.get("a", k -> "A");
        c.get("a", k -> "not called");
        c.get("n", k -> null);
        CacheStats s = c.stats();
        assertThat(s.hitCount()).isEqualTo(1);
        assertThat(s.missCount()).isEqualTo(2);
        assertThat(s.loadSuccessCount()).isEqualTo(1);
        assertThat(s.loadFailureCount()).isEqualTo(1);
        assertThat(s.putCount()).isEqualTo(1);
    }

    @Test
    void putAllCountsEveryEntry() {
        LarderCache<String, String> c = cache(100);
        c.putAll(Map.of("a", "1", "b", "2", "c", "3"));
        assertThat(c.stats().putCount()).isEqualTo(3);
    }

    @Test
    void snapshotsDoNotChangeAfterwards() {
        LarderCache<String, String> c = cache(100);
        c.put("a", "A");
        CacheStats before = c.stats();
        c.getIfPresent("a");
        c.put("b", "B");
        assertThat(before.hitCount()).isZero();
        assertThat(before.putCount()).isEqualTo(1);
        assertThat(before.size()).isEqualTo(1);
        assertThat(c.stats().hitCount()).isEqualTo(1);
    }

    @Test
    void derivedValues() {
        CacheStats none = new CacheStats(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
        assertThat(none.hitRate()).isEqualTo(1.0);
        assertThat(none.averageLoadPenaltyNanos()).isZero();
        CacheStats some = new CacheStats(3, 1, 0, 0, 2, 5, 0, 0, 3, 1, 800, 0, 0, 0);
        assertThat(some.requestCount()).isEqualTo(4);
        assertThat(some.hitRate()).isEqualTo(0.75);
        assertThat(some.evictionCountAllCauses()).isEqualTo(7);
        assertThat(some.averageLoadPenaltyNanos()).isEqualTo(200.0);
    }
}
