package dev.larder.internal.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.larder.testing.AllocationCounter;
import java.util.ArrayList;
import java.util.BitSet;
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

/** Unit tests of the striped lossy read buffer: order, capacity, lossiness, and concurrency. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ReadBufferTest {

    private static List<Long> drain(ReadBuffer buffer) {
        List<Long> out = new ArrayList<>();
        int n = buffer.drainTo(out::add);
        assertThat(n).isEqualTo(out.size());
        return out;
    }

    // ---------------------------------------------------------------------------------------
    // construction

    @ParameterizedTest
    @ValueSource(ints = {0, -1, -4, 3, 6, 12, Integer.MIN_VALUE, Integer.MAX_VALUE})
    void rejectsStripesThatAreNotPositivePowersOfTwo(int stripes) {
        assertThatThrownBy(() -> new ReadBuffer(stripes, 16))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("stripes")
                .hasMessageContaining(String.valueOf(stripes));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, -1, -4, 3, 6, 12, Integer.MIN_VALUE, Integer.MAX_VALUE})
    void rejectsCapacitiesThatAreNotPositivePowersOfTwo(int capacity) {
        assertThatThrownBy(() -> new ReadBuffer(4, capacity))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("capacityPerStripe")
                .hasMessageContaining(String.valueOf(capacity));
    }

    @Test
    void rejectsBuffersTooLargeForAnArray() {
        assertThatThrownBy(() -> new ReadBuffer(1 << 16, 1 << 16)).isInstanceOf(IllegalArgumentException.class);
    }

    @ParameterizedTest
    @CsvSource({"1,1", "1,16", "8,1", "64,32"})
    void acceptsPowersOfTwo(int stripes, int capacity) {
        ReadBuffer buffer = new ReadBuffer(stripes, capacity);
        assertThat(buffer.pending()).isZero();
        assertThat(buffer.offer(5)).isTrue();
        assertThat(drain(buffer)).containsExactly(5L);
    }

    // ---------------------------------------------------------------------------------------
    // one thread

    @Test
    void drainsInOfferOrderWithExactCounts() {
        ReadBuffer buffer = new ReadBuffer(4, 8);
        for (long h = 1; h <= 5; h++) {
            assertThat(buffer.offer(h * 1000)).isTrue();
        }
        assertThat(buffer.pending()).isEqualTo(5);
        assertThat(drain(buffer)).containsExactly(1000L, 2000L, 3000L, 4000L, 5000L);
        assertThat(buffer.pending()).isZero();
        assertThat(drain(buffer)).isEmpty();
    }

    @Test
    void aFullStripeDropsUntilDrained() {
        ReadBuffer buffer = new ReadBuffer(4, 8);
        for (long h = 1; h <= 8; h++) {
            assertThat(buffer.offer(h)).isTrue();
        }
        assertThat(buffer.offer(9)).isFalse();
        assertThat(buffer.offer(10)).isFalse();
        assertThat(buffer.pending()).isEqualTo(8);
        assertThat(drain(buffer)).containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L);
        assertThat(buffer.offer(11)).isTrue();
        assertThat(drain(buffer)).containsExactly(11L);
    }

    @Test
    void wrapsAroundTheRingManyTimes() {
        ReadBuffer buffer = new ReadBuffer(2, 4);
        long next = 1;
        for (int round = 0; round < 1000; round++) {
            int n = round % 5; // 0..4, including exactly full
            List<Long> expected = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                assertThat(buffer.offer(next)).isTrue();
                expected.add(next++);
            }
            assertThat(buffer.pending()).isEqualTo(n);
            assertThat(drain(buffer)).isEqualTo(expected);
        }
    }

    @Test
    void extremeHashesSurviveAndZeroBecomesOne() {
        ReadBuffer buffer = new ReadBuffer(1, 8);
        buffer.offer(0);
        buffer.offer(-1);
        buffer.offer(Long.MIN_VALUE);
        buffer.offer(Long.MAX_VALUE);
        assertThat(drain(buffer)).containsExactly(1L, -1L, Long.MIN_VALUE, Long.MAX_VALUE);
    }

    @Test
    void aClaimedButUnwrittenSlotEndsTheDrainOfItsStripe() {
        ReadBuffer buffer = new ReadBuffer(1, 8);
        buffer.offer(10);
        // A producer that moved the tail but has not written its slot yet.
        buffer.counters[buffer.tailIndex(0)]++;
        buffer.offer(30);
        assertThat(buffer.pending()).isEqualTo(3);
        assertThat(drain(buffer)).containsExactly(10L);
        assertThat(buffer.pending()).isEqualTo(2);
        assertThat(drain(buffer)).isEmpty();
        // The producer writes: the drain resumes where it stopped.
        buffer.slots[buffer.slotIndex(0, 1)] = 20;
        assertThat(drain(buffer)).containsExactly(20L, 30L);
        assertThat(buffer.pending()).isZero();
    }

    @Test
    void aSinkThatThrowsLosesOnlyTheHashItWasGiven() {
        ReadBuffer buffer = new ReadBuffer(1, 8);
        buffer.offer(1);
        buffer.offer(2);
        buffer.offer(3);
        List<Long> seen = new ArrayList<>();
        assertThatThrownBy(() -> buffer.drainTo(h -> {
                    if (h == 2) {
                        throw new IllegalStateException("sink failed");
                    }
                    seen.add(h);
                }))
                .hasMessage("sink failed");
        assertThat(seen).containsExactly(1L);
        assertThat(drain(buffer)).containsExactly(3L);
    }

    @Test
    void offerAndDrainAllocateNothing() {
        ReadBuffer buffer = new ReadBuffer(4, 64);
        long[] sum = new long[1];
        java.util.function.LongConsumer sink = h -> sum[0] += h;
        AllocationCounter counter = AllocationCounter.create();
        long bytes = counter.fewestBytes(() -> {
            for (int round = 0; round < 10_000; round++) {
                for (long h = 1; h <= 40; h++) {
                    buffer.offer(h);
                }
                buffer.drainTo(sink);
            }
        });
        assertThat(sum[0]).isPositive();
        assertThat(bytes)
                .as("bytes allocated by 400,000 offers and 10,000 drains")
                .isLessThan(1024);
    }

    // ---------------------------------------------------------------------------------------
    // many threads

    /**
     * Producers offer distinct values (producer in the high half, sequence number in the low)
     * and count what was dropped, while a consumer drains. Every drained value was offered, none
     * twice, each producer's values arrive in its order, and drained + dropped == offered.
     */
    @ParameterizedTest
    @CsvSource({"1,16", "2,16", "4,4", "16,64"})
    void concurrentProducersLoseNothingSilentlyAndDuplicateNothing(int stripes, int capacity) throws Exception {
        int producers = 4;
        int perProducer = 200_000;
        ReadBuffer buffer = new ReadBuffer(stripes, capacity);
        BitSet[] seen = new BitSet[producers];
        long[] lastSeen = new long[producers];
        long[] dropped = new long[producers];
        AtomicReference<Throwable> failure = new AtomicReference<>();
        long[] drained = new long[1];
        java.util.function.LongConsumer sink = value -> {
            int p = (int) (value >>> 32) - 1;
            int i = (int) value;
            if (p < 0 || p >= producers || i < 0 || i >= perProducer) {
                failure.compareAndSet(null, new AssertionError("never offered: " + Long.toHexString(value)));
                return;
            }
            if (seen[p].get(i)) {
                failure.compareAndSet(null, new AssertionError("drained twice: " + Long.toHexString(value)));
            }
            if (i < lastSeen[p]) {
                failure.compareAndSet(null, new AssertionError("out of order: " + Long.toHexString(value)));
            }
            seen[p].set(i);
            lastSeen[p] = i;
            drained[0]++;
        };
        for (int p = 0; p < producers; p++) {
            seen[p] = new BitSet(perProducer);
        }

        CountDownLatch start = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(producers);
        List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < producers; p++) {
            int producer = p;
            threads.add(Thread.ofPlatform().daemon().start(() -> {
                try {
                    start.await();
                    long high = (long) (producer + 1) << 32;
                    for (int i = 0; i < perProducer; i++) {
                        if (!buffer.offer(high | i)) {
                            dropped[producer]++;
                        }
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
        // Every producer has finished its writes: one last drain takes the rest.
        buffer.drainTo(sink);
        assertThat(failure.get()).isNull();
        assertThat(buffer.pending()).isZero();

        long offered = (long) producers * perProducer;
        long totalDropped = 0;
        for (long d : dropped) {
            totalDropped += d;
        }
        assertThat(drained[0] + totalDropped).isEqualTo(offered);
        assertThat(drained[0]).isPositive();
        long distinct = 0;
        for (BitSet s : seen) {
            distinct += s.cardinality();
        }
        assertThat(distinct).isEqualTo(drained[0]);
    }
}
