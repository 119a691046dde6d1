package dev.larder;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Expiry with a {@link FakeTicker}. Reads never land exactly on a deadline. */
class ExpiryTest {
    private final FakeTicker ticker = new FakeTicker();
    private final RecordingListener<String, String> listener = new RecordingListener<>();
    private final List<LarderCache<?, ?>> open = new ArrayList<>();

    @AfterEach
    void close() {
        open.forEach(LarderCache::close);
    }

    private LarderCache<String, String> build(LarderBuilder<String, String> builder) {
        LarderCache<String, String> cache =
                builder.ticker(ticker).removalListener(listener).build();
        open.add(cache);
        return cache;
    }

    private static LarderBuilder<String, String> builder() {
        return Larder.newBuilder(Codecs.utf8(), Codecs.utf8()).maximumBytes(1L << 20);
    }

    private void advance(long millis) {
        ticker.advance(Duration.ofMillis(millis));
    }

    /** Checks every read path says {@code key} is absent. */
    private static void assertGone(LarderCache<String, String> cache, String key) {
        assertThat(cache.getIfPresent(key)).as("getIfPresent(%s)", key).isNull();
        assertThat(cache.containsKey(key)).as("containsKey(%s)", key).isFalse();
        assertThat((String) cache.read(key, TestCodecs::utf8))
                .as("read(%s)", key)
                .isNull();
        assertThat(cache.getAll(List.of(key))).as("getAll(%s)", key).isEmpty();
        assertThat(cache.asMap().get(key)).as("asMap().get(%s)", key).isNull();
        assertThat(cache.asMap().containsKey(key))
                .as("asMap().containsKey(%s)", key)
                .isFalse();
        assertThat(entries(cache)).as("entries()").doesNotContainKey(key);
        List<String> keys = new ArrayList<>();
        cache.keys().forEachRemaining(keys::add);
        assertThat(keys).as("keys()").doesNotContain(key);
    }

    private static Map<String, String> entries(LarderCache<String, String> cache) {
        Map<String, String> all = new HashMap<>();
        for (Iterator<Map.Entry<String, String>> it = cache.entries(); it.hasNext(); ) {
            Map.Entry<String, String> e = it.next();
            all.put(e.getKey(), e.getValue());
        }
        return all;
    }

    @Test
    void expireAfterWrite() {
        LarderCache<String, String> cache = build(builder().expireAfterWrite(Duration.ofSeconds(10)));
        cache.put("a", "A");
        advance(9_999);
        assertThat(cache.getIfPresent("a")).isEqualTo("A");
        advance(2);
        assertGone(cache, "a");
        assertThat(cache.stats().hitCount()).isEqualTo(1);
    }

    @Test
    void expireAfterWriteIsRestartedByWritesNotByReads() {
        LarderCache<String, String> cache = build(builder().expireAfterWrite(Duration.ofSeconds(10)));
        cache.put("written", "1");
        cache.put("read", "1");
        advance(6_000);
        cache.put("written", "2");
        assertThat(cache.getIfPresent("read")).isEqualTo("1");
        advance(4_001); // 10.001 s after the first writes, 4.001 s after the rewrite
        assertThat(cache.getIfPresent("written")).isEqualTo("2");
        assertGone(cache, "read");
        advance(6_000);
        assertGone(cache, "written");
    }

    @Test
    void expireAfterWriteIsRestartedByEveryKindOfWrite() {
        LarderCache<String, String> cache = build(builder().expireAfterWrite(Duration.ofSeconds(10)));
        for (String k : List.of("replace", "replaceExpected", "compute", "computeIfPresent", "merge", "getAndPut")) {
            cache.put(k, "old");
        }
        advance(8_000);
        cache.replace("replace", "new");
        cache.replace("replaceExpected", "old", "new");
        cache.compute("compute", (k, v) -> "new");
        cache.computeIfPresent("computeIfPresent", (k, v) -> "new");
        cache.merge("merge", "x", (a, b) -> "new");
        cache.getAndPut("getAndPut", "new");
        advance(8_000);
        for (String k : List.of("replace", "replaceExpected", "compute", "computeIfPresent", "merge", "getAndPut")) {
            assertThat(cache.getIfPresent(k)).as("%s 8 s after it wrote", k).isEqualTo("new");
        }
    }

