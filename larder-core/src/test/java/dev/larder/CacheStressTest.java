package dev.larder;

import static org.assertj.core.api.Assertions.assertThat;

import dev.larder.internal.memory.NativeMemory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Multi-threaded stress. Every value carries its key, a sequence number and a CRC ({@link
 * CheckedValue}), so every read is checked whole. Conservation: for every key, the values the
 * cache acknowledged storing equal the removal notices (any cause) plus one if it holds the key at
 * the end. Nothing disappears without a notice.
 *
 * <p>Run time scales with {@code -Dlarder.stress.millis} (default 3000 for the mixed workload).
 */
class CacheStressTest {
    private static final long MIXED_MILLIS = Long.getLong("larder.stress.millis", 3000);

    private static final AtomicLong SEQUENCE = new AtomicLong();

    private static byte[] newValue(String key, int payload) {
        return CheckedValue.create(key, SEQUENCE.incrementAndGet(), payload);
    }

    /** Mostly small payloads, sometimes a large value (tens of KB). */
    private static int payloadSize(ThreadLocalRandom rnd) {
        int p = rnd.nextInt(1000);
        if (p == 0) {
            return 20_000 + rnd.nextInt(40_000);
        }
        return p < 900 ? rnd.nextInt(300) : rnd.nextInt(3000);
    }

    // ---------------------------------------------------------------------------------------

