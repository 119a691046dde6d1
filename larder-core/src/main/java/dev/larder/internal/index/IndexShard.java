package dev.larder.internal.index;

import dev.larder.internal.memory.MemoryBudget;
import dev.larder.internal.memory.NativeMemory;
import dev.larder.internal.memory.PageStore;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One shard of the hash index: an open-addressing table of {@link IndexWord}s in native memory,
 * linear probing with Robin Hood placement and backward-shift deletion, so probes stay short at
 * load factors up to 0.9 and a miss stops as soon as it meets a word closer to its home than
 * the probe is.
 *
 * <p>Concurrency: writers take {@link #lock}; readers take nothing. A writer that moves words
 * (insert displacement, backward shift) makes {@link #seq} odd for the duration and even after;
 * a reader that finds no match retries if {@code seq} changed, because a moving word could have
 * slipped past it. A match needs no check: every word a reader sees was the key's current word
 * when it was read, and the record it leads to is immutable. Growth builds a new table beside
 * the old one under the lock and publishes it; readers still probing the old one see a
 * consistent snapshot, and it is freed after a grace period ({@link
 * dev.larder.internal.concurrent.ReaderEpochs}).
 *
 * <p>Capacity is any number of slots, not a power of two (the home slot is a multiply-shift of
 * the hash), so the table grows by 1.25x and its load factor stays between 0.7 and 0.875:
 * 9.1 to 11.4 bytes of index per entry.
 */
public final class IndexShard {
    public static final double MAX_LOAD = 0.875;
    public static final double GROWTH = 1.25;
    /** A shard whose budget cannot grow fills up to this before it refuses inserts. */
    public static final double HARD_MAX_LOAD = 0.95;

    public static final int MIN_CAPACITY = 8;
    private static final int GROW_DIST = 96;

    private static final VarHandle WORD = ValueLayout.JAVA_LONG.varHandle();
    private static final VarHandle SEQ;

    static {
        try {
            SEQ = MethodHandles.lookup().findVarHandle(IndexShard.class, "seq", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    public final ReentrantLock lock = new ReentrantLock();

    /**
     * Takes {@link #lock}, spinning briefly before parking: it is held for a few hundred
     * nanoseconds at a time, and parking allocates a queue node (measured: the evictor's shard
     * locks were the bytes a put allocated) and costs a context switch.
     */
    public void lockSpinning() {
        for (int spins = 0; spins < 100; spins++) {
            if (lock.tryLock()) {
                return;
            }
            Thread.onSpinWait();
        }
        lock.lock();
    }

    @SuppressWarnings("unused") // through SEQ
    private volatile long seq;

    private volatile MemorySegment table;
    private NativeMemory.Block block;
    private int capacity;
    private int count;
    private int maxDist;
    /** Bytes of the records this shard's words lead to; guarded by the lock. */
    private long liveBytes;

    private final double maxLoad;

    public IndexShard(int initialCapacity, double maxLoad, MemoryBudget budget) {
        this.maxLoad = maxLoad;
        int cap = Math.max(MIN_CAPACITY, initialCapacity);
        if (!budget.tryReserve(cap * 8L)) {
            throw new IllegalStateException("index of " + cap * 8L + " bytes does not fit the budget");
        }
        this.block = NativeMemory.allocate(cap * 8L);
        this.table = block.segment();
        this.capacity = cap;
    }

    // ---------------------------------------------------------------------------------------
    // Readers (no lock; the caller is inside ReaderEpochs.enter/exit)

    /**
     * Returns the word whose record holds {@code key}, or {@link IndexWord#EMPTY}. Lock-free.
     */
    public long find(long hash, PageStore store, MemorySegment key, int keyLength) {
        long tag = IndexWord.tagOf(hash);
        for (; ; ) {
            long s = (long) SEQ.getAcquire(this);
            MemorySegment t = table;
            int cap = (int) (t.byteSize() >>> 3);
            int slot = IndexWord.homeSlot(hash, cap);
            for (int d = 0; ; d++) {
                long w = (long) WORD.getAcquire(t, (long) slot << 3);
                if (w == IndexWord.EMPTY || IndexWord.dist(w) < d) {
                    break;
                }
                if (IndexWord.tag(w) == tag && store.keyEquals(IndexWord.location(w), key, keyLength)) {
                    return w;
                }
                if (++slot == cap) {
                    slot = 0;
                }
                if (d > IndexWord.MAX_DIST) {
                    break; // torn view of a table being rewritten; the seq check retries
                }
            }
            if ((s & 1) == 0 && (long) SEQ.getAcquire(this) == s) {
                return IndexWord.EMPTY;
            }
            Thread.onSpinWait();
        }
    }

    // ---------------------------------------------------------------------------------------
    // Writers (caller holds lock)

    /** The slot holding {@code key}, or -1. Caller holds the lock. */
    public int slotOf(long hash, PageStore store, MemorySegment key, int keyLength) {
        long tag = IndexWord.tagOf(hash);
        MemorySegment t = table;
        int slot = IndexWord.homeSlot(hash, capacity);
        for (int d = 0; ; d++) {
            long w = (long) WORD.get(t, (long) slot << 3);
            if (w == IndexWord.EMPTY || IndexWord.dist(w) < d) {
                return -1;
            }
            if (IndexWord.tag(w) == tag && store.keyEquals(IndexWord.location(w), key, keyLength)) {
                return slot;
            }
            if (++slot == capacity) {
                slot = 0;
            }
        }
    }

    /** The slot whose word leads to {@code location}, or -1. Caller holds the lock. */
    public int slotOfLocation(long hash, long location) {
        long tag = IndexWord.tagOf(hash);
        MemorySegment t = table;
        int slot = IndexWord.homeSlot(hash, capacity);
        for (int d = 0; ; d++) {
            long w = (long) WORD.get(t, (long) slot << 3);
            if (w == IndexWord.EMPTY || IndexWord.dist(w) < d) {
                return -1;
            }
            if (IndexWord.tag(w) == tag && IndexWord.location(w) == location) {
                return slot;
            }
            if (++slot == capacity) {
                slot = 0;
            }
        }
    }

    public long wordAt(int slot) {
        return (long) WORD.get(table, (long) slot << 3);
    }

    /** Points the word in {@code slot} to a new record; the key's place does not move. */
    public void relocate(int slot, long location, int oldRecordBytes, int newRecordBytes) {
        long w = wordAt(slot);
        WORD.setRelease(table, (long) slot << 3, IndexWord.withLocation(w, location));
        liveBytes += newRecordBytes - oldRecordBytes;
    }

    /** Whether one more insert fits without growing the table. */
    public boolean hasRoomWithoutGrowth() {
        return count + 1 <= (long) (capacity * maxLoad) && maxDist < GROW_DIST;
    }

    /** Whether one more insert fits at the hard maximum load (used when growth is refused). */
    public boolean hasRoomAtHardLimit() {
        return count + 1 <= (long) (capacity * HARD_MAX_LOAD) && maxDist < IndexWord.MAX_DIST / 2;
    }

    /** Inserts a word for a key that is not present. Caller holds the lock and checked room. */
    public void insert(long hash, long location, int recordBytes) {
        beginMove();
        try {
            place(
                    table,
                    capacity,
                    IndexWord.word(IndexWord.tagOf(hash), 0, location),
                    IndexWord.homeSlot(hash, capacity));
        } finally {
            endMove();
        }
        count++;
        liveBytes += recordBytes;
    }

    private void place(MemorySegment t, int cap, long word, int slot) {
        int d = 0;
        for (; ; ) {
            long w = (long) WORD.get(t, (long) slot << 3);
            if (w == IndexWord.EMPTY) {
                WORD.setRelease(t, (long) slot << 3, IndexWord.withDist(word, d));
                maxDist = Math.max(maxDist, d);
                return;
            }
            int wd = IndexWord.dist(w);
            if (wd < d) {
                WORD.setRelease(t, (long) slot << 3, IndexWord.withDist(word, d));
                maxDist = Math.max(maxDist, d);
                word = w;
                d = wd;
            }
            if (++slot == cap) {
                slot = 0;
            }
            d++;
            if (d > IndexWord.MAX_DIST) {
                throw new IllegalStateException("index probe length over " + IndexWord.MAX_DIST);
            }
        }
    }

    /** Removes the word in {@code slot} by shifting its followers back. Caller holds the lock. */
    public void removeAt(int slot, int recordBytes) {
        beginMove();
        try {
            MemorySegment t = table;
            int hole = slot;
            for (; ; ) {
                int next = hole + 1 == capacity ? 0 : hole + 1;
                long w = (long) WORD.get(t, (long) next << 3);
                if (w == IndexWord.EMPTY || IndexWord.dist(w) == 0) {
                    WORD.setRelease(t, (long) hole << 3, IndexWord.EMPTY);
                    break;
                }
                WORD.setRelease(t, (long) hole << 3, IndexWord.withDist(w, IndexWord.dist(w) - 1));
                hole = next;
            }
        } finally {
            endMove();
        }
        count--;
        liveBytes -= recordBytes;
    }

    private void beginMove() {
        SEQ.setRelease(this, (long) SEQ.get(this) + 1);
        VarHandle.storeStoreFence();
    }

    private void endMove() {
        SEQ.setRelease(this, (long) SEQ.get(this) + 1);
    }

    /** Bytes the next growth step needs. */
    public long growthBytes() {
        return nextCapacity() * 8L;
    }

    private int nextCapacity() {
        long next = Math.max(capacity + 1L, (long) Math.ceil(capacity * GROWTH));
        if (next > Integer.MAX_VALUE / 8) {
            throw new IllegalStateException("index shard over " + capacity + " slots; use a higher concurrencyLevel");
        }
        return (int) next;
    }

    /**
     * Grows the table by {@link #GROWTH}, rehashing every key from its record. The caller holds
     * the lock and has reserved {@link #growthBytes()}; returns the old table's block, which the
     * caller frees after a grace period.
     */
    public NativeMemory.Block grow(long seed, PageStore store) {
        int newCap = nextCapacity();
        NativeMemory.Block newBlock = NativeMemory.allocate(newCap * 8L);
        MemorySegment t = table;
        MemorySegment n = newBlock.segment();
        maxDist = 0;
        for (int i = 0; i < capacity; i++) {
            long w = (long) WORD.get(t, (long) i << 3);
            if (w != IndexWord.EMPTY) {
                long h = store.hashOfKeyAt(seed, IndexWord.location(w));
                place(n, newCap, IndexWord.withDist(w, 0), IndexWord.homeSlot(h, newCap));
            }
        }
        NativeMemory.Block old = block;
        block = newBlock;
        capacity = newCap;
        beginMove();
        table = n;
        endMove();
        return old;
    }

    /** Removes every word. Caller holds the lock. Returns the number removed. */
    public void clearAll() {
        beginMove();
        try {
            table.fill((byte) 0);
        } finally {
            endMove();
        }
        count = 0;
        maxDist = 0;
        liveBytes = 0;
    }

    /** Copies the locations of all words into {@code out} (grown as needed). Caller holds the lock. */
    public long[] locations(long[] out) {
        long[] result = out.length >= count ? out : new long[count];
        int n = 0;
        for (int i = 0; i < capacity && n < result.length; i++) {
            long w = wordAt(i);
            if (w != IndexWord.EMPTY) {
                result[n++] = IndexWord.location(w);
            }
        }
        return result;
    }

    public int count() {
        return count;
    }

    public long liveBytes() {
        return liveBytes;
    }

    public long tableBytes() {
        return capacity * 8L;
    }

    /** Frees the table; the cache is closing. */
    public void free() {
        block.free();
    }
}
