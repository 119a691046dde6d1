package dev.larder.internal.memory;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class MemoryBudgetTest {

    @Test
    void reservesUpToTheMaximumExactly() {
        MemoryBudget budget = new MemoryBudget(1000);
        assertThat(budget.maximum()).isEqualTo(1000);
        assertThat(budget.tryReserve(600)).isTrue();
        assertThat(budget.tryReserve(401)).isFalse();
        assertThat(budget.used()).isEqualTo(600);
        assertThat(budget.tryReserve(400)).isTrue();
        assertThat(budget.available()).isZero();
        assertThat(budget.tryReserve(1)).isFalse();
        budget.release(1);
        assertThat(budget.available()).isEqualTo(1);
        assertThat(budget.tryReserve(1)).isTrue();
        budget.release(1000);
        assertThat(budget.used()).isZero();
        assertThat(budget.tryReserve(1001)).isFalse();
        assertThat(budget.used()).isZero();
    }

    @Test
    void concurrentReservationsNeverPassTheMaximum() throws Exception {
        long maximum = 1_000_003;
        MemoryBudget budget = new MemoryBudget(maximum);
        int threads = 4;
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong overshoots = new AtomicLong();
        AtomicLong successes = new AtomicLong();
        AtomicLong failures = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        long[] held = new long[threads];
        CyclicBarrier start = new CyclicBarrier(threads + 1);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            workers.add(new Thread(() -> {
                SplittableRandom random = new SplittableRandom(id);
                long mine = 0;
                try {
                    start.await();
                    for (int i = 0; i < 300_000; i++) {
                        long bytes = 1 + random.nextLong(100_000);
                        if (budget.tryReserve(bytes)) {
                            mine += bytes;
                            successes.incrementAndGet();
                            if (budget.used() > maximum) {
                                overshoots.incrementAndGet();
                            }
                        } else {
                            failures.incrementAndGet();
                        }
                        if (mine > 0 && random.nextInt(4) == 0) {
                            long back = 1 + random.nextLong((mine + 1) / 2);
                            budget.release(back);
                            mine -= back;
                        }
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
                held[id] = mine;
            }));
        }
        Thread monitor = new Thread(() -> {
            while (!stop.get()) {
                if (budget.used() > maximum) {
                    overshoots.incrementAndGet();
                }
            }
        });
        workers.forEach(Thread::start);
        monitor.start();
        start.await();
        for (Thread w : workers) {
            w.join();
        }
        stop.set(true);
        monitor.join();
        assertThat(failure.get()).isNull();
        assertThat(overshoots.get()).isZero();
        assertThat(successes.get()).isGreaterThan(1000);
        assertThat(failures.get()).as("the budget was contended").isGreaterThan(1000);
        long total = 0;
        for (long h : held) {
            total += h;
        }
        assertThat(budget.used()).isEqualTo(total).isLessThanOrEqualTo(maximum);
    }
}