    @Test
    @Timeout(60)
    void mixedWorkloadWithConstantEvictionAndExpiryConservesEveryEntry() throws Exception {
        long nativeBefore = NativeMemory.outstandingBytes();
        int keyCount = 3000;
        long maxEntries = 1500;
        FakeTicker ticker = new FakeTicker();
        AtomicLongArray stores = new AtomicLongArray(keyCount);
        AtomicLongArray notices = new AtomicLongArray(keyCount);
        AtomicLongArray noticesByCause = new AtomicLongArray(RemovalCause.values().length);
        Queue<Throwable> failures = new ConcurrentLinkedQueue<>();

        LarderCache<String, byte[]> cache = Larder.newBuilder(Codecs.utf8(), TestCodecs.bytes())
                .maximumBytes(512 * 1024)
                .maximumEntries(maxEntries)
                .expireAfterWrite(Duration.ofSeconds(2))
                .ticker(ticker)
                .removalListener((key, value, cause) -> {
                    try {
                        CheckedValue.check(key, value);
                        notices.incrementAndGet(index(key));
                        noticesByCause.incrementAndGet(cause.ordinal());
                    } catch (Throwable t) {
                        failures.add(new AssertionError("removal listener got a bad entry (" + cause + ")", t));
                    }
                })
                .build();
        try {
            AtomicBoolean stop = new AtomicBoolean();
            List<Thread> threads = new ArrayList<>();
            Body clock = () -> {
                while (!stop.get()) {
                    ticker.advance(Duration.ofMillis(1));
                    LockSupport.parkNanos(1_000_000);
                }
            };
            threads.add(worker("clock", stop, failures, clock));
            for (int w = 0; w < 2; w++) {
                threads.add(worker("writer-" + w, stop, failures, () -> {
                    ThreadLocalRandom rnd = ThreadLocalRandom.current();
                    int i = rnd.nextInt(keyCount);
                    String key = key(i);
                    int op = rnd.nextInt(100);
                    if (op < 50) {
                        cache.put(key, newValue(key, payloadSize(rnd)));
                        stores.incrementAndGet(i);
                    } else if (op < 65) {
                        cache.put(key, newValue(key, payloadSize(rnd)), Duration.ofMillis(1 + rnd.nextInt(100)));
                        stores.incrementAndGet(i);
                    } else if (op < 75) {
                        byte[] old = cache.getAndPut(key, newValue(key, payloadSize(rnd)));
                        stores.incrementAndGet(i);
                        if (old != null) {
                            CheckedValue.check(key, old);
                        }
                    } else if (op < 85) {
                        if (cache.putIfAbsent(key, newValue(key, payloadSize(rnd)))) {
                            stores.incrementAndGet(i);
                        }
                    } else if (op < 90) {
                        if (cache.replace(key, newValue(key, payloadSize(rnd)))) {
                            stores.incrementAndGet(i);
                        }
                    } else {
                        byte[] current = cache.getIfPresent(key);
                        if (current != null) {
                            CheckedValue.check(key, current);
                            if (cache.replace(key, current, newValue(key, payloadSize(rnd)))) {
                                stores.incrementAndGet(i);
                            }
                        }
                    }
                }));
            }
            threads.add(worker("reader", stop, failures, () -> {
                ThreadLocalRandom rnd = ThreadLocalRandom.current();
                String key = key(rnd.nextInt(keyCount));
                int op = rnd.nextInt(5);
                switch (op) {
                    case 0 -> {
                        byte[] v = cache.getIfPresent(key);
                        if (v != null) {
                            CheckedValue.check(key, v);
                        }
                    }
                    case 1 ->
                        cache.read(key, segment -> {
                            if (!segment.isReadOnly()) {
                                throw new AssertionError("ValueReader got a writable segment");
                            }
                            return CheckedValue.check(key, segment);
                        });
                    case 2 -> {
                        List<String> ks = new ArrayList<>();
                        for (int j = 0; j < 5; j++) {
                            ks.add(key(rnd.nextInt(keyCount)));
                        }
                        Map<String, byte[]> all = cache.getAll(ks);
                        all.forEach((k, v) -> {
                            if (!ks.contains(k)) {
                                throw new AssertionError("getAll returned a key not asked for: " + k);
                            }
                            CheckedValue.check(k, v);
                        });
                    }
                    case 3 -> cache.containsKey(key);
                    default -> {
                        byte[] v = cache.asMap().get(key);
                        if (v != null) {
                            CheckedValue.check(key, v);
                        }
                    }
                }
            }));
            threads.add(worker("remover", stop, failures, () -> {
                ThreadLocalRandom rnd = ThreadLocalRandom.current();
                String key = key(rnd.nextInt(keyCount));
                int op = rnd.nextInt(3);
                if (op == 0) {
                    cache.remove(key);
                } else if (op == 1) {
                    byte[] v = cache.getAndRemove(key);
                    if (v != null) {
                        CheckedValue.check(key, v);
                    }
                } else {
                    byte[] v = cache.getIfPresent(key);
                    if (v != null) {
                        CheckedValue.check(key, v);
                        cache.remove(key, v);
                    }
                }
                // removers are slower than writers so the cache stays full
                if (rnd.nextInt(4) == 0) {
                    Thread.yield();
                }
            }));
            threads.add(worker("computer", stop, failures, () -> {
                ThreadLocalRandom rnd = ThreadLocalRandom.current();
                int i = rnd.nextInt(keyCount);
                String key = key(i);
                List<Long> mine = new ArrayList<>(2);
                int op = rnd.nextInt(5);
                byte[] result =
                        switch (op) {
                            case 0 ->
                                cache.compute(key, (k, old) -> {
                                    if (old != null) {
                                        CheckedValue.check(key, old);
                                    }
                                    if (rnd.nextInt(8) == 0) {
                                        return null;
                                    }
                                    return mine(mine, newValue(key, payloadSize(rnd)));
                                });
                            case 1 -> cache.computeIfAbsent(key, k -> mine(mine, newValue(key, payloadSize(rnd))));
                            case 2 ->
                                cache.computeIfPresent(key, (k, old) -> {
                                    CheckedValue.check(key, old);
                                    return rnd.nextInt(4) == 0 ? null : mine(mine, newValue(key, payloadSize(rnd)));
                                });
                            case 3 ->
                                cache.merge(key, mine(mine, newValue(key, payloadSize(rnd))), (a, b) -> {
                                    CheckedValue.check(key, a);
                                    CheckedValue.check(key, b);
                                    return rnd.nextInt(4) == 0 ? null : mine(mine, newValue(key, payloadSize(rnd)));
                                });
                            default -> cache.get(key, k -> mine(mine, newValue(key, payloadSize(rnd))));
                        };
                if (result != null) {
                    long seq = CheckedValue.check(key, result);
                    if (mine.contains(seq)) {
                        stores.incrementAndGet(i);
                    }
                }
            }));
            threads.add(worker("monitor", stop, failures, () -> {
                ThreadLocalRandom rnd = ThreadLocalRandom.current();
                for (Iterator<Map.Entry<String, byte[]>> it = cache.entries(); it.hasNext(); ) {
                    Map.Entry<String, byte[]> e = it.next();
                    CheckedValue.check(e.getKey(), e.getValue());
                }
                for (Iterator<String> it = cache.keys(); it.hasNext(); ) {
                    index(it.next());
                }
                long size = cache.size();
                if (size > maxEntries) {
                    throw new AssertionError("size() " + size + " exceeds maximumEntries " + maxEntries);
                }
                long used = cache.memoryUsed();
                if (used > cache.memoryMax()) {
                    throw new AssertionError("memoryUsed() " + used + " exceeds memoryMax() " + cache.memoryMax());
                }
                long outstanding = NativeMemory.outstandingBytes() - nativeBefore;
                if (outstanding > cache.memoryMax()) {
                    throw new AssertionError(
                            "native memory held " + outstanding + " exceeds the budget " + cache.memoryMax());
                }
                cache.stats();
                if (rnd.nextInt(3) == 0) {
                    cache.cleanUp();
                }
                if (rnd.nextInt(200) == 0) {
                    cache.clear();
                }
                LockSupport.parkNanos(2_000_000);
            }));

            runFor(threads, stop, MIXED_MILLIS);
            assertNoFailures(failures);

            // Quiescent now. Every stored value was either removed with a notice or is still there.
            assertConservation(cache, keyCount, stores, notices, failures);
            assertThat(cache.size()).isLessThanOrEqualTo(maxEntries);
            CacheStats stats = cache.stats();
            assertThat(stats.evictionCount())
                    .as(
                            "evictions (SIZE notices %d) with a small budget",
                            noticesByCause.get(RemovalCause.SIZE.ordinal()))
                    .isPositive()
                    .isEqualTo(noticesByCause.get(RemovalCause.SIZE.ordinal()));
            assertThat(stats.expirationCount())
                    .as("expirations")
                    .isPositive()
                    .isEqualTo(noticesByCause.get(RemovalCause.EXPIRED.ordinal()));
        } finally {
            cache.close();
        }
        assertNoFailures(failures);
        assertThat(NativeMemory.outstandingBytes())
                .as("native memory after close")
                .isEqualTo(nativeBefore);
    }