    @Test
    void expireAfterAccessIsExtendedByReads() {
        LarderCache<String, String> cache = build(builder().expireAfterAccess(Duration.ofSeconds(10)));
        cache.put("get", "A");
        cache.put("read", "B");
        cache.put("idle", "C");
        for (int i = 0; i < 4; i++) {
            advance(6_000);
            assertThat(cache.getIfPresent("get"))
                    .as("read at %d s", 6 * (i + 1))
                    .isEqualTo("A");
            assertThat((String) cache.read("read", TestCodecs::utf8)).isEqualTo("B");
        }
        assertGone(cache, "idle");
        advance(10_001);
        assertGone(cache, "get");
        assertGone(cache, "read");
    }

    @Test
    void expireAfterAccessIsExtendedByWrites() {
        LarderCache<String, String> cache = build(builder().expireAfterAccess(Duration.ofSeconds(10)));
        cache.put("a", "1");
        advance(7_000);
        cache.put("a", "2");
        advance(7_000);
        assertThat(cache.getIfPresent("a")).isEqualTo("2");
        advance(10_001);
        assertGone(cache, "a");
    }

    @Test
    void perEntryTimeToLiveOverridesTheCacheExpiry() {
        LarderCache<String, String> cache = build(builder().expireAfterWrite(Duration.ofSeconds(10)));
        cache.put("short", "S", Duration.ofSeconds(2));
        cache.put("long", "L", Duration.ofHours(1));
        cache.put("default", "D");
        advance(2_001);
        assertGone(cache, "short");
        assertThat(cache.getIfPresent("default")).isEqualTo("D");
        advance(8_000);
        assertGone(cache, "default");
        assertThat(cache.getIfPresent("long"))
                .as("own TTL longer than the cache's")
                .isEqualTo("L");
        advance(3_600_000);
        assertGone(cache, "long");
    }

    @Test
    void perEntryTimeToLiveWithoutCacheExpiry() {
        LarderCache<String, String> cache = build(builder());
        cache.put("ttl", "T", Duration.ofMillis(500));
        cache.put("forever", "F");
        advance(499);
        assertThat(cache.getIfPresent("ttl")).isEqualTo("T");
        advance(2);
        assertGone(cache, "ttl");
        advance(365L * 24 * 3600 * 1000);
        assertThat(cache.getIfPresent("forever")).isEqualTo("F");
    }

    @Test
    void plainPutAfterAnOwnTtlGoesBackToTheCacheExpiry() {
        LarderCache<String, String> cache = build(builder().expireAfterWrite(Duration.ofSeconds(10)));
        cache.put("k", "1", Duration.ofSeconds(1));
        cache.put("k", "2");
        advance(5_000);
        assertThat(cache.getIfPresent("k")).isEqualTo("2");
        cache.put("k", "3", Duration.ofSeconds(1));
        advance(1_001);
        assertGone(cache, "k");
    }

    @Test
    void expiredEntriesBehaveAsAbsentForEveryOperation() {
        LarderCache<String, String> cache = build(builder().expireAfterWrite(Duration.ofSeconds(1)));
        for (String k : List.of("pia", "rep", "repx", "cip", "cia", "cmp", "mrg", "gap", "rm", "rmx", "gar")) {
            cache.put(k, "old");
        }
        advance(1_001);
        assertThat(cache.putIfAbsent("pia", "new")).isTrue();
        assertThat(cache.replace("rep", "new")).isFalse();
        assertThat(cache.replace("repx", "old", "new")).isFalse();
        assertThat(cache.computeIfPresent("cip", (k, v) -> {
                    throw new AssertionError("called for an expired entry");
                }))
                .isNull();
        assertThat(cache.computeIfAbsent("cia", k -> "new")).isEqualTo("new");
        assertThat(cache.compute("cmp", (k, v) -> v == null ? "was absent" : "saw " + v))
                .isEqualTo("was absent");
        assertThat(cache.merge("mrg", "given", (a, b) -> a + b)).isEqualTo("given");
        assertThat(cache.getAndPut("gap", "new")).isNull();
        assertThat(cache.remove("rm")).isFalse();
        assertThat(cache.remove("rmx", "old")).isFalse();
        assertThat(cache.getAndRemove("gar")).isNull();
        assertThat(cache.get("gar", k -> "loaded")).isEqualTo("loaded");
        assertThat(cache.getIfPresent("pia")).isEqualTo("new");
        for (String k : List.of("rep", "repx", "cip", "rm", "rmx")) {
            assertGone(cache, k);
        }
        assertThat(cache.asMap().putIfAbsent("rep", "x")).isNull();
    }

