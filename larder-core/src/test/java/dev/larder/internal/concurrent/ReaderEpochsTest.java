package dev.larder.internal.concurrent;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Unit tests of the two-parity read indicator: who synchronize() waits for, and who it does not. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ReaderEpochsTest {

    /** A thread that runs {@code synchronize()} once and records when it returned. */
    private static final class Synchronizer extends Thread {
        final ReaderEpochs epochs;
        final CountDownLatch done = new CountDownLatch(1);

        Synchronizer(ReaderEpochs epochs) {
            super("synchronizer");
            this.epochs = epochs;
            setDaemon(true);
        }

        @Override
        public void run() {
            epochs.synchronize();
            done.countDown();
        }

        boolean returnedWithin(long millis) throws InterruptedException {
            return done.await(millis, TimeUnit.MILLISECONDS);
        }
    }

    /** A reader on its own thread that enters on request and exits on request. */
    private static final class Reader extends Thread {
        final ReaderEpochs epochs;
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        final CountDownLatch exited = new CountDownLatch(1);

        Reader(ReaderEpochs epochs) {
            super("reader");
            this.epochs = epochs;
            setDaemon(true);
        }

        @Override
        public void run() {
            int token = epochs.enter();
            entered.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            epochs.exit(token);
            exited.countDown();
        }

        Reader enterNow() throws InterruptedException {
            start();
            assertThat(entered.await(5, TimeUnit.SECONDS)).isTrue();
            return this;
        }

        void exitNow() throws InterruptedException {
            release.countDown();
            assertThat(exited.await(5, TimeUnit.SECONDS)).isTrue();
        }
    }

    private static long epochOf(ReaderEpochs epochs) throws ReflectiveOperationException {
        Field f = ReaderEpochs.class.getDeclaredField("epoch");
        f.setAccessible(true);
        return f.getLong(epochs);
    }

    /** Waits until a synchronize() in progress has flipped the epoch to {@code epoch}. */
    private static void awaitEpoch(ReaderEpochs epochs, long epoch) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (epochOf(epochs) != epoch) {
            assertThat(System.nanoTime()).as("epoch flip to %d", epoch).isLessThan(deadline);
            Thread.onSpinWait();
        }
    }

    @Test
    void synchronizeWithNoReadersReturnsAtOnce() throws Exception {
        ReaderEpochs epochs = new ReaderEpochs(4);
        long start = System.nanoTime();
        for (int i = 0; i < 10_000; i++) {
            epochs.synchronize();
        }
        assertThat(System.nanoTime() - start).isLessThan(TimeUnit.SECONDS.toNanos(2));
        assertThat(epochOf(epochs)).isEqualTo(10_000);
        // Readers that came and went leave nothing behind.
        for (int i = 0; i < 1000; i++) {
            epochs.exit(epochs.enter());
            epochs.synchronize();
        }
        Synchronizer s = new Synchronizer(epochs);
        s.start();
        assertThat(s.returnedWithin(2000)).isTrue();
    }

    @Test
    void waitsForAReaderThatEnteredBeforeAndReturnsWhenItExits() throws Exception {
        for (int stripes : new int[] {1, 2, 8}) {
            ReaderEpochs epochs = new ReaderEpochs(stripes);
            Reader reader = new Reader(epochs).enterNow();
            Synchronizer s = new Synchronizer(epochs);
            s.start();
            assertThat(s.returnedWithin(150))
                    .as("synchronize returned while a reader was inside")
                    .isFalse();
            reader.exitNow();
            assertThat(s.returnedWithin(5000))
                    .as("synchronize returned after the reader left")
                    .isTrue();
        }
    }

    @Test
    void waitsForAReaderOnTheCallingThreadsOwnStripeToo() throws Exception {
        ReaderEpochs epochs = new ReaderEpochs(1);
        int token = epochs.enter(); // this thread
        Synchronizer s = new Synchronizer(epochs);
        s.start();
        assertThat(s.returnedWithin(150)).isFalse();
        epochs.exit(token);
        assertThat(s.returnedWithin(5000)).isTrue();
    }

    @Test
    void waitsForReadersThatEnteredOnAnyThreadIndex() throws Exception {
        ReaderEpochs epochs = new ReaderEpochs(4);
        // Indices on four different stripes, one past Integer.MAX_VALUE (negative), and two that
        // share a stripe: each is a reader synchronize must wait for.
        int[] indices = {0, 1, 6, -1, 2};
        int[] tokens = new int[indices.length];
        for (int i = 0; i < indices.length; i++) {
            tokens[i] = epochs.enter(indices[i]);
        }
        assertThat(tokens[4]).as("indices 2 and 6 share a stripe").isEqualTo(tokens[2]);
        assertThat(java.util.Arrays.stream(tokens).distinct().count()).isEqualTo(4);
        Synchronizer s = new Synchronizer(epochs);
        s.start();
        for (int i = 0; i < indices.length; i++) {
            assertThat(s.returnedWithin(100))
                    .as("synchronize returned with %d readers inside", indices.length - i)
                    .isFalse();
            epochs.exit(tokens[i]);
        }
        assertThat(s.returnedWithin(5000)).isTrue();
    }

    @Test
    void doesNotWaitForAReaderThatEnteredAfterTheFlip() throws Exception {
        ReaderEpochs epochs = new ReaderEpochs(4);
        int early = epochs.enter();
        Synchronizer first = new Synchronizer(epochs);
        first.start();
        awaitEpoch(epochs, 1);
        assertThat(first.returnedWithin(50)).isFalse();

        // A reader after the flip, on this thread (the same stripe) and on another thread.
        int late = epochs.enter();
        Reader lateOther = new Reader(epochs).enterNow();

        epochs.exit(early);
        assertThat(first.returnedWithin(5000))
                .as("synchronize returned although readers that entered after its flip are inside")
                .isTrue();

        // The next synchronize must wait for them, though: they entered before it.
        Synchronizer second = new Synchronizer(epochs);
        second.start();
        assertThat(second.returnedWithin(150)).isFalse();
        epochs.exit(late);
        assertThat(second.returnedWithin(150)).isFalse();
        lateOther.exitNow();
        assertThat(second.returnedWithin(5000)).isTrue();
    }

    @Test
    void concurrentReadersAndSynchronizeNeverDeadlock() throws Exception {
        ReaderEpochs epochs = new ReaderEpochs(2);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong reads = new AtomicLong();
        AtomicLong syncs = new AtomicLong();
        List<Thread> threads = new ArrayList<>();
        for (int r = 0; r < 4; r++) {
            int id = r;
            threads.add(new Thread(() -> {
                long n = 0;
                while (!stop.get()) {
                    int token = epochs.enter();
                    if ((n & 7) == id) {
                        // a nested read on the same thread, as a listener calling the cache does
                        epochs.exit(epochs.enter());
                    }
                    if ((n & 1023) == 0) {
                        Thread.yield(); // sometimes stay inside across a reschedule
                    }
                    epochs.exit(token);
                    n++;
                }
                reads.addAndGet(n);
            }));
        }
        threads.add(new Thread(() -> {
            while (!stop.get()) {
                epochs.synchronize();
                syncs.incrementAndGet();
            }
        }));
        threads.forEach(Thread::start);
        Thread.sleep(1000);
        long syncsSoFar = syncs.get();
        stop.set(true);
        for (Thread t : threads) {
            t.join(5000);
            assertThat(t.isAlive()).as("%s still running", t.getName()).isFalse();
        }
        assertThat(syncsSoFar).isGreaterThan(10);
        assertThat(reads.get()).isGreaterThan(10_000);
        // Quiescent: one more synchronize returns at once.
        Synchronizer s = new Synchronizer(epochs);
        s.start();
        assertThat(s.returnedWithin(2000)).isTrue();
    }

    // ---------------------------------------------------------------------------------------
    // The reclamation protocol, with plain fields standing for index words and native memory

    /** A block of "native memory": freed once no reader can reach it. */
    static final class Node {
        long freed; // plain: written by the reclaimer
        final long id;

        Node(long id) {
            this.id = id;
        }
    }

    private static final VarHandle FREED;
    private static final VarHandle LINK;

    static {
        try {
            FREED = MethodHandles.lookup().findVarHandle(Node.class, "freed", long.class);
            LINK = MethodHandles.lookup().findVarHandle(ReaderEpochsTest.class, "link", Node.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** The "index word": plain, published and unlinked with plain writes. */
    @SuppressWarnings("unused") // through LINK
    private Node link = new Node(0);

    /**
     * A reader's look at the linked node, {@code times} times: how many of them found it freed.
     * Opaque reads: no ordering of their own, only "really read it each time".
     */
    private long readsOfAFreedNode(int times) {
        Node node = (Node) LINK.getOpaque(this);
        long freed = 0;
        for (int i = 0; i < times; i++) {
            if ((long) FREED.getOpaque(node) != 0) {
                freed++;
            }
            Thread.onSpinWait();
        }
        return freed;
    }

    @Test
    void aReaderNeverSeesMemoryFreedAfterSynchronize() throws Exception {
        ReaderEpochs epochs = new ReaderEpochs(4);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong violations = new AtomicLong();
        AtomicLong reads = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> readers = new ArrayList<>();
        for (int r = 0; r < 2; r++) {
            readers.add(new Thread(() -> {
                try {
                    long n = 0;
                    while (!stop.get()) {
                        int token = epochs.enter();
                        violations.addAndGet(readsOfAFreedNode(16));
                        epochs.exit(token);
                        n++;
                    }
                    reads.addAndGet(n);
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            }));
        }
        readers.forEach(Thread::start);
        long reclaimed = 0;
        // At least a second and 1,000 reclamations, however slow a shared machine is (bounded).
        long start = System.nanoTime();
        long minimum = start + TimeUnit.MILLISECONDS.toNanos(1000);
        long limit = start + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < limit && (System.nanoTime() < minimum || reclaimed < 1_000)) {
            Node old = (Node) LINK.get(this);
            LINK.set(this, new Node(old.id + 1)); // unlink: plain write
            epochs.synchronize();
            FREED.set(old, 1L); // "free": plain write
            reclaimed++;
        }
        stop.set(true);
        for (Thread t : readers) {
            t.join(5000);
        }
        assertThat(failure.get()).isNull();
        assertThat(violations.get()).as("reads of freed nodes").isZero();
        assertThat(reclaimed).isGreaterThanOrEqualTo(1_000);
        assertThat(reads.get()).isGreaterThan(1000);
    }

    /**
     * While no reader has ever entered, synchronize skips the stripes' counters: the first
     * reader's entry races that skip in each trial, on a fresh instance, against a reclaimer
     * that unlinks, synchronizes and frees over and over.
     */
    @Test
    void theFirstReaderEverToEnterNeverSeesMemoryFreedAfterSynchronize() throws Exception {
        int trials = 2_000;
        AtomicReference<ReaderEpochs> current = new AtomicReference<>();
        AtomicBoolean readerDone = new AtomicBoolean();
        AtomicLong violations = new AtomicLong();
        AtomicLong skipped = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        CyclicBarrier start = new CyclicBarrier(2);
        Thread reader = new Thread(() -> {
            try {
                for (int t = 0; t < trials; t++) {
                    start.await(10, TimeUnit.SECONDS);
                    ReaderEpochs epochs = current.get();
                    int token = epochs.enter();
                    violations.addAndGet(readsOfAFreedNode(64));
                    epochs.exit(token);
                    readerDone.set(true);
                }
            } catch (Throwable e) {
                failure.compareAndSet(null, e);
            }
        });
        reader.start();
        for (int t = 0; t < trials && failure.get() == null; t++) {
            ReaderEpochs epochs = new ReaderEpochs(4);
            current.set(epochs);
            readerDone.set(false);
            start.await(10, TimeUnit.SECONDS);
            while (!readerDone.get()) {
                Node old = (Node) LINK.get(this);
                LINK.set(this, new Node(old.id + 1)); // unlink: plain write
                boolean before = !epochs.idle();
                epochs.synchronize();
                FREED.set(old, 1L); // "free": plain write
                skipped.addAndGet(before ? 0 : 1);
            }
        }
        reader.join(10_000);
        assertThat(failure.get()).isNull();
        assertThat(violations.get()).as("reads of freed nodes").isZero();
        assertThat(skipped.get()).as("synchronizations before the first entry").isPositive();
    }

    @Test
    void idleUntilAReaderEntersAndAgainOnceEveryReaderLeft() throws Exception {
        ReaderEpochs epochs = new ReaderEpochs(8);
        assertThat(epochs.idle()).as("no reader ever entered").isTrue();
        Reader first = new Reader(epochs).enterNow();
        assertThat(epochs.idle()).as("the first reader inside").isFalse();
        first.exitNow();
        assertThat(epochs.idle()).as("it left").isTrue();
        Reader second = new Reader(epochs).enterNow();
        assertThat(epochs.idle()).as("a later reader inside").isFalse();
        second.exitNow();
        assertThat(epochs.idle()).isTrue();
    }

    /** The seq a writer publishes (odd while it changes the data) and the data a reader checks. */
    private static final class Shared {
        volatile long seq;
        volatile long a;
        volatile long b;
        volatile boolean readerDone;
    }

    /**
     * Dekker's handshake from a fresh indicator on: a writer that publishes an odd seq and then
     * finds the indicator idle changes the data; a reader that entered and then waited for an
     * even seq must never see the data change while it is inside, including the very first
     * reader, which races the writer for the indicator's "entered" flag.
     */
    @Test
    void aWriterThatFindsItIdleNeverChangesWhatTheFirstReaderReads() throws Exception {
        int rounds = 2_000;
        AtomicReference<ReaderEpochs> current = new AtomicReference<>();
        AtomicReference<Shared> shared = new AtomicReference<>();
        AtomicLong torn = new AtomicLong();
        AtomicLong changesWhileReadersMayEnter = new AtomicLong();
        CyclicBarrier start = new CyclicBarrier(2);
        CyclicBarrier end = new CyclicBarrier(2);
        Thread writer = Thread.ofPlatform().start(() -> {
            try {
                for (int r = 0; r < rounds; r++) {
                    start.await();
                    ReaderEpochs epochs = current.get();
                    Shared d = shared.get();
                    for (long i = 1; !d.readerDone; i++) {
                        d.seq = d.seq + 1; // odd: a volatile write, a full fence before the look
                        if (epochs.idle()) {
                            d.a = i;
                            d.b = i;
                            changesWhileReadersMayEnter.incrementAndGet();
                        }
                        d.seq = d.seq + 1;
                    }
                    end.await();
                }
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        try {
            for (int r = 0; r < rounds; r++) {
                current.set(new ReaderEpochs(8));
                shared.set(new Shared());
                start.await();
                ReaderEpochs epochs = current.get();
                Shared d = shared.get();
                for (int spin = ThreadLocalRandom.current().nextInt(2_000); spin > 0; spin--) {
                    Thread.onSpinWait(); // enter at a random point of the writer's loop
                }
                int token = epochs.enter();
                try {
                    while ((d.seq & 1) != 0) {
                        Thread.onSpinWait();
                    }
                    long a1 = d.a;
                    long b1 = d.b;
                    for (int spin = 0; spin < 200; spin++) {
                        Thread.onSpinWait();
                    }
                    if (d.a != a1 || d.b != b1 || a1 != b1) {
                        torn.incrementAndGet();
                    }
                } finally {
                    epochs.exit(token);
                    d.readerDone = true;
                }
                end.await();
            }
        } finally {
            writer.join(10_000);
        }
        assertThat(torn.get())
                .as("rounds whose reader saw the data change under it")
                .isZero();
        assertThat(changesWhileReadersMayEnter.get())
                .as("the writer changed the data while no reader was inside")
                .isGreaterThan(rounds);
    }
}
