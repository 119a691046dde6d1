package dev.larder;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.larder.testing.NativeLeakCheck;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Native memory comes back on close, and nothing after close can crash the JVM. */
class CloseAndLeakTest {
    private NativeLeakCheck leaks;

    @BeforeEach
    void recordNativeMemory() {
        leaks = new NativeLeakCheck();
    }

    @AfterEach
    void everythingReturned() {
        leaks.closeAllAndCheck();
    }

    private <C extends LarderCache<?, ?>> C track(C cache) {
        return leaks.track(cache);
    }

    private long held() {
        return leaks.held();
    }

    @Test
    void emptyCacheReturnsItsMemory() {
        LarderCache<String, String> cache = track(Larder.newBuilder(Codecs.utf8(), Codecs.utf8())
                .maximumBytes(8L << 20)
                .build());
        assertThat(held()).isBetween(0L, 8L << 20);
        cache.close();
        assertThat(held()).isZero();
    }

    @Test
    void cacheWithDataReturnsItsMemory() {
        LarderCache<String, byte[]> cache = track(Larder.newBuilder(Codecs.utf8(), Codecs.bytes())
                .maximumBytes(16L << 20)
                .build());
        for (int i = 0; i < 20_000; i++) {
            cache.put("key-" + i, CheckedValue.create("key-" + i, i, i % 200));
        }
        assertThat(cache.size()).isEqualTo(20_000);
        assertThat(held()).as("native memory held with data").isPositive().isLessThanOrEqualTo(16L << 20);
        assertThat(cache.memoryUsed()).isPositive().isLessThanOrEqualTo(cache.memoryMax());
        cache.close();
        assertThat(held()).isZero();
    }

    @Test
    void largeValuesOfSeveralMegabytesAreReturned() {
        long budget = 32L << 20;
        LarderCache<String, byte[]> cache = track(Larder.newBuilder(Codecs.utf8(), Codecs.bytes())
                .maximumBytes(budget)
                .build());
        byte[] big = new byte[3 << 20];
        for (int i = 0; i < 25; i++) { // 75 MB through a 32 MB cache: large values get evicted
            Arrays.fill(big, (byte) i);
            cache.put("big-" + i, big);
            assertThat(held()).as("native memory after large value #%d", i).isLessThanOrEqualTo(budget);
            byte[] back = cache.getIfPresent("big-" + i);
            assertThat(back).as("large value #%d just written", i).isNotNull().hasSize(big.length);
            assertThat(back[0]).isEqualTo((byte) i);
            assertThat(back[back.length - 1]).isEqualTo((byte) i);
        }
        assertThat(cache.size()).isBetween(1L, 10L);
        // replacing one key over and over must not pile up
        for (int i = 0; i < 20; i++) {
            cache.put("same", new byte[(4 << 20) + i]);
            assertThat(held()).isLessThanOrEqualTo(budget);
        }
        cache.cleanUp();
        assertThat(cache.memoryUsed()).isLessThanOrEqualTo(budget);
        cache.close();
        assertThat(held()).isZero();
    }

    @Test
    void cacheAfterManyEvictionsReturnsItsMemory() {
        long budget = 256 * 1024;
        LarderCache<String, byte[]> cache = track(Larder.newBuilder(Codecs.utf8(), Codecs.bytes())
                .maximumBytes(budget)
                .expireAfterWrite(Duration.ofMinutes(5))
                .build());
        for (int i = 0; i < 50_000; i++) {
            String key = "key-" + (i % 7000);
            cache.put(key, CheckedValue.create(key, i, (i * 37) % 1500));
            if (i % 1000 == 0) {
                assertThat(held()).as("native memory while evicting").isLessThanOrEqualTo(budget);
                assertThat(cache.memoryUsed()).isLessThanOrEqualTo(budget);
            }
        }
        assertThat(cache.stats().evictionCount()).isPositive();
        cache.close();
        assertThat(held()).isZero();
    }

