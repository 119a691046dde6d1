package dev.larder.internal.policy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.larder.internal.memory.MemoryBudget;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link WindowTinyLfu#touchAhead}: which sketches recording threads load ahead of the drain, and
 * that a sketch grown or freed under them never makes a recording thread fail.
 */
class WindowTinyLfuTouchAheadTest {

    /** Entries whose sketch is exactly the smallest worth touching. */
    private static final long LARGE = (WindowTinyLfu.TOUCH_AHEAD_MIN_BYTES + FrequencySketch.BYTES_PER_ENTRY - 1)
            / FrequencySketch.BYTES_PER_ENTRY;

    private WindowTinyLfu policy;

    @AfterEach
    void free() {
        if (policy != null) {
            policy.free();
        }
    }

    private static WindowTinyLfu policy(long capacity) {
        return new WindowTinyLfu(capacity, 42, new MemoryBudget(1L << 30));
    }

    /** A key whose first counter lies in its block's first word, the word a touch returns. */
    private static long keyCountedInFirstWord(long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        for (; ; ) {
            long key = random.nextLong();
            if ((FrequencySketch.mix(key) & 0x10) == 0) {
                return key;
            }
        }
    }

    @Test
    void aLargeSketchIsTouchedOnceThePolicyCounts() {
        policy = policy(LARGE);
        assertThat(policy.sketchBytes()).isEqualTo(WindowTinyLfu.TOUCH_AHEAD_MIN_BYTES);
        long key = keyCountedInFirstWord(1);
        policy.startCounting();
        assertThat(policy.touchAhead(key)).isZero(); // an empty sketch's word
        policy.record(key);
        assertThat(policy.touchAhead(key))
                .as("the word holding the key's first counter")
                .isNotZero();
    }

    @Test
    void aSmallSketchIsNeverTouched() {
        policy = policy(LARGE / 2 - 1);
        assertThat(policy.sketchBytes()).isLessThan(WindowTinyLfu.TOUCH_AHEAD_MIN_BYTES);
        long key = keyCountedInFirstWord(3);
        policy.startCounting();
        policy.record(key);
        assertThat(policy.frequency(key)).isOne();
        assertThat(policy.touchAhead(key)).isZero();
    }

    @Test
    void aGrownSketchIsTheOneTouched() {
        policy = policy(LARGE / 4); // 256 KiB: too small to touch
        long key = keyCountedInFirstWord(4);
        policy.startCounting();
        policy.record(key);
        assertThat(policy.touchAhead(key)).isZero();
        policy.ensureCapacity(LARGE);
        assertThat(policy.sketchBytes()).isGreaterThanOrEqualTo(WindowTinyLfu.TOUCH_AHEAD_MIN_BYTES);
        assertThat(policy.touchAhead(key)).as("the new sketch starts empty").isZero();
        policy.record(key);
        assertThat(policy.touchAhead(key)).isNotZero();
    }

    @Test
    void afterFreeATouchLoadsNothingAndDoesNotThrow() {
        policy = policy(LARGE);
        long key = keyCountedInFirstWord(5);
        policy.startCounting();
        policy.record(key);
        policy.free();
        assertThat(policy.touchAhead(key)).isZero();
        policy = null;
    }

    /** Threads touching while the sketch grows (each growth frees the old one) and is finally freed. */
    @Test
    void touchesRacingWithGrowthAndFreeNeverThrow() throws Exception {
        policy = policy(LARGE);
        policy.startCounting();
        int threads = 2;
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CountDownLatch started = new CountDownLatch(threads);
        List<Thread> touchers = new ArrayList<>();
        long[] sink = new long[threads];
        for (int t = 0; t < threads; t++) {
            int id = t;
            Thread toucher = new Thread(() -> {
                SplittableRandom random = new SplittableRandom(id);
                started.countDown();
                try {
                    while (!stop.get()) {
                        sink[id] += policy.touchAhead(random.nextLong());
                    }
                } catch (Throwable e) {
                    failure.set(e);
                }
            });
            touchers.add(toucher);
            toucher.start();
        }
        started.await();
        for (long capacity = LARGE * 2; capacity <= LARGE * 16; capacity *= 2) {
            policy.ensureCapacity(capacity);
            Thread.sleep(5);
        }
        policy.free();
        Thread.sleep(5);
        stop.set(true);
        for (Thread toucher : touchers) {
            toucher.join();
        }
        assertThat(failure.get()).isNull();
        assertThat(policy.touchAhead(7)).isZero();
        policy = null;
    }
}