    @Test
    void expiredEntriesAreReportedOnceWhenCleanUpRuns() {
        LarderCache<String, String> cache = build(builder().expireAfterWrite(Duration.ofSeconds(1)));
        cache.put("a", "A");
        cache.put("b", "B");
        cache.put("c", "C", Duration.ofMinutes(1));
        advance(1_001);
        cache.cleanUp();
        listener.await(n -> n.cause() == RemovalCause.EXPIRED, 2, cache::cleanUp);
        cache.cleanUp();
        cache.cleanUp();
        assertThat(listener.notices(RemovalCause.EXPIRED))
                .extracting(n -> n.key() + "=" + n.value())
                .containsExactlyInAnyOrder("a=A", "b=B");
        assertThat(cache.size()).isEqualTo(1);
        assertThat(cache.stats().expirationCount()).isEqualTo(2);
        assertGone(cache, "a");
        assertThat(listener.count(RemovalCause.EXPIRED))
                .as("touching again reports nothing more")
                .isEqualTo(2);
    }

    @Test
    void expiredEntriesWithTheirOwnTtlAreReportedWhenCleanUpRuns() {
        LarderCache<String, String> cache = build(builder());
        cache.put("early", "E", Duration.ofSeconds(1));
        cache.put("stays", "S");
        cache.put("late", "L", Duration.ofSeconds(1)); // written after an entry that never expires
        cache.put("longer", "G", Duration.ofSeconds(5));
        advance(1_001);
        cache.cleanUp();
        listener.await(n -> n.cause() == RemovalCause.EXPIRED, 2, cache::cleanUp);
        assertThat(listener.notices(RemovalCause.EXPIRED))
                .extracting(n -> n.key())
                .containsExactlyInAnyOrder("early", "late");
        assertThat(cache.size()).isEqualTo(2);
    }

    @Test
    void anExpiredEntryIsReportedWhenTouched() {
        LarderCache<String, String> cache = build(builder().expireAfterWrite(Duration.ofSeconds(1)));
        cache.put("a", "A");
        advance(1_001);
        assertThat(cache.getIfPresent("a")).isNull();
        List<RecordingListener.Notice<String, String>> expired =
                listener.await(n -> n.cause() == RemovalCause.EXPIRED, 1, () -> {});
        assertThat(expired).extracting(n -> n.key() + "=" + n.value()).containsExactly("a=A");
        assertThat(cache.getIfPresent("a")).isNull();
        cache.cleanUp();
        assertThat(listener.count(RemovalCause.EXPIRED)).isEqualTo(1);
    }

    @Test
    void sizeExcludesExpiredEntriesAfterCleanUp() {
        LarderCache<String, String> cache = build(builder().expireAfterWrite(Duration.ofSeconds(10)));
        for (int i = 0; i < 100; i++) {
            cache.put("old" + i, "v");
        }
        advance(5_000);
        for (int i = 0; i < 50; i++) {
            cache.put("new" + i, "v");
        }
        advance(5_001);
        cache.cleanUp();
        assertThat(cache.size()).isEqualTo(50);
        assertThat(entries(cache)).hasSize(50);
        listener.await(n -> n.cause() == RemovalCause.EXPIRED, 100, cache::cleanUp);
    }
}
