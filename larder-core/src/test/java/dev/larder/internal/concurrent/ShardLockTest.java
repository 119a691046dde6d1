package dev.larder.internal.concurrent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The shard lock: exclusion under contention, reentrancy, a waiter that gets it once it is free. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ShardLockTest {

    @Test
    void onlyOneThreadHoldsItAtATime() throws Exception {
        ShardLock lock = new ShardLock();
        int threads = Math.max(4, 2 * Runtime.getRuntime().availableProcessors());
        int rounds = 20_000;
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        long[] plain = new long[1]; // increments lost if two threads ever hold the lock together
        CyclicBarrier start = new CyclicBarrier(threads);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Thread worker = new Thread(() -> {
                try {
                    start.await();
                    for (int i = 0; i < rounds; i++) {
                        lock.lock();
                        try {
                            if (inside.incrementAndGet() != 1) {
                                overlaps.incrementAndGet();
                            }
                            plain[0]++;
                            if ((i & 255) == 0) {
                                Thread.yield(); // a holder preempted: the others must wait, not enter
                            }
                            inside.decrementAndGet();
                        } finally {
                            lock.unlock();
                        }
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            });
            workers.add(worker);
            worker.start();
        }
        for (Thread worker : workers) {
            worker.join();
        }
        assertThat(failure.get()).isNull();
        assertThat(overlaps.get()).isZero();
        assertThat(plain[0]).isEqualTo((long) threads * rounds);
        assertThat(lock.tryLock()).as("free after every unlock").isTrue();
        lock.unlock();
    }

    @Test
    void isReentrantAndFreedByTheLastUnlock() throws Exception {
        ShardLock lock = new ShardLock();
        lock.lock();
        assertThat(lock.tryLock()).isTrue();
        lock.lock();
        lock.unlock();
        lock.unlock();
        assertThat(lock.isHeldByCurrentThread()).isTrue();
        assertThat(tryLockOnAnotherThread(lock)).as("still held once").isFalse();
        lock.unlock();
        assertThat(lock.isHeldByCurrentThread()).isFalse();
        assertThat(tryLockOnAnotherThread(lock)).as("free").isTrue();
    }

    @Test
    void unlockByAThreadThatDoesNotHoldItThrows() throws Exception {
        ShardLock lock = new ShardLock();
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class);
        lock.lock();
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread other = new Thread(() -> {
            try {
                lock.unlock();
            } catch (Throwable e) {
                thrown.set(e);
            }
        });
        other.start();
        other.join();
        assertThat(thrown.get()).isInstanceOf(IllegalMonitorStateException.class);
        assertThat(tryLockOnAnotherThread(lock)).as("still held by its owner").isFalse();
        lock.unlock();
    }

    @Test
    void aWaiterPastItsSpinsAndYieldsGetsTheLockWhenItIsFreed() throws Exception {
        ShardLock lock = new ShardLock();
        lock.lock();
        CountDownLatch acquired = new CountDownLatch(1);
        Thread waiter = new Thread(() -> {
            lock.lock();
            acquired.countDown();
            lock.unlock();
        });
        waiter.start();
        // Long enough for the waiter to reach its naps (past 128 spins and 128 yields).
        assertThat(acquired.await(200, TimeUnit.MILLISECONDS)).isFalse();
        lock.unlock();
        assertThat(acquired.await(10, TimeUnit.SECONDS)).isTrue();
        waiter.join();
        assertThat(lock.tryLock()).isTrue();
        lock.unlock();
    }

    private static boolean tryLockOnAnotherThread(ShardLock lock) throws InterruptedException {
        boolean[] got = new boolean[1];
        Thread other = new Thread(() -> {
            got[0] = lock.tryLock();
            if (got[0]) {
                lock.unlock();
            }
        });
        other.start();
        other.join();
        return got[0];
    }
}
