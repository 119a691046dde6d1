package dev.larder.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every adapter stores, replaces and returns values, and the evicting ones stay near the size they
 * were given. All peers run on JDK 25 with their flags (see {@link Peer}); if a JDK update breaks
 * one, this fails with {@link PeerUnavailableException}'s reason rather than skipping it.
 */
class AdaptersTest {
    static Stream<String> caches() {
        return Peer.ids().stream();
    }

    @ParameterizedTest
    @MethodSource("caches")
    void roundTrips(String name) {
        // Ehcache's smallest off-heap tier (1 MiB) holds about 3000 entries.
        try (BenchCache cache = Caches.create(name, 8_000, 256)) {
            assertThat(cache.name()).isEqualTo(name);
            assertThat(Peer.of(name).evicts()).as("Peer.evicts() of " + name).isEqualTo(cache.evicts());
            assertThat(cache.get(Keys.key(1))).isNull();
            for (int i = 0; i < 1_000; i++) {
                cache.put(Keys.key(i), Keys.value(i, 256));
            }
            int present = 0;
            for (int i = 0; i < 1_000; i++) {
                byte[] v = cache.get(Keys.key(i));
                if (v != null) {
                    assertThat(v).isEqualTo(Keys.value(i, 256));
                    present++;
                }
            }
            assertThat(present)
                    .as("entries held of 1000 in a cache sized for 8000")
                    .isGreaterThanOrEqualTo(990);
            cache.put(Keys.key(3), Keys.value(99, 256));
            assertThat(cache.get(Keys.key(3))).isEqualTo(Keys.value(99, 256));
        }
    }

    @ParameterizedTest
    @MethodSource("caches")
    void evictingCachesStayNearTheirSize(String name) {
        try (BenchCache cache = Caches.create(name, 4_000, 256)) {
            assumeTrue(cache.evicts(), name + " does not evict");
            for (int i = 0; i < 20_000; i++) {
                cache.put(Keys.key(i), Keys.value(i, 256));
            }
            int present = Fill.countPresent(cache, Keys.keys(0, 20_000));
            assertThat(present).isBetween(2_000, 5_200);
        }
    }
}