    @Test
    void manyCachesOpenAtOnceAreAllReturned() {
        List<LarderCache<Long, Long>> caches = new ArrayList<>();
        for (int c = 0; c < 20; c++) {
            LarderCache<Long, Long> cache = track(Larder.newBuilder(Codecs.longs(), Codecs.longs())
                    .maximumBytes(1L << 20)
                    .build());
            for (long i = 0; i < 1000; i++) {
                cache.put(i, i * c);
            }
            caches.add(cache);
        }
        assertThat(held()).isPositive().isLessThanOrEqualTo(20L << 20);
        for (int c = 0; c < caches.size(); c++) {
            assertThat(caches.get(c).getIfPresent(999L)).isEqualTo(999L * c);
            caches.get(c).close();
        }
        assertThat(held()).isZero();
    }

    @Test
    void builtButFailedPutsLeakNothing() {
        LarderCache<String, byte[]> cache = track(Larder.newBuilder(Codecs.utf8(), Codecs.bytes())
                .maximumBytes(LarderBuilder.MIN_MAXIMUM_BYTES)
                .build());
        for (int i = 0; i < 100; i++) {
            assertThatThrownBy(() -> cache.put("huge", new byte[1 << 20])).isInstanceOf(EntryTooLargeException.class);
        }
        cache.close();
        assertThat(held()).isZero();
    }

    // ------------------------------------------------------------------ ValueReader views

    @Test
    void valueReaderViewIsReadOnlyExactAndBoundsChecked() {
        try (LarderCache<String, byte[]> cache = Larder.newBuilder(Codecs.utf8(), Codecs.bytes())
                .maximumBytes(1L << 20)
                .build()) {
            byte[] value = {1, 2, 3, 4, 5, 6, 7};
            cache.put("k", value);
            Integer sum = cache.read("k", segment -> {
                assertThat(segment.byteSize()).isEqualTo(value.length);
                assertThat(segment.isReadOnly()).isTrue();
                assertThatThrownBy(() -> segment.set(ValueLayout.JAVA_BYTE, 0, (byte) 9))
                        .as("writing through a read-only view")
                        .isInstanceOfAny(IllegalArgumentException.class, UnsupportedOperationException.class);
                assertThatThrownBy(() -> segment.get(ValueLayout.JAVA_BYTE, value.length))
                        .isInstanceOf(IndexOutOfBoundsException.class);
                assertThatThrownBy(() -> segment.get(ValueLayout.JAVA_BYTE, -1))
                        .isInstanceOf(IndexOutOfBoundsException.class);
                int s = 0;
                for (byte b : segment.toArray(ValueLayout.JAVA_BYTE)) {
                    s += b;
                }
                return s;
            });
            assertThat(sum).isEqualTo(28);
            assertThat(cache.getIfPresent("k")).containsExactly(value);
            AtomicBoolean called = new AtomicBoolean();
            Integer absent = cache.read("absent", segment -> {
                called.set(true);
                return 1;
            });
            assertThat(absent).isNull();
            assertThat(called).as("reader called for an absent key").isFalse();
        }
    }

    @Test
    void valueReaderViewUsedAfterTheCallbackOrAfterCloseThrowsInsteadOfCrashing() {
        LarderCache<String, byte[]> cache = track(Larder.newBuilder(Codecs.utf8(), Codecs.bytes())
                .maximumBytes(1L << 20)
                .build());
        byte[] value = new byte[100];
        Arrays.fill(value, (byte) 7);
        cache.put("k", value);
        cache.put("large", new byte[200_000]); // a large value lives in its own extent
        AtomicReference<MemorySegment> escaped = new AtomicReference<>();
        AtomicReference<MemorySegment> escapedLarge = new AtomicReference<>();
        cache.read("k", segment -> {
            escaped.set(segment);
            return null;
        });
        cache.read("large", segment -> {
            escapedLarge.set(segment);
            return null;
        });
        // After the callback: either IllegalStateException or bytes of some entry; never a crash.
        try {
            escaped.get().get(ValueLayout.JAVA_BYTE, 0);
        } catch (IllegalStateException expected) {
            // fine
        }
        // Churn so the memory is reused, then read the stale view again.
        for (int i = 0; i < 5000; i++) {
            cache.put("k", new byte[100 + (i % 50)]);
            cache.put("other" + i, new byte[300]);
        }
        cache.remove("large");
        cache.cleanUp();
        for (MemorySegment stale : List.of(escaped.get(), escapedLarge.get())) {
            try {
                stale.get(ValueLayout.JAVA_BYTE, 0);
                stale.get(ValueLayout.JAVA_BYTE, stale.byteSize() - 1);
            } catch (IllegalStateException expected) {
                // fine
            }
        }
        cache.close();
        assertThatIllegalStateException()
                .as("reading a ValueReader view after close")
                .isThrownBy(() -> escaped.get().get(ValueLayout.JAVA_BYTE, 0));
        assertThatIllegalStateException()
                .as("reading a large value's ValueReader view after close")
                .isThrownBy(() -> escapedLarge.get().get(ValueLayout.JAVA_BYTE, 0));
    }