    private static byte[] mine(List<Long> mine, byte[] value) {
        mine.add(CheckedValue.sequence(value));
        return value;
    }

    private static void assertConservation(
            LarderCache<String, byte[]> cache,
            int keyCount,
            AtomicLongArray stores,
            AtomicLongArray notices,
            Queue<Throwable> failures)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        List<String> mismatches;
        while (true) {
            cache.cleanUp();
            mismatches = new ArrayList<>();
            for (int i = 0; i < keyCount; i++) {
                String key = key(i);
                byte[] v = cache.getIfPresent(key);
                if (v != null) {
                    CheckedValue.check(key, v);
                }
                long present = v == null ? 0 : 1;
                long s = stores.get(i);
                long n = notices.get(i);
                if (s != n + present) {
                    mismatches.add(key + ": " + s + " stores acknowledged, " + n + " removal notices, "
                            + (present == 1 ? "present" : "absent"));
                }
            }
            if (mismatches.isEmpty() || System.nanoTime() > deadline) {
                break;
            }
            Thread.sleep(20);
        }
        assertNoFailures(failures);
        assertThat(mismatches.subList(0, Math.min(20, mismatches.size())))
                .as(
                        "keys whose stores do not match removal notices + presence (lost or phantom entries),"
                                + " first 20 of %d",
                        mismatches.size())
                .isEmpty();
    }

    // ---------------------------------------------------------------------------------------

    @Test
    @Timeout(60)
    void keysOnlyEverWrittenAreAllPresentWhileTheIndexGrows() throws Exception {
        long nativeBefore = NativeMemory.outstandingBytes();
        int writers = 4;
        int perWriter = 25_000;
        Queue<Throwable> failures = new ConcurrentLinkedQueue<>();
        AtomicLong evictions = new AtomicLong();
        LarderCache<String, byte[]> cache = Larder.newBuilder(Codecs.utf8(), TestCodecs.bytes())
                .maximumBytes(64L << 20)
                .removalListener((key, value, cause) -> {
                    if (cause.wasEvicted()) {
                        evictions.incrementAndGet();
                    }
                })
                .build();
        try {
            long[][] lastSequence = new long[writers][perWriter];
            CountDownLatch writersDone = new CountDownLatch(writers);
            AtomicBoolean stop = new AtomicBoolean();
            List<Thread> threads = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                int t = w;
                threads.add(new Thread(
                        () -> {
                            try {
                                ThreadLocalRandom rnd = ThreadLocalRandom.current();
                                for (int i = 0; i < perWriter; i++) {
                                    String key = ownedKey(t, i);
                                    byte[] v = newValue(key, 16 + rnd.nextInt(80));
                                    cache.put(key, v);
                                    lastSequence[t][i] = CheckedValue.sequence(v);
                                    if (i % 3 == 0 && i > 0) {
                                        int j = rnd.nextInt(i);
                                        String again = ownedKey(t, j);
                                        byte[] v2 = newValue(again, rnd.nextInt(120));
                                        byte[] old = cache.getAndPut(again, v2);
                                        if (old == null) {
                                            throw new AssertionError("lost " + again + " (written before)");
                                        }
                                        if (CheckedValue.check(again, old) != lastSequence[t][j]) {
                                            throw new AssertionError("stale value for " + again);
                                        }
                                        lastSequence[t][j] = CheckedValue.sequence(v2);
                                    }
                                }
                            } catch (Throwable e) {
                                failures.add(e);
                            } finally {
                                writersDone.countDown();
                            }
                        },
                        "owner-" + w));
            }
            threads.add(worker("reader", stop, failures, () -> {
                ThreadLocalRandom rnd = ThreadLocalRandom.current();
                String key = ownedKey(rnd.nextInt(writers), rnd.nextInt(perWriter));
                byte[] v = cache.getIfPresent(key);
                if (v != null) {
                    CheckedValue.check(key, v);
                }
            }));
            threads.add(worker("churn", stop, failures, () -> {
                ThreadLocalRandom rnd = ThreadLocalRandom.current();
                String key = "churn-" + rnd.nextInt(5000);
                if (rnd.nextBoolean()) {
                    cache.put(key, newValue(key, rnd.nextInt(200)));
                } else {
                    cache.remove(key);
                }
            }));
            threads.forEach(Thread::start);
            assertThat(writersDone.await(45, TimeUnit.SECONDS))
                    .as("writers finished")
                    .isTrue();
            stop.set(true);
            for (Thread thread : threads) {
                thread.join(10_000);
                assertThat(thread.isAlive()).as("%s stopped", thread.getName()).isFalse();
            }
            assertNoFailures(failures);

            long missing = 0;
            List<String> examples = new ArrayList<>();
            for (int t = 0; t < writers; t++) {
                for (int i = 0; i < perWriter; i++) {
                    String key = ownedKey(t, i);
                    byte[] v = cache.getIfPresent(key);
                    if (v == null || CheckedValue.check(key, v) != lastSequence[t][i]) {
                        missing++;
                        if (examples.size() < 10) {
                            examples.add(key + (v == null ? " missing" : " stale"));
                        }
                    }
                }
            }
            assertThat(missing)
                    .as("owned keys missing or stale, e.g. %s", examples)
                    .isZero();
            long churnPresent = 0;
            for (int i = 0; i < 5000; i++) {
                if (cache.containsKey("churn-" + i)) {
                    churnPresent++;
                }
            }
            assertThat(evictions.get())
                    .as("evictions with a budget that fits everything")
                    .isZero();
            assertThat(cache.size()).isEqualTo((long) writers * perWriter + churnPresent);
            long iterated = 0;
            for (Iterator<Map.Entry<String, byte[]>> it = cache.entries(); it.hasNext(); ) {
                Map.Entry<String, byte[]> e = it.next();
                CheckedValue.check(e.getKey(), e.getValue());
                iterated++;
            }
            assertThat(iterated).isEqualTo(cache.size());
        } finally {
            cache.close();
        }
        assertThat(NativeMemory.outstandingBytes())
                .as("native memory after close")
                .isEqualTo(nativeBefore);
    }

    // ---------------------------------------------------------------------------------------

    @Test
    @Timeout(60)
    void closeRacingWithRunningThreadsOnlyThrowsIllegalState() throws Exception {
        long nativeBefore = NativeMemory.outstandingBytes();
        for (int round = 0; round < 3; round++) {
            closeRace(100 + 100 * round);
        }
        assertThat(NativeMemory.outstandingBytes())
                .as("native memory after every cache was closed")
                .isEqualTo(nativeBefore);
    }

    private static void closeRace(long runMillis) throws Exception {
        int keyCount = 2000;
        Queue<Throwable> failures = new ConcurrentLinkedQueue<>();
        AtomicBoolean closing = new AtomicBoolean();
        LarderCache<String, byte[]> cache = Larder.newBuilder(Codecs.utf8(), TestCodecs.bytes())
                .maximumBytes(1L << 20)
                .expireAfterWrite(Duration.ofMillis(200))
                .build();
        for (int i = 0; i < keyCount; i += 2) {
            cache.put(key(i), newValue(key(i), 100));
        }
        List<Thread> threads = new ArrayList<>();
        AtomicLong afterClose = new AtomicLong();
        for (int t = 0; t < 6; t++) {
            int role = t;
            threads.add(new Thread(
                    () -> {
                        ThreadLocalRandom rnd = ThreadLocalRandom.current();
                        try {
                            while (true) {
                                String key = key(rnd.nextInt(keyCount));
                                switch ((role + rnd.nextInt(3)) % 6) {
                                    case 0 -> cache.put(key, newValue(key, payloadSize(rnd)));
                                    case 1 -> {
                                        byte[] v = cache.getIfPresent(key);
                                        if (v != null) {
                                            CheckedValue.check(key, v);
                                        }
                                    }
                                    case 2 -> cache.read(key, segment -> CheckedValue.check(key, segment));
                                    case 3 ->
                                        cache.compute(key, (k, old) -> {
                                            if (old != null) {
                                                CheckedValue.check(key, old);
                                            }
                                            return newValue(key, rnd.nextInt(500));
                                        });
                                    case 4 -> {
                                        for (Iterator<Map.Entry<String, byte[]>> it = cache.entries(); it.hasNext(); ) {
                                            Map.Entry<String, byte[]> e = it.next();
                                            CheckedValue.check(e.getKey(), e.getValue());
                                        }
                                    }
                                    default -> {
                                        cache.remove(key);
                                        cache.getAll(List.of(key, key(rnd.nextInt(keyCount))))
                                                .forEach(CheckedValue::check);
                                    }
                                }
                            }
                        } catch (IllegalStateException e) {
                            if (!closing.get()) {
                                failures.add(new AssertionError("IllegalStateException before close()", e));
                            }
                            afterClose.incrementAndGet();
                        } catch (Throwable e) {
                            failures.add(e);
                        }
                    },
                    "racer-" + t));
        }
        threads.forEach(Thread::start);
        Thread.sleep(runMillis);
        closing.set(true);
        Thread secondCloser = new Thread(cache::close, "second-closer");
        secondCloser.start();
        cache.close();
        secondCloser.join(10_000);
        assertThat(cache.isClosed()).isTrue();
        for (Thread thread : threads) {
            thread.join(10_000);
            assertThat(thread.isAlive())
                    .as("%s stopped after close (it should get IllegalStateException)", thread.getName())
                    .isFalse();
        }
        assertNoFailures(failures);
        assertThat(afterClose.get())
                .as("threads that saw IllegalStateException")
                .isEqualTo(6);
    }

    // ---------------------------------------------------------------------------------------

    private static String key(int i) {
        return "k" + i;
    }

    private static String ownedKey(int writer, int i) {
        return "w" + writer + "-" + i;
    }

    private static int index(String key) {
        if (!key.startsWith("k")) {
            throw new AssertionError("unexpected key " + key);
        }
        return Integer.parseInt(key.substring(1));
    }

    @FunctionalInterface
    interface Body {
        void run() throws Exception;
    }

    private static Thread worker(String name, AtomicBoolean stop, Queue<Throwable> failures, Body body) {
        return new Thread(
                () -> {
                    try {
                        while (!stop.get()) {
                            body.run();
                        }
                    } catch (Throwable e) {
                        failures.add(new AssertionError(name + " failed: " + e, e));
                        stop.set(true);
                    }
                },
                name);
    }

    private static void runFor(List<Thread> threads, AtomicBoolean stop, long millis) throws InterruptedException {
        threads.forEach(Thread::start);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (!stop.get() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        stop.set(true);
        for (Thread thread : threads) {
            thread.join(10_000);
            assertThat(thread.isAlive()).as("%s stopped", thread.getName()).isFalse();
        }
    }

    private static void assertNoFailures(Queue<Throwable> failures) {
        if (!failures.isEmpty()) {
            AssertionError error =
                    new AssertionError(failures.size() + " failures in worker threads; first: " + failures.peek());
            failures.stream().limit(5).forEach(error::addSuppressed);
            throw error;
        }
    }
}
