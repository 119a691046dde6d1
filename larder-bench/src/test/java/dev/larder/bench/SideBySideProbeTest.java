package dev.larder.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class SideBySideProbeTest {
    @Test
    void oddRoundsRunTheCachesInReverse() {
        assertThat(SideBySideProbe.order(0, 3)).containsExactly(0, 1, 2);
        assertThat(SideBySideProbe.order(1, 3)).containsExactly(2, 1, 0);
        assertThat(SideBySideProbe.order(4, 2)).containsExactly(0, 1);
    }

    @Test
    void aCacheNamedTwiceIsNumbered() {
        assertThat(SideBySideProbe.labels(List.of("larder", "ohc", "larder", "larder")))
                .containsExactly("larder", "ohc", "larder#2", "larder#3");
    }

    @Test
    void cachePropsGoToTheirPositionOnly() {
        List<Map<String, String>> props =
                SideBySideProbe.cacheProps("2:larder.bench.partitions=2; 2:larder.bench.room=1.5;3:x=a=b", 3);
        assertThat(props.get(0)).isEmpty();
        assertThat(props.get(1))
                .containsExactly(Map.entry("larder.bench.partitions", "2"), Map.entry("larder.bench.room", "1.5"));
        assertThat(props.get(2)).containsExactly(Map.entry("x", "a=b"));
        assertThat(SideBySideProbe.cacheProps("", 2)).containsExactly(Map.of(), Map.of());
    }

    @Test
    void cachePropsThatNameNoCacheOrNoKeyAreRefused() {
        assertThatThrownBy(() -> SideBySideProbe.cacheProps("3:a=b", 2))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("position 3 is not one of the 2 caches");
        assertThatThrownBy(() -> SideBySideProbe.cacheProps("two:a=b", 2)).hasMessageContaining("not a cache position");
        assertThatThrownBy(() -> SideBySideProbe.cacheProps("2:=b", 2)).hasMessageContaining("position:key=value");
        assertThatThrownBy(() -> SideBySideProbe.cacheProps("2:ab", 2)).hasMessageContaining("position:key=value");
    }

    @Test
    void propertiesHoldOnlyWhileTheCacheIsBuilt() {
        String set = "larder.test.sideBySide.set";
        String kept = "larder.test.sideBySide.kept";
        System.setProperty(kept, "before");
        try {
            String seen = SideBySideProbe.withProperties(
                    Map.of(set, "1", kept, "during"), () -> System.getProperty(set) + "/" + System.getProperty(kept));
            assertThat(seen).isEqualTo("1/during");
            assertThat(System.getProperty(set)).isNull();
            assertThat(System.getProperty(kept)).isEqualTo("before");
            assertThatThrownBy(() -> SideBySideProbe.withProperties(Map.of(set, "2"), () -> {
                        throw new IllegalStateException("build failed");
                    }))
                    .hasMessage("build failed");
            assertThat(System.getProperty(set)).isNull();
        } finally {
            System.clearProperty(kept);
        }
    }

    @Test
    void medianOfOddAndEvenCounts() {
        assertThat(SideBySideProbe.median(new double[] {3, 1, 2})).isEqualTo(2);
        assertThat(SideBySideProbe.median(new double[] {4, 1, 3, 2})).isEqualTo(2.5);
    }

    @Test
    void intervalHoldsTheMedianAndIsAPointForEqualValues() {
        double[] m = SideBySideProbe.medianInterval(new double[] {1.2, 0.9, 1.1, 1.0, 1.3, 1.05, 0.95});
        assertThat(m[0]).isEqualTo(1.05);
        assertThat(m[1]).isLessThanOrEqualTo(m[0]).isGreaterThanOrEqualTo(0.9);
        assertThat(m[2]).isGreaterThanOrEqualTo(m[0]).isLessThanOrEqualTo(1.3);
        assertThat(SideBySideProbe.medianInterval(new double[] {2, 2, 2, 2})).containsExactly(2, 2, 2);
    }

    @Test
    void verdictFollowsTheRatiosOfEachRound() {
        List<String> names = List.of("larder", "ohc");
        // ohc slower in every round, though its level moves 3x between rounds as the machine's does
        String slower = SideBySideProbe.summary(names, new double[][] {{100, 300, 110, 290}, {150, 420, 160, 450}});
        assertThat(slower).contains("ohc / larder: median 1.4").contains("larder faster");
        String faster = SideBySideProbe.summary(names, new double[][] {{150, 420, 160, 450}, {100, 300, 110, 290}});
        assertThat(faster).contains("ohc faster");
        String mixed = SideBySideProbe.summary(names, new double[][] {{100, 100, 100, 100}, {90, 110, 95, 105}});
        assertThat(mixed).contains("no difference resolved");
        String few = SideBySideProbe.summary(names, new double[][] {{100, 100}, {150, 150}});
        assertThat(few).contains("too few rounds");
    }

    @Test
    @SuppressWarnings("unchecked")
    void jsonCarriesEachRoundAndTheRatios() {
        Map<String, Object> json = SideBySideProbe.toJson(
                Map.of("op", "get"), List.of("larder", "ohc"), new double[][] {{100, 200, 100}, {150, 300, 160}});
        assertThat(json).containsEntry("op", "get").containsEntry("reference", "larder");
        Map<String, Object> larder = (Map<String, Object>) ((Map<String, Object>) json.get("caches")).get("larder");
        assertThat((List<Double>) larder.get("nsPerOp")).containsExactly(100.0, 200.0, 100.0);
        Map<String, Object> ohc = (Map<String, Object>) ((Map<String, Object>) json.get("ratios")).get("ohc");
        assertThat((double) ohc.get("median")).isCloseTo(1.5, within(1e-9));
        assertThat(Json.write(json)).startsWith("{").contains("\"ratios\"");
    }

    /** A cache that counts its calls, for the slices' bookkeeping. */
    static final class CountingCache implements BenchCache {
        final AtomicLong puts = new AtomicLong();
        final String name;

        CountingCache(String name) {
            this.name = name;
        }

        @Override
        public byte[] get(String key) {
            return null;
        }

        @Override
        public void put(String key, byte[] value) {
            puts.incrementAndGet();
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public void close() {}
    }

    @Test
    void everyCacheRunsInEveryRoundAndTheInsertsGoOnFromWhereTheyStopped() throws Exception {
        CountingCache a = new CountingCache("a");
        CountingCache b = new CountingCache("b");
        String[] keys = Keys.keys(0, 100);
        String[] insertKeys = Keys.keys(100, 1000);
        SideBySideProbe.Slices slices =
                new SideBySideProbe.Slices(List.of(a, b), SideBySideProbe.Op.INSERT, keys, insertKeys, 16, 2);
        double[][] ns = slices.run(20, 1, 3, List.of("a", "b"));
        assertThat(ns).hasDimensions(2, 3);
        for (double[] cache : ns) {
            assertThat(java.util.Arrays.stream(cache).boxed().toList()).allMatch(v -> v > 0 && Double.isFinite(v));
        }
        assertThat(a.puts.get()).isPositive();
        assertThat(b.puts.get()).isPositive();
    }

    @Test
    void realCachesSideBySide() throws Exception {
        try (BenchCache larder = Caches.create("larder", 2_000, 64);
                BenchCache caffeine = Caches.create("caffeine", 2_000, 64)) {
            String[] keys = Keys.keys(0, 2_000);
            for (BenchCache c : List.of(larder, caffeine)) {
                for (int i = 0; i < keys.length; i++) {
                    c.put(keys[i], Keys.value(i, 64));
                }
            }
            double[][] ns = new SideBySideProbe.Slices(
                            List.of(larder, caffeine), SideBySideProbe.Op.GET, keys, null, 64, 2)
                    .run(20, 1, 2, List.of("larder", "caffeine"));
            assertThat(java.util.Arrays.stream(ns[0]).boxed().toList()).allMatch(v -> v > 0 && v < 1e7);
            assertThat(java.util.Arrays.stream(ns[1]).boxed().toList()).allMatch(v -> v > 0 && v < 1e7);
        }
    }
}