    @Test
    @Timeout(30)
    void closeWaitsForOrFencesARunningReader() throws Exception {
        LarderCache<String, byte[]> cache = track(Larder.newBuilder(Codecs.utf8(), Codecs.bytes())
                .maximumBytes(1L << 20)
                .build());
        cache.put("k", CheckedValue.create("k", 1, 5000));
        CountDownLatch inside = new CountDownLatch(1);
        AtomicReference<Throwable> readerOutcome = new AtomicReference<>();
        Thread reader = new Thread(() -> {
            try {
                cache.read("k", segment -> {
                    inside.countDown();
                    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300);
                    while (System.nanoTime() < end) {
                        CheckedValue.check("k", segment); // valid, or IllegalStateException once closed
                    }
                    return null;
                });
            } catch (Throwable t) {
                readerOutcome.set(t);
            }
        });
        reader.start();
        assertThat(inside.await(10, TimeUnit.SECONDS)).isTrue();
        cache.close();
        reader.join(10_000);
        assertThat(reader.isAlive()).isFalse();
        Throwable t = readerOutcome.get();
        if (t != null) {
            assertThat(t)
                    .as("a reader racing with close may only see IllegalStateException")
                    .isInstanceOf(IllegalStateException.class);
        }
    }

    // ------------------------------------------------------------------ close under load

    @Test
    @Timeout(60)
    void closeWhileFourThreadsHammerOnlyThrowsIllegalState() throws Exception {
        for (int round = 0; round < 5; round++) {
            LarderCache<String, byte[]> cache = track(Larder.newBuilder(Codecs.utf8(), Codecs.bytes())
                    .maximumBytes(512 * 1024)
                    .build());
            AtomicBoolean closing = new AtomicBoolean();
            Queue<Throwable> failures = new ConcurrentLinkedQueue<>();
            List<Thread> threads = new ArrayList<>();
            CountDownLatch started = new CountDownLatch(4);
            for (int t = 0; t < 4; t++) {
                int role = t;
                threads.add(new Thread(() -> {
                    ThreadLocalRandom rnd = ThreadLocalRandom.current();
                    started.countDown();
                    try {
                        while (true) {
                            String key = "k" + rnd.nextInt(3000);
                            switch (role) {
                                case 0 -> cache.put(key, CheckedValue.create(key, rnd.nextLong(), rnd.nextInt(2000)));
                                case 1 -> {
                                    byte[] v = cache.getIfPresent(key);
                                    if (v != null) {
                                        CheckedValue.check(key, v);
                                    }
                                }
                                case 2 -> cache.read(key, segment -> CheckedValue.check(key, segment));
                                default -> {
                                    if (rnd.nextBoolean()) {
                                        cache.put(key, CheckedValue.create(key, 1, 50_000));
                                    } else {
                                        for (Iterator<Map.Entry<String, byte[]>> it = cache.entries(); it.hasNext(); ) {
                                            Map.Entry<String, byte[]> e = it.next();
                                            CheckedValue.check(e.getKey(), e.getValue());
                                        }
                                    }
                                }
                            }
                        }
                    } catch (IllegalStateException e) {
                        if (!closing.get()) {
                            failures.add(new AssertionError("IllegalStateException before close", e));
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                }));
            }
            threads.forEach(Thread::start);
            started.await();
            Thread.sleep(50 + 50 * round);
            closing.set(true);
            cache.close();
            for (Thread thread : threads) {
                thread.join(10_000);
                assertThat(thread.isAlive()).isFalse();
            }
            assertThat(failures)
                    .as("round %d: exceptions other than IllegalStateException", round)
                    .isEmpty();
            assertThat(held()).as("round %d: native memory after close", round).isZero();
        }
    }
}
