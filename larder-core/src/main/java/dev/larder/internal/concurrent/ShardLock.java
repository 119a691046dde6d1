package dev.larder.internal.concurrent;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * The lock of one index shard: a reentrant spin lock whose release is a plain store.
 *
 * <p>Why not {@link java.util.concurrent.locks.ReentrantLock}: its release is a volatile write,
 * which on x86 is a full fence, and a full fence waits until every store before it has reached
 * the cache. A writer releases the lock just after copying a value into native memory, often into
 * lines not in its cache; the fence made every write wait for those lines (measured: ~200 ns per
 * put at a million entries). A release store orders the copy before the unlock just the same,
 * without waiting. Parking also allocated a queue node per contended acquire.
 *
 * <p>Held for short, bounded sections (an index update, a record copied or rewritten, a shard
 * rehashed when it grows), so a waiter spins, then yields, then sleeps in short, growing naps; it
 * is never woken explicitly, so an unlock costs no signal. Reentrant for the thread that holds it
 * (the evictor decodes removals with codecs under it, and a codec may call the cache).
 *
 * <p>An index shard is its own lock (it extends this class): the lock word and the shard's
 * sequence and table then share a line, which writers of the shard take from each other's cores
 * once per change instead of twice, and the padding ahead keeps one shard's fields off the
 * lines of the shard allocated before it (docs/speed-work.md, twenty-fifth session).
 */
public class ShardLock extends LinePadded {
    private static final VarHandle STATE = FieldHandles.of(MethodHandles.lookup(), "state", int.class);

    @SuppressWarnings("unused") // through STATE: 0 free, 1 held
    private volatile int state;

    /** The holder, written only by it: a thread reads itself here only if it holds the lock. */
    private Thread owner;

    private int holds;

    /**
     * Takes the lock if it is free or already the caller's; never waits. A compare-and-set
     * straight away, with no read of the lock word first: a word last written on another core then
     * comes over once, to be owned, instead of twice (shared for the read, then owned for the
     * CAS). Two threads' overwrites at 100K entries took 0.97 of the time in paired forks
     * (docs/speed-work.md, thirty-fourth session).
     */
    public boolean tryLock() {
        Thread me = Thread.currentThread();
        if (owner == me) {
            holds++;
            return true;
        }
        if (STATE.compareAndSet(this, 0, 1)) {
            owner = me;
            holds = 1;
            return true;
        }
        return false;
    }

    /**
     * Takes the lock, spinning, then yielding, then napping until it is free. Between attempts
     * it only reads the word: a CAS on a held lock would take its line from the holder, whose
     * release would then wait to get it back.
     */
    public void lock() {
        int attempt = 0;
        while (!tryLock()) {
            do {
                pause(attempt++);
            } while ((int) STATE.getOpaque(this) != 0);
        }
    }

    private static void pause(int attempt) {
        if (attempt < 128) {
            Thread.onSpinWait();
        } else if (attempt < 256) {
            Thread.yield();
        } else {
            LockSupport.parkNanos(Math.min(50_000L, 1_000L << Math.min(6, (attempt - 256) >> 4)));
        }
    }

    /** Releases one hold; the last one frees the lock with a release store. */
    public void unlock() {
        if (owner != Thread.currentThread()) {
            throw new IllegalMonitorStateException("shard lock not held by " + Thread.currentThread());
        }
        if (--holds == 0) {
            owner = null;
            STATE.setRelease(this, 0);
        }
    }

    public boolean isHeldByCurrentThread() {
        return owner == Thread.currentThread();
    }
}
