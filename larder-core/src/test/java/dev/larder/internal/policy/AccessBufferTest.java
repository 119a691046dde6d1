package dev.larder.internal.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.larder.testing.AllocationCounter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Unit tests of the striped lossy access buffer: order, lapping, exact counts, and what racing
 * producers may and may not do to what the consumer sees.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AccessBufferTest {

    private static List<Long> drain(AccessBuffer buffer) {
        List<Long> out = new ArrayList<>();
        int n = buffer.drainTo((hash, ref) -> out.add(hash));
        assertThat(n).isEqualTo(out.size());
        return out;
    }

    // ---------------------------------------------------------------------------------------
    // construction

    @ParameterizedTest
    @ValueSource(ints = {0, -1, -4, 3, 6, 12, Integer.MIN_VALUE, Integer.MAX_VALUE})
    void rejectsStripesThatAreNotPositivePowersOfTwo(int stripes) {
        assertThatThrownBy(() -> new AccessBuffer(stripes, 16))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("stripes")
                .hasMessageContaining(String.valueOf(stripes));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, -1, -4, 3, 6, 12, Integer.MIN_VALUE, Integer.MAX_VALUE})
    void rejectsCapacitiesThatAreNotPositivePowersOfTwo(int capacity) {
        assertThatThrownBy(() -> new AccessBuffer(4, capacity))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("capacityPerStripe")
                .hasMessageContaining(String.valueOf(capacity));
    }

    @Test
    void rejectsBuffersTooLargeForAnArray() {
        assertThatThrownBy(() -> new AccessBuffer(1 << 16, 1 << 16)).isInstanceOf(IllegalArgumentException.class);
    }

    @ParameterizedTest
    @CsvSource({"1,1", "1,16", "8,1", "64,32"})
    void acceptsPowersOfTwo(int stripes, int capacity) {
        AccessBuffer buffer = new AccessBuffer(stripes, capacity);
        assertThat(buffer.pending()).isZero();
        buffer.record(0, 5, 6);
        List<long[]> pairs = new ArrayList<>();
        buffer.drainTo((hash, ref) -> pairs.add(new long[] {hash, ref}));
        assertThat(pairs).hasSize(1);
        assertThat(pairs.get(0)).containsExactly(5L, 6L);
    }

    // ---------------------------------------------------------------------------------------
    // one thread

    @Test
    void drainsInRecordOrderAndReturnsTheTail() {
        AccessBuffer buffer = new AccessBuffer(4, 8);
        for (long h = 1; h <= 5; h++) {
            assertThat(buffer.record(0, h * 1000, AccessBuffer.NO_REF)).isEqualTo(h);
        }
        assertThat(buffer.pending()).isEqualTo(5);
        assertThat(drain(buffer)).containsExactly(1000L, 2000L, 3000L, 4000L, 5000L);
        assertThat(buffer.pending()).isZero();
        assertThat(drain(buffer)).isEmpty();
    }

    @Test
    void aLappedStripeKeepsItsNewestAccesses() {
        AccessBuffer buffer = new AccessBuffer(1, 8);
        for (long h = 1; h <= 8; h++) {
            buffer.record(0, h, h);
        }
        assertThat(buffer.isFull(0)).isTrue();
        for (long h = 9; h <= 20; h++) {
            buffer.record(0, h, h);
        }
        assertThat(buffer.pending()).isEqualTo(8);
        assertThat(drain(buffer)).containsExactly(13L, 14L, 15L, 16L, 17L, 18L, 19L, 20L);
        assertThat(buffer.isFull(0)).isFalse();
    }

    @Test
    void wrapsAroundTheRingManyTimes() {
        AccessBuffer buffer = new AccessBuffer(2, 4);
        long next = 1;
        for (int round = 0; round < 1000; round++) {
            int n = round % 5; // 0..4, including exactly full
            List<Long> expected = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                buffer.record(0, next, -next);
                expected.add(next++);
            }
            assertThat(buffer.pending()).isEqualTo(n);
            assertThat(drain(buffer)).isEqualTo(expected);
        }
    }

    @Test
    void aTailMovedBackByARacingProducerRestartsFromIt() {
        AccessBuffer buffer = new AccessBuffer(1, 8);
        buffer.record(0, 1, 1);
        buffer.record(0, 2, 2);
        buffer.record(0, 3, 3);
        assertThat(drain(buffer)).containsExactly(1L, 2L, 3L);
        // A producer that read the tail at 1 publishes 2 after the drain passed 3.
        buffer.counters[buffer.counterBase(0) + 8] = 2;
        assertThat(drain(buffer)).isEmpty();
        buffer.record(0, 4, 4);
        assertThat(drain(buffer)).containsExactly(4L);
    }

    @Test
    void threadIndicesTakeTheStripesInTurn() {
        AccessBuffer buffer = new AccessBuffer(4, 8);
        for (int thread = 0; thread < 6; thread++) {
            buffer.record(thread, 100 + thread, thread);
        }
        // Drained stripe by stripe: indices 0 and 4 share stripe 0, 1 and 5 stripe 1, 2 and 3
        // have one each.
        assertThat(drain(buffer)).containsExactly(100L, 104L, 101L, 105L, 102L, 103L);
        for (int thread = 0; thread < 4; thread++) {
            buffer.record(thread, thread, thread);
            buffer.record(thread, thread, thread);
            assertThat(buffer.isFull(thread)).isFalse();
        }
        for (int i = 0; i < 6; i++) {
            buffer.record(2, 7, 7);
        }
        assertThat(buffer.isFull(2)).isTrue();
        assertThat(buffer.isFull(6)).as("index 6 is stripe 2").isTrue();
        assertThat(buffer.isFull(1)).isFalse();
        // Indices wrap past Integer.MAX_VALUE into negative numbers: still a stripe each.
        drain(buffer);
        buffer.record(-1, 41, 41);
        buffer.record(Integer.MIN_VALUE, 42, 42);
        assertThat(drain(buffer)).containsExactly(42L, 41L); // stripes 0 and 3
        buffer.count(-1);
        buffer.count(Integer.MIN_VALUE + 1);
        assertThat(buffer.counted()).isEqualTo(2);
    }

    /**
     * The loops over stripes stop at the threads numbered so far: a drain that read the count
     * before a thread got its number leaves that thread's stripe to the next drain, which loses
     * nothing of it; the sums take it in from then on.
     */
    @Test
    void aDrainLooksAtTheStripesOfTheThreadsNumberedSoFar() {
        long[] numbered = {2};
        AccessBuffer buffer = new AccessBuffer(8, 8, () -> numbered[0]);
        buffer.record(0, 10, 0);
        buffer.record(1, 11, 1);
        buffer.record(5, 15, 5); // a thread numbered after the drain below reads the count
        buffer.count(5);
        assertThat(drain(buffer)).containsExactly(10L, 11L);
        assertThat(buffer.counted()).isZero();
        numbered[0] = 6;
        buffer.record(5, 16, 5);
        assertThat(buffer.pending()).isEqualTo(2);
        assertThat(drain(buffer)).containsExactly(15L, 16L);
        assertThat(buffer.counted()).isEqualTo(1);
        numbered[0] = Long.MAX_VALUE; // more threads than stripes: every stripe
        buffer.record(7, 17, 7);
        buffer.record(15, 25, 15); // stripe 7 too
        assertThat(drain(buffer)).containsExactly(17L, 25L);
    }

    @Test
    void countsAreExactAndCanBeTakenBack() {
        AccessBuffer buffer = new AccessBuffer(4, 2);
        for (int i = 0; i < 100; i++) {
            buffer.count(0);
            buffer.record(0, i, i); // laps many times: counting is not recording
        }
        buffer.uncount(0);
        assertThat(buffer.counted()).isEqualTo(99);
        drain(buffer);
        assertThat(buffer.counted()).isEqualTo(99);
    }

    @Test
    void theFirstThreadsCountOnCountersOfTheirOwnAndLaterOnesOnTheSharedOne() {
        AccessBuffer buffer = new AccessBuffer(4, 2);
        int base = buffer.counterBase(1);
        // Thread 1 is stripe 1's sole thread; thread 5 (and 2^32 + 1, whose low bits are 1) share it.
        assertThat(buffer.count(1)).isEqualTo(1);
        assertThat(buffer.count(1)).isEqualTo(2);
        assertThat(buffer.count(5)).isEqualTo(1);
        assertThat(buffer.count((1L << 32) + 1)).isEqualTo(2);
        assertThat(buffer.counters[base + 10]).as("the sole thread's counter").isEqualTo(2);
        assertThat(buffer.counters[base + 9]).as("the shared counter").isEqualTo(2);
        buffer.uncount(1);
        buffer.uncount(5);
        assertThat(buffer.counters[base + 10]).isEqualTo(1);
        assertThat(buffer.counters[base + 9]).isEqualTo(1);
        assertThat(buffer.counted()).isEqualTo(2);
    }

    @Test
    void aSinkThatThrowsLosesOnlyThatDrain() {
        AccessBuffer buffer = new AccessBuffer(1, 8);
        buffer.record(0, 1, 1);
        buffer.record(0, 2, 2);
        buffer.record(0, 3, 3);
        List<Long> seen = new ArrayList<>();
        assertThatThrownBy(() -> buffer.drainTo((h, ref) -> {
                    if (h == 2) {
                        throw new IllegalStateException("sink failed");
                    }
                    seen.add(h);
                }))
                .hasMessage("sink failed");
        assertThat(seen).containsExactly(1L);
        buffer.record(0, 4, 4);
        assertThat(drain(buffer)).containsExactly(4L);
    }

    @Test
    void recordCountAndDrainAllocateNothing() {
        AccessBuffer buffer = new AccessBuffer(4, 64);
        long[] sum = new long[1];
        AccessBuffer.Sink sink = (h, ref) -> sum[0] += h + ref;
        AllocationCounter counter = AllocationCounter.create();
        long bytes = counter.fewestBytes(() -> {
            for (int round = 0; round < 10_000; round++) {
                for (long h = 1; h <= 40; h++) {
                    buffer.count(0);
                    buffer.record(0, h, h);
                }
                buffer.drainTo(sink);
            }
        });
        assertThat(sum[0]).isPositive();
        assertThat(bytes)
                .as("bytes allocated by 400,000 records and counts and 10,000 drains")
                .isLessThan(1024);
    }

    // ---------------------------------------------------------------------------------------
    // many threads

    /**
     * Producers on few stripes record distinct values (producer in the high half, sequence number
     * in the low), each with its complement as the reference, and count each one, while a consumer
     * drains. The buffer may lose values, and may pair one producer's hash with another's
     * reference; it must never invent one: every drained hash and every drained reference was
     * recorded. Counting is exact whatever the recording lost, with the stripes' sole threads
     * (numbers below the stripe count) counting without atomics beside the others.
     */
    @ParameterizedTest
    @CsvSource({"1,16", "2,16", "4,4", "16,64"})
    void racingProducersLoseButNeverInventAndCountExactly(int stripes, int capacity) throws Exception {
        int producers = 4;
        int perProducer = 200_000;
        AccessBuffer buffer = new AccessBuffer(stripes, capacity);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        long[] drained = new long[1];
        AccessBuffer.Sink sink = (value, ref) -> {
            drained[0]++;
            if (!recorded(value, producers, perProducer) || !recorded(~ref, producers, perProducer)) {
                failure.compareAndSet(
                        null,
                        new AssertionError(
                                "never recorded: " + Long.toHexString(value) + " / " + Long.toHexString(ref)));
            }
        };
        CountDownLatch start = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(producers);
        List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < producers; p++) {
            long high = (long) (p + 1) << 32;
            int thread = p; // four producers on fewer stripes share them
            threads.add(Thread.ofPlatform().daemon().start(() -> {
                try {
                    start.await();
                    for (int i = 0; i < perProducer; i++) {
                        buffer.count(thread);
                        if (i % 7 == 0) { // a count taken back, racing the other threads' counts
                            buffer.count(thread);
                            buffer.uncount(thread);
                        }
                        buffer.record(thread, high | i, ~(high | i));
                    }
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                } finally {
                    done.countDown();
                }
            }));
        }
        AtomicBoolean stop = new AtomicBoolean();
        Thread consumer = Thread.ofPlatform().daemon().start(() -> {
            try {
                start.await();
                while (!stop.get()) {
                    if (buffer.drainTo(sink) == 0) {
                        Thread.onSpinWait();
                    }
                }
            } catch (Throwable t) {
                failure.compareAndSet(null, t);
            }
        });
        start.countDown();
        assertThat(done.await(50, TimeUnit.SECONDS)).isTrue();
        stop.set(true);
        consumer.join();
        for (Thread t : threads) {
            t.join();
        }
        buffer.drainTo(sink);
        assertThat(failure.get()).isNull();
        assertThat(buffer.counted()).isEqualTo((long) producers * perProducer);
        assertThat(drained[0]).as("accesses drained").isPositive();
    }

    private static boolean recorded(long value, int producers, int perProducer) {
        int p = (int) (value >>> 32) - 1;
        int i = (int) value;
        return p >= 0 && p < producers && i >= 0 && i < perProducer;
    }
}
