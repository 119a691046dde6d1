package dev.larder;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** get(key, loader), build(CacheLoader), refresh and the load counters. */
@Timeout(30)
class LoadingTest {
    private static final int CALLERS = 8;

    private final ExecutorService pool = Executors.newFixedThreadPool(CALLERS + 2);
    private final List<LarderCache<?, ?>> open = new ArrayList<>();

    @AfterEach
    void tearDown() throws InterruptedException {
        pool.shutdownNow();
        assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
        open.forEach(LarderCache::close);
    }

    private LarderCache<String, String> cache() {
        LarderCache<String, String> cache = Larder.newBuilder(Codecs.utf8(), Codecs.utf8())
                .maximumBytes(1L << 20)
                .build();
        open.add(cache);
        return cache;
    }

    private LoadingLarderCache<String, String> loadingCache(CacheLoader<String, String> loader) {
        LoadingLarderCache<String, String> cache = Larder.newBuilder(Codecs.utf8(), Codecs.utf8())
                .maximumBytes(1L << 20)
                .build(loader);
        open.add(cache);
        return cache;
    }

    /** A load that counts its calls and holds until released. */
    static final class HeldLoad {
        final AtomicInteger calls = new AtomicInteger();
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);

        void enterAndHold() {
            calls.incrementAndGet();
            entered.countDown();
            try {
                if (!release.await(20, TimeUnit.SECONDS)) {
                    throw new AssertionError("load never released");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    private List<Future<Object>> callers(int n, java.util.concurrent.Callable<Object> call) {
        List<Future<Object>> futures = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            futures.add(pool.submit(call));
        }
        return futures;
    }

    /** Lets the other callers reach the cache (and block on the load) before the load ends. */
    private static void letCallersArrive() throws InterruptedException {
        Thread.sleep(200);
    }

    private static Throwable failure(Future<Object> f) throws InterruptedException {
        try {
            f.get(20, TimeUnit.SECONDS);
            return null;
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (java.util.concurrent.TimeoutException e) {
            throw new AssertionError("caller did not finish", e);
        }
    }

    // ------------------------------------------------------------------ one load per key

    @Test
    void getWithLoaderRunsOneLoadPerKeyAndEveryCallerGetsItsValue() throws Exception {
        LarderCache<String, String> cache = cache();
        HeldLoad load = new HeldLoad();
        Function<String, String> loader = key -> {
            load.enterAndHold();
            return "loaded:" + key;
        };
        List<Future<Object>> results = callers(CALLERS, () -> cache.get("k", loader));
        assertThat(load.entered.await(10, TimeUnit.SECONDS)).isTrue();
        letCallersArrive();
        assertThat(cache.getIfPresent("k"))
                .as("no value before the load finishes")
                .isNull();
        load.release.countDown();
        for (Future<Object> f : results) {
            assertThat(f.get(20, TimeUnit.SECONDS)).isEqualTo("loaded:k");
        }
        assertThat(load.calls).as("loader invocations for one key").hasValue(1);
        assertThat(cache.getIfPresent("k")).isEqualTo("loaded:k");
        assertThat(cache.stats().loadSuccessCount()).isEqualTo(1);
        // present now: the loader is not called again
        assertThat(cache.get("k", key -> {
                    throw new AssertionError("loader called for a present key");
                }))
                .isEqualTo("loaded:k");
    }

    @Test
    void loadingCacheGetRunsOneLoadPerKey() throws Exception {
        HeldLoad load = new HeldLoad();
        LoadingLarderCache<String, String> cache = loadingCache(key -> {
            load.enterAndHold();
            return "loaded:" + key;
        });
        List<Future<Object>> results = callers(CALLERS, () -> cache.get("k"));
        assertThat(load.entered.await(10, TimeUnit.SECONDS)).isTrue();
        letCallersArrive();
        load.release.countDown();
        for (Future<Object> f : results) {
            assertThat(f.get(20, TimeUnit.SECONDS)).isEqualTo("loaded:k");
        }
        assertThat(load.calls).hasValue(1);
        assertThat(cache.stats().loadSuccessCount()).isEqualTo(1);
        assertThat(cache.stats().loadFailureCount()).isZero();
    }

    @Test
    void loadsOfDifferentKeysDoNotWaitForEachOther() throws Exception {
        LarderCache<String, String> cache = cache();
        HeldLoad slow = new HeldLoad();
        Future<Object> a = pool.submit(() -> cache.get("slow", key -> {
            slow.enterAndHold();
            return "A";
        }));
        assertThat(slow.entered.await(10, TimeUnit.SECONDS)).isTrue();
        Future<Object> b = pool.submit(() -> cache.get("fast", key -> "B"));
        assertThat(b.get(5, TimeUnit.SECONDS))
                .as("a load of another key finishes while the first is held")
                .isEqualTo("B");
        slow.release.countDown();
        assertThat(a.get(20, TimeUnit.SECONDS)).isEqualTo("A");
    }

    // ------------------------------------------------------------------ failures

    @Test
    void loaderExceptionReachesEveryWaitingCallerAndNothingIsCached() throws Exception {
        LarderCache<String, String> cache = cache();
        HeldLoad load = new HeldLoad();
        List<Future<Object>> results = callers(
                CALLERS,
                () -> cache.get("k", key -> {
                    load.enterAndHold();
                    throw new IllegalStateException("load failed");
                }));
        assertThat(load.entered.await(10, TimeUnit.SECONDS)).isTrue();
        letCallersArrive();
        load.release.countDown();
        for (Future<Object> f : results) {
            assertThat(failure(f))
                    .as("every caller gets the loader's exception")
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessage("load failed");
        }
        assertThat(load.calls).as("the failed load ran once for all callers").hasValue(1);
        assertThat(cache.containsKey("k")).isFalse();
        assertThat(cache.getIfPresent("k")).isNull();
        assertThat(cache.size()).isZero();
        assertThat(cache.stats().loadFailureCount()).isEqualTo(1);
        assertThat(cache.stats().loadSuccessCount()).isZero();
        // the next get loads again
        assertThat(cache.get("k", key -> "second try")).isEqualTo("second try");
    }

    @Test
    void checkedLoaderExceptionIsWrappedInCompletionException() throws Exception {
        LoadingLarderCache<String, String> cache = loadingCache(key -> {
            throw new IOException("disk on fire");
        });
        assertThatThrownBy(() -> cache.get("k"))
                .isInstanceOf(CompletionException.class)
                .hasCauseInstanceOf(IOException.class)
                .hasRootCauseMessage("disk on fire");
        assertThat(cache.containsKey("k")).isFalse();
        assertThat(cache.stats().loadFailureCount()).isEqualTo(1);
    }

    @Test
    void uncheckedLoaderExceptionOfALoadingCacheIsNotWrapped() {
        LoadingLarderCache<String, String> cache = loadingCache(key -> {
            throw new IllegalArgumentException("bad key " + key);
        });
        assertThatThrownBy(() -> cache.get("k"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("bad key k");
        assertThat(cache.size()).isZero();
    }

    @Test
    void nullFromTheLoaderCachesNothing() throws Exception {
        LarderCache<String, String> cache = cache();
        AtomicInteger calls = new AtomicInteger();
        assertThat(cache.get("k", key -> {
                    calls.incrementAndGet();
                    return null;
                }))
                .isNull();
        assertThat(cache.containsKey("k")).isFalse();
        assertThat(cache.size()).isZero();
        assertThat(cache.get("k", key -> {
                    calls.incrementAndGet();
                    return null;
                }))
                .isNull();
        assertThat(calls).as("a null result is not remembered").hasValue(2);
        assertThat(cache.stats().loadFailureCount())
                .as("null loads count as failures")
                .isEqualTo(2);
        assertThat(cache.stats().loadSuccessCount()).isZero();

        LoadingLarderCache<String, String> loading = loadingCache(key -> null);
        assertThat(loading.get("k")).isNull();
        assertThat(loading.containsKey("k")).isFalse();
        assertThat(loading.stats().loadFailureCount()).isEqualTo(1);
    }

    @Test
    void concurrentCallersAllSeeANullLoad() throws Exception {
        LarderCache<String, String> cache = cache();
        HeldLoad load = new HeldLoad();
        List<Future<Object>> results = callers(
                CALLERS,
                () -> cache.get("k", key -> {
                    load.enterAndHold();
                    return null;
                }));
        assertThat(load.entered.await(10, TimeUnit.SECONDS)).isTrue();
        letCallersArrive();
        load.release.countDown();
        for (Future<Object> f : results) {
            assertThat(f.get(20, TimeUnit.SECONDS)).isNull();
        }
        assertThat(load.calls).hasValue(1);
        assertThat(cache.containsKey("k")).isFalse();
    }

    // ------------------------------------------------------------------ getAll

    @Test
    void loadingGetAllLoadsOnlyTheAbsentKeys() {
        Set<String> loaded = ConcurrentHashMap.newKeySet();
        LoadingLarderCache<String, String> cache = loadingCache(key -> {
            loaded.add(key);
            return "v-" + key;
        });
        cache.put("a", "present");
        Map<String, String> all = cache.getAll(List.of("a", "b", "c"));
        assertThat(all).containsExactlyInAnyOrderEntriesOf(Map.of("a", "present", "b", "v-b", "c", "v-c"));
        assertThat(loaded).containsExactlyInAnyOrder("b", "c");
        assertThat(cache.getIfPresent("b")).isEqualTo("v-b");
        assertThat(cache.stats().loadSuccessCount()).isEqualTo(2);
    }

    // ------------------------------------------------------------------ refresh

    @Test
    void refreshServesTheOldValueUntilTheNewOneIsIn() throws Exception {
        HeldLoad reload = new HeldLoad();
        AtomicInteger loads = new AtomicInteger();
        LoadingLarderCache<String, String> cache = loadingCache(new CacheLoader<>() {
            @Override
            public String load(String key) {
                loads.incrementAndGet();
                return "v1";
            }

            @Override
            public String reload(String key, String oldValue) {
                assertThat(oldValue).isEqualTo("v1");
                reload.enterAndHold();
                return "v2";
            }
        });
        assertThat(cache.get("k")).isEqualTo("v1");
        CompletableFuture<String> refreshed = cache.refresh("k");
        assertThat(reload.entered.await(10, TimeUnit.SECONDS)).isTrue();
        for (int i = 0; i < 3; i++) {
            assertThat(cache.getIfPresent("k")).as("old value while refreshing").isEqualTo("v1");
            assertThat(cache.get("k")).as("old value while refreshing").isEqualTo("v1");
        }
        assertThat(refreshed).isNotDone();
        reload.release.countDown();
        assertThat(refreshed.get(10, TimeUnit.SECONDS)).isEqualTo("v2");
        assertThat(cache.getIfPresent("k")).isEqualTo("v2");
        assertThat(loads).as("refresh reloads, it does not load").hasValue(1);
        assertThat(cache.stats().loadSuccessCount()).isEqualTo(2);
    }

    @Test
    void failedRefreshKeepsTheOldValue() throws Exception {
        LoadingLarderCache<String, String> cache = loadingCache(new CacheLoader<>() {
            @Override
            public String load(String key) {
                return "v1";
            }

            @Override
            public String reload(String key, String oldValue) throws IOException {
                throw new IOException("reload failed");
            }
        });
        assertThat(cache.get("k")).isEqualTo("v1");
        CompletableFuture<String> refreshed = cache.refresh("k");
        assertThatThrownBy(() -> refreshed.get(10, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .hasRootCauseInstanceOf(IOException.class);
        assertThat(cache.getIfPresent("k")).isEqualTo("v1");
        assertThat(cache.size()).isEqualTo(1);
        assertThat(cache.stats().loadFailureCount()).isEqualTo(1);
        assertThat(cache.stats().loadSuccessCount()).isEqualTo(1);
    }

    @Test
    void uncheckedFailureOfRefreshKeepsTheOldValueToo() throws Exception {
        LoadingLarderCache<String, String> cache = loadingCache(new CacheLoader<>() {
            @Override
            public String load(String key) {
                return "v1";
            }

            @Override
            public String reload(String key, String oldValue) {
                throw new IllegalStateException("reload failed");
            }
        });
        cache.get("k");
        CompletableFuture<String> refreshed = cache.refresh("k");
        assertThatThrownBy(() -> refreshed.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class);
        assertThat(cache.getIfPresent("k")).isEqualTo("v1");
    }

    // ------------------------------------------------------------------ stats

    @Test
    void statsCountLoadsAndTheirTime() {
        LoadingLarderCache<String, String> cache = loadingCache(key -> {
            if (key.startsWith("bad")) {
                throw new IllegalStateException("no");
            }
            if (key.startsWith("none")) {
                return null;
            }
            return "v-" + key;
        });
        for (int i = 0; i < 5; i++) {
            cache.get("good" + i);
        }
        for (int i = 0; i < 3; i++) {
            String key = "bad" + i;
            assertThatThrownBy(() -> cache.get(key)).isInstanceOf(IllegalStateException.class);
        }
        cache.get("none");
        cache.get("good0"); // a hit, no load
        CacheStats stats = cache.stats();
        assertThat(stats.loadSuccessCount()).isEqualTo(5);
        assertThat(stats.loadFailureCount()).isEqualTo(4);
        assertThat(stats.totalLoadTimeNanos()).isPositive();
        assertThat(stats.averageLoadPenaltyNanos()).isPositive();
        assertThat(stats.hitCount()).isEqualTo(1);
        assertThat(stats.missCount()).as("each load started with a miss").isEqualTo(9);
        assertThat(stats.putCount()).as("loads that stored a value").isEqualTo(5);
        assertThat(stats.size()).isEqualTo(5);
    }
}
