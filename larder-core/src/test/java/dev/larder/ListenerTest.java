package dev.larder;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Removal causes and values, and when listeners are told. */
class ListenerTest {
    private final FakeTicker ticker = new FakeTicker();
    private final RecordingListener<String, String> listener = new RecordingListener<>();
    private LarderCache<String, String> cache;

    @AfterEach
    void close() {
        if (cache != null) {
            cache.close();
        }
    }

    private LarderCache<String, String> cache() {
        cache = Larder.newBuilder(Codecs.utf8(), Codecs.utf8())
                .maximumBytes(1L << 20)
                .ticker(ticker)
                .removalListener(listener)
                .build();
        return cache;
    }

    static Stream<Arguments> explicitRemovals() {
        return Stream.<Map.Entry<String, Consumer<LarderCache<String, String>>>>of(
                        Map.entry("remove(k)", c -> assertThat(c.remove("k")).isTrue()),
                        Map.entry("remove(k, v)", c -> assertThat(c.remove("k", "old"))
                                .isTrue()),
                        Map.entry("getAndRemove", c -> assertThat(c.getAndRemove("k"))
                                .isEqualTo("old")),
                        Map.entry("compute -> null", c -> c.compute("k", (k, v) -> null)),
                        Map.entry("computeIfPresent -> null", c -> c.computeIfPresent("k", (k, v) -> null)),
                        Map.entry("merge -> null", c -> c.merge("k", "x", (a, b) -> null)),
                        Map.entry("asMap().remove(k)", c -> assertThat(c.asMap().remove("k"))
                                .isEqualTo("old")),
                        Map.entry(
                                "asMap().remove(k, v)",
                                c -> assertThat(c.asMap().remove("k", "old")).isTrue()),
                        Map.entry("asMap().keySet() iterator remove", c -> {
                            Iterator<String> it = c.asMap().keySet().iterator();
                            assertThat(it.next()).isEqualTo("k");
                            it.remove();
                        }),
                        Map.entry("clear()", LarderCache::clear))
                .map(e -> Arguments.of(e.getKey(), e.getValue()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("explicitRemovals")
    void explicitRemovalIsReportedOnTheCallingThread(String op, Consumer<LarderCache<String, String>> action) {
        LarderCache<String, String> c = cache();
        c.put("k", "old");
        action.accept(c);
        assertThat(c.containsKey("k")).isFalse();
        assertThat(listener.notices())
                .as("notices right after %s returned", op)
                .extracting(n -> n.key() + "=" + n.value() + " " + n.cause())
                .containsExactly("k=old EXPLICIT");
        assertThat(listener.notices().getFirst().thread()).isSameAs(Thread.currentThread());
        assertThat(RemovalCause.EXPLICIT.wasEvicted()).isFalse();
    }

    static Stream<Arguments> replacements() {
        return Stream.<Map.Entry<String, Consumer<LarderCache<String, String>>>>of(
                        Map.entry("put", c -> c.put("k", "new")),
                        Map.entry("put(ttl)", c -> c.put("k", "new", Duration.ofMinutes(1))),
                        Map.entry("putAll", c -> c.putAll(Map.of("k", "new"))),
                        Map.entry("getAndPut", c -> assertThat(c.getAndPut("k", "new"))
                                .isEqualTo("old")),
                        Map.entry("replace(k, v)", c -> assertThat(c.replace("k", "new"))
                                .isTrue()),
                        Map.entry("replace(k, e, v)", c -> assertThat(c.replace("k", "old", "new"))
                                .isTrue()),
                        Map.entry("compute", c -> c.compute("k", (k, v) -> "new")),
                        Map.entry("computeIfPresent", c -> c.computeIfPresent("k", (k, v) -> "new")),
                        Map.entry("merge", c -> assertThat(c.merge("k", "x", (a, b) -> "new"))
                                .isEqualTo("new")),
                        Map.entry("asMap().put", c -> assertThat(c.asMap().put("k", "new"))
                                .isEqualTo("old")),
                        Map.entry("entry.setValue", c -> {
                            Map.Entry<String, String> e =
                                    c.asMap().entrySet().iterator().next();
                            e.setValue("new");
                        }))
                .map(e -> Arguments.of(e.getKey(), e.getValue()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("replacements")
    void replacementIsReportedWithTheOldValue(String op, Consumer<LarderCache<String, String>> action) {
        LarderCache<String, String> c = cache();
        c.put("k", "old");
        action.accept(c);
        assertThat(c.getIfPresent("k")).isEqualTo("new");
        assertThat(listener.notices())
                .as("notices right after %s returned", op)
                .extracting(n -> n.key() + "=" + n.value() + " " + n.cause())
                .containsExactly("k=old REPLACED");
        assertThat(listener.notices().getFirst().thread()).isSameAs(Thread.currentThread());
        assertThat(RemovalCause.REPLACED.wasEvicted()).isFalse();
    }

    @Test
    void operationsThatRemoveNothingReportNothing() {
        LarderCache<String, String> c = cache();
        c.put("k", "v");
        assertThat(c.putIfAbsent("k", "other")).isFalse();
        assertThat(c.replace("absent", "x")).isFalse();
        assertThat(c.replace("k", "wrong", "x")).isFalse();
        assertThat(c.remove("absent")).isFalse();
        assertThat(c.remove("k", "wrong")).isFalse();
        assertThat(c.getAndRemove("absent")).isNull();
        assertThat(c.computeIfAbsent("k", k -> "x")).isEqualTo("v");
        assertThat(c.computeIfPresent("absent", (k, v) -> "x")).isNull();
        assertThat(c.compute("absent", (k, v) -> null)).isNull();
        assertThatThrownBy(() -> c.put("k", "x".repeat(2 << 20))).isInstanceOf(EntryTooLargeException.class);
        c.put("fresh", "new");
        c.getIfPresent("k");
        c.cleanUp();
        assertThat(listener.notices()).isEmpty();
        assertThat(c.getIfPresent("k")).isEqualTo("v");
    }

    @Test
    void clearReportsEveryEntry() {
        LarderCache<String, String> c = cache();
        Map<String, String> all = new HashMap<>();
        for (int i = 0; i < 50; i++) {
            all.put("k" + i, "v" + i);
        }
        c.putAll(all);
        c.clear();
        assertThat(c.size()).isZero();
        Map<String, String> reported = new HashMap<>();
        listener.notices().forEach(n -> {
            assertThat(n.cause()).isEqualTo(RemovalCause.EXPLICIT);
            assertThat(reported.put(n.key(), n.value()))
                    .as("reported once: %s", n.key())
                    .isNull();
        });
        assertThat(reported).isEqualTo(all);
    }

    @Test
    void expiryIsReportedAsExpired() {
        LarderCache<String, String> c = cache();
        c.put("k", "v", Duration.ofSeconds(1));
        ticker.advance(Duration.ofMillis(1_001));
        assertThat(c.getIfPresent("k")).isNull();
        List<RecordingListener.Notice<String, String>> expired =
                listener.await(n -> n.cause() == RemovalCause.EXPIRED, 1, () -> {});
        assertThat(expired).extracting(n -> n.key() + "=" + n.value()).containsExactly("k=v");
        assertThat(RemovalCause.EXPIRED.wasEvicted()).isTrue();
        c.cleanUp();
        assertThat(listener.notices()).hasSize(1);
    }

    @Test
    void replacingAnExpiredEntryIsReportedOnce() {
        LarderCache<String, String> c = cache();
        c.put("k", "v", Duration.ofSeconds(1));
        ticker.advance(Duration.ofMillis(1_001));
        c.put("k", "new");
        c.cleanUp();
        assertThat(listener.notices())
                .as("the old value leaves once, as EXPIRED or REPLACED")
                .hasSize(1)
                .allSatisfy(n -> {
                    assertThat(n.value()).isEqualTo("v");
                    assertThat(n.cause()).isIn(RemovalCause.EXPIRED, RemovalCause.REPLACED);
                });
    }

    @Test
    void sizeEvictionIsReportedWithTheEvictedValues() {
        cache = Larder.newBuilder(Codecs.utf8(), Codecs.utf8())
                .maximumBytes(1L << 20)
                .maximumEntries(3)
                .removalListener(listener)
                .build();
        for (int i = 0; i < 6; i++) {
            cache.put("k" + i, "v" + i);
        }
        cache.cleanUp();
        assertThat(cache.size()).isEqualTo(3);
        List<RecordingListener.Notice<String, String>> evicted =
                listener.await(n -> n.cause() == RemovalCause.SIZE, 3, () -> {});
        assertThat(listener.notices()).hasSize(3);
        for (RecordingListener.Notice<String, String> n : evicted) {
            assertThat(n.value()).isEqualTo("v" + n.key().substring(1));
            assertThat(cache.containsKey(n.key()))
                    .as("evicted %s is gone", n.key())
                    .isFalse();
        }
        assertThat(RemovalCause.SIZE.wasEvicted()).isTrue();
        assertThat(cache.stats().evictionCount()).isEqualTo(3);
    }

    @Test
    void aThrowingListenerNeverBreaksTheCache() {
        cache = Larder.newBuilder(Codecs.utf8(), Codecs.utf8())
                .maximumBytes(1L << 20)
                .maximumEntries(5)
                .removalListener((k, v, cause) -> {
                    throw new IllegalStateException("listener bug");
                })
                .build();
        cache.put("k", "1");
        cache.put("k", "2");
        assertThat(cache.getIfPresent("k")).isEqualTo("2");
        assertThat(cache.remove("k")).isTrue();
        assertThat(cache.containsKey("k")).isFalse();
        for (int i = 0; i < 20; i++) {
            cache.put("e" + i, "v");
        }
        cache.cleanUp();
        assertThat(cache.size()).isEqualTo(5);
        cache.put("a", "b");
        cache.clear();
        assertThat(cache.size()).isZero();
    }
}
