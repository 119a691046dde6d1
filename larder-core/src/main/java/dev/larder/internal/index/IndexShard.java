package dev.larder.internal.index;

import dev.larder.internal.concurrent.FieldHandles;
import dev.larder.internal.concurrent.ShardLock;
import dev.larder.internal.memory.MemoryBudget;
import dev.larder.internal.memory.NativeMemory;
import dev.larder.internal.memory.PageStore;
import dev.larder.internal.memory.RecordLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * One shard of the hash index: an open-addressing table of {@link IndexWord}s in native memory,
 * linear probing with Robin Hood placement and backward-shift deletion, so probes stay short at
 * load factors up to 0.9 and a miss stops as soon as it meets a word closer to its home than
 * the probe is.
 *
 * <p>Concurrency: writers take the shard's lock ({@link #lock}: a shard is its own {@link
 * ShardLock}); readers take nothing. Every change a reader could observe — a word inserted,
 * moved, repointed or removed, a record rewritten in place, a new table published — happens between {@link #beginChange} and {@link #endChange}, which make {@link #seq}
 * odd and then even again: a seqlock. An optimistic reader ({@link #beginRead}, {@link #probe},
 * copy, {@link #validate}) keeps what it read only if {@code seq} did not move. A reader inside a
 * reader epoch ({@link #find}) validates only a miss: the records it reaches are not rewritten in
 * place and not reused while it is inside. Growth builds a new table beside the old one under the
 * lock and publishes it; the old one is freed after a grace period ({@link
 * dev.larder.internal.concurrent.ReaderEpochs}), and an optimistic reader that still probes it
 * fails validation (or meets a closed segment, which throws) and retries.
 *
 * <p>Capacity is any number of slots, not a power of two (the home slot is a multiply-shift of
 * the hash), so the table grows by 1.25x and its load factor stays between 0.64 and 0.8:
 * 10 to 12.5 bytes of index per entry. A table presized for the expected entries holds them at
 * 0.8 (10 bytes; 0.6 and 13.3 bytes in a cache of at most {@link #SMALL_CACHE_ENTRIES}) and
 * grows at 0.86. Higher loads cost inserts and evictions more than the bytes
 * are worth: an insert walks to the cluster's first empty slot and an eviction's backward shift
 * to its end, about 13 slots at 0.8 and 26 at 0.86. Presized at 0.75 instead of 0.8, inserts
 * were 9-18% faster on 2026-11-24; since the walks' plain stores (2026-11-26) they are not
 * (docs/speed-work.md, fifth and twenty-eighth sessions).
 */
public final class IndexShard extends ShardLock {
    public static final double MAX_LOAD = 0.8;
    /**
     * The load a table presized for the expected entries has once they are all in, for a cache
     * of more than {@link #SMALL_CACHE_ENTRIES} entries of under {@link #ROOMY_ENTRY_BYTES}
     * bytes of budget each, where the index's bytes are a large share of an entry's.
     */
    public static final double PRESIZED_LOAD = 0.8;
    /**
     * The presized load of a larger cache whose entries have {@link #ROOMY_ENTRY_BYTES} or more of
     * budget each. A Robin Hood insert moves the rest of its cluster one slot on, ~13 words at
     * 0.8 and ~6 at 0.7, and the evictor's removal shifts them back: at 0.7 an insert at 100K
     * and 1M entries of 256-byte values took ~20% fewer instructions with its eviction, GETs and
     * overwrites 2-3.5% fewer, for 1.4 bytes more per entry, 0.5% of such an entry (of a 64-byte
     * one, over 2%; docs/speed-work.md, fifty-eighth session).
     */
    public static final double ROOMY_PRESIZED_LOAD = 0.7;
    /** Bytes of budget per expected entry from which a larger cache's table is presized at {@link #ROOMY_PRESIZED_LOAD}. */
    public static final long ROOMY_ENTRY_BYTES = 160;
    /**
     * The presized load of a small cache's table: walks about half as long as at 0.8 (an insert
     * at 10K entries ~200 of ~3,180 instructions fewer), for 3.3 bytes more per entry, which is
     * at most ~220 KB at {@link #SMALL_CACHE_ENTRIES} (docs/speed-work.md, fifty-third and
     * fifty-fourth sessions). Larger caches keep 0.8: there the bytes per entry count.
     */
    public static final double SMALL_PRESIZED_LOAD = 0.6;
    /** The most expected entries (of the whole cache) that get {@link #SMALL_PRESIZED_LOAD}. */
    public static final long SMALL_CACHE_ENTRIES = 65_536;
    /**
     * The load at which a presized table grows: a shard's share of the keys runs over the
     * average (by about 1% at a million entries on 64 shards, by one standard deviation, 1 /
     * sqrt(entries per shard)), and growing by a quarter for that costs the shard 12.5 bytes per
     * entry more. 7.5% over the presized load of 0.8 is nine deviations at a million entries,
     * three at 100,000 (over 0.7, 23%).
     */
    public static final double PRESIZED_MAX_LOAD = 0.86;

    public static final double GROWTH = 1.25;
    /** A shard whose budget cannot grow fills up to this before it refuses inserts. */
    public static final double HARD_MAX_LOAD = 0.95;

    public static final int MIN_CAPACITY = 8;

    /**
     * The presized load for a cache expecting {@code expectedEntries} entries in all, with {@code
     * bytesPerEntry} bytes of budget for each.
     */
    public static double presizedLoad(long expectedEntries, long bytesPerEntry) {
        if (expectedEntries <= SMALL_CACHE_ENTRIES) {
            return SMALL_PRESIZED_LOAD;
        }
        return bytesPerEntry >= ROOMY_ENTRY_BYTES ? ROOMY_PRESIZED_LOAD : PRESIZED_LOAD;
    }

    private static final int GROW_DIST = 96;

    private static final VarHandle WORD = ValueLayout.JAVA_LONG.varHandle();
    private static final VarHandle SEQ = FieldHandles.of(MethodHandles.lookup(), "seq", long.class);
    private static final VarHandle PENDING = FieldHandles.of(MethodHandles.lookup(), "pendingUpdates", int.class);
    private static final VarHandle PUTS = FieldHandles.of(MethodHandles.lookup(), "puts", long.class);

    @SuppressWarnings("unused") // through SEQ
    private volatile long seq;

    /**
     * Conditional updates (compute, replace and remove by value) in flight on this shard: while
     * one is, no record of the shard is rewritten in place, because such an update recognises
     * "unchanged since I read it" by the record's location, which an in-place rewrite keeps.
     */
    @SuppressWarnings("unused") // through PENDING
    private volatile int pendingUpdates;

    private volatile MemorySegment table;
    private NativeMemory.Block block;
    private int capacity;
    private int count;
    private int maxDist;
    /** Bytes of the records this shard's words lead to; guarded by the lock. */
    private long liveBytes;

    /**
     * Puts counted under this shard's lock ({@link #countPut}): written only by the lock's holder,
     * read by anyone (statistics) through an opaque read.
     */
    @SuppressWarnings("unused") // through PUTS
    private long puts;

    private final double maxLoad;
    /** {@code (long) (capacity * maxLoad)}: the count a table may reach before it grows, kept with the capacity. */
    private long growthCount;

    private final boolean adviseHugePages;

    public IndexShard(int initialCapacity, double maxLoad, MemoryBudget budget) {
        this(initialCapacity, maxLoad, budget, null, false);
    }

    /**
     * @param firstTable the memory of the first table, {@link #tableBytesFor} bytes (a slice of
     *     the cache's region of tables), or null for a block of its own
     * @param adviseHugePages whether tables of a huge page or more are mapped and advised for
     *     huge pages ({@link NativeMemory#allocate(long, boolean)})
     */
    public IndexShard(
            int initialCapacity,
            double maxLoad,
            MemoryBudget budget,
            NativeMemory.Block firstTable,
            boolean adviseHugePages) {
        this.maxLoad = maxLoad;
        this.adviseHugePages = adviseHugePages;
        long bytes = tableBytesFor(initialCapacity);
        if (firstTable != null && firstTable.segment().byteSize() != bytes) {
            throw new IllegalArgumentException("a first table of " + bytes + " bytes expected, was "
                    + firstTable.segment().byteSize());
        }
        if (!budget.tryReserve(bytes)) {
            throw new IllegalStateException("index of " + bytes + " bytes does not fit the budget");
        }
        this.block = firstTable != null ? firstTable : NativeMemory.allocate(bytes, adviseHugePages);
        this.table = block.segment();
        this.capacity = (int) (bytes / 8);
        this.growthCount = (long) (capacity * maxLoad);
    }

    /** The bytes of a shard's first table for {@code initialCapacity} slots. */
    public static long tableBytesFor(int initialCapacity) {
        return Math.max(MIN_CAPACITY, initialCapacity) * 8L;
    }

    // ---------------------------------------------------------------------------------------
    // Readers (no lock)

    /**
     * Starts an optimistic read: returns the current {@link #seq} to validate against, or -1 if a
     * writer is changing the shard right now (the caller retries).
     */
    public long beginRead() {
        long s = (long) SEQ.getAcquire(this);
        return (s & 1) == 0 ? s : -1;
    }

    /**
     * Whether nothing in the shard changed since {@link #beginRead} returned {@code s}: no word
     * moved, was replaced or removed, and no record was rewritten in place. Everything read in
     * between is then a consistent snapshot.
     */
    public boolean validate(long s) {
        VarHandle.loadLoadFence(); // the reads being validated happen before the seq is read again
        return (long) SEQ.getAcquire(this) == s;
    }

    /**
     * Probes for the word whose record holds {@code key[0, keyLength)} and parses that record's
     * header into {@code h}; returns the word or {@link IndexWord#EMPTY}. Lock-free and without
     * validation: the caller validates (or is inside a reader epoch and validates only misses).
     * A concurrent change can make it see garbage; it stays inside the table and the pages (every
     * access is bounds-checked) and may then throw, which the caller treats as a raced read.
     *
     * <p>The words are read plainly: an acquiring read of each would keep the JIT from taking the
     * table's bounds and liveness checks out of the loop (they were most of a GET's probe, counted
     * with {@code larder-bench/instructions.sh}). The optimistic reader's validation orders its
     * reads; a reader in an epoch reads a record only through the location its word gave, a load
     * that cannot be made before the word's, of a record written before its word was published
     * (a release store).
     */
    public long probe(long hash, PageStore store, byte[] key, int keyLength, RecordLayout.Header h) {
        long tag = IndexWord.tagOf(hash);
        MemorySegment t = table;
        int cap = (int) (t.byteSize() >>> 3);
        int slot = IndexWord.homeSlot(hash, cap);
        for (int d = 0; ; ) {
            // The words of other tags are passed in a loop of their own, with no call in it: in
            // one loop with the key's comparison, C2 did the segment's checks again for every word
            // (docs/speed-work.md, fifty-ninth session).
            long w;
            for (; ; ) {
                w = (long) WORD.get(t, (long) slot << 3);
                if (IndexWord.endsProbe(w, d)) {
                    return IndexWord.EMPTY;
                }
                if (IndexWord.tag(w) == tag) {
                    break;
                }
                if (++slot == cap) {
                    slot = 0;
                }
                if (++d > IndexWord.MAX_DIST) {
                    return IndexWord.EMPTY; // a torn view of a table being rewritten; validation retries
                }
            }
            if (store.keyEquals(IndexWord.location(w), key, keyLength, h)) {
                return w;
            }
            if (++slot == cap) {
                slot = 0;
            }
            if (++d > IndexWord.MAX_DIST) {
                return IndexWord.EMPTY;
            }
        }
    }

    /**
     * Returns the word whose record holds {@code key}, or {@link IndexWord#EMPTY}, for a reader
     * inside a reader epoch (whose records no writer rewrites in place, see {@code
     * NativeCache}); the record's header is parsed into {@code h}. A hit needs no validation; a
     * miss is retried if words moved meanwhile (one could have slipped past the probe).
     */
    public long find(long hash, PageStore store, byte[] key, int keyLength, RecordLayout.Header h) {
        for (int spins = 0; ; spins++) {
            long s = beginRead();
            if (s >= 0) {
                long w = probe(hash, store, key, keyLength, h);
                if (w != IndexWord.EMPTY || validate(s)) {
                    return w;
                }
            }
            backOff(spins);
        }
    }

    /** Waits a little for a writer in its critical section: a spin, then the CPU given up. */
    public static void backOff(int spins) {
        if (spins < 64) {
            Thread.onSpinWait();
        } else {
            Thread.yield();
        }
    }

    // ---------------------------------------------------------------------------------------
    // Writers (caller holds lock)

    /** The slot holding {@code key}, or -1; the record's header is parsed into {@code h}. */
    public int slotOf(long hash, PageStore store, byte[] key, int keyLength, RecordLayout.Header h) {
        long tag = IndexWord.tagOf(hash);
        MemorySegment t = table;
        int cap = capacity;
        int slot = IndexWord.homeSlot(hash, cap);
        for (int d = 0; ; ) {
            long w;
            for (; ; ) { // words of other tags in a loop of their own: see probe
                w = (long) WORD.get(t, (long) slot << 3);
                if (IndexWord.endsProbe(w, d)) {
                    return -1;
                }
                if (IndexWord.tag(w) == tag) {
                    break;
                }
                if (++slot == cap) {
                    slot = 0;
                }
                d++;
            }
            if (store.keyEquals(IndexWord.location(w), key, keyLength, h)) {
                return slot;
            }
            if (++slot == cap) {
                slot = 0;
            }
            d++;
        }
    }

    /** The slot whose word leads to {@code location}, or -1. Caller holds the lock. */
    public int slotOfLocation(long hash, long location) {
        long tag = IndexWord.tagOf(hash);
        MemorySegment t = table;
        int slot = IndexWord.homeSlot(hash, capacity);
        for (int d = 0; ; d++) {
            long w = (long) WORD.get(t, (long) slot << 3);
            if (IndexWord.endsProbe(w, d)) {
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

    /** The farthest any word has been from its home since the table was built (for tests). */
    int maxDist() {
        return maxDist;
    }

    public long wordAt(int slot) {
        return (long) WORD.get(table, (long) slot << 3);
    }

    /** Points the word in {@code slot} to a new record; the key's place does not move. */
    public void relocate(int slot, long location, int oldRecordBytes, int newRecordBytes) {
        long w = wordAt(slot);
        beginChange();
        WORD.setRelease(table, (long) slot << 3, IndexWord.withLocation(w, location));
        endChange();
        liveBytes += newRecordBytes - oldRecordBytes;
    }

    /** Whether one more insert fits without growing the table. */
    public boolean hasRoomWithoutGrowth() {
        return count + 1 <= growthCount && maxDist < GROW_DIST;
    }

    /** Whether one more insert fits at the hard maximum load (used when growth is refused). */
    public boolean hasRoomAtHardLimit() {
        return count + 1 <= (long) (capacity * HARD_MAX_LOAD) && maxDist < IndexWord.MAX_DIST / 2;
    }

    /** Inserts a word for a key that is not present. Caller holds the lock and checked room. */
    public void insert(long hash, long location, int recordBytes) {
        beginChange();
        try {
            place(
                    table,
                    capacity,
                    IndexWord.word(IndexWord.tagOf(hash), 0, location),
                    IndexWord.homeSlot(hash, capacity));
        } finally {
            endChange();
        }
        count++;
        liveBytes += recordBytes;
    }

    /**
     * Robin Hood placement of {@code word} from {@code slot}. Plain stores: the caller is between
     * {@link #beginChange} and {@link #endChange}, whose fences order them after the record's
     * bytes and before the even seq; inside the window their order does not matter (an optimistic
     * reader validates, an epoch reader validates a miss, and every word it can see leads to a
     * record of its key). Release stores here kept the compiler from hoisting the segment's
     * checks out of the walk: inserts 3-10% slower (docs/speed-work.md, twenty-seventh session).
     */
    private void place(MemorySegment t, int cap, long word, int slot) {
        // The first slot that is empty or holds a word nearer its home than this one would be:
        // the word goes there, and the rest of the cluster moves one slot on.
        int d = 0;
        long w;
        for (; ; ) {
            w = (long) WORD.get(t, (long) slot << 3);
            if (IndexWord.endsProbe(w, d)) {
                break;
            }
            if (++slot == cap) {
                slot = 0;
            }
            if (++d > IndexWord.MAX_DIST) {
                throw probeTooLong();
            }
        }
        if (w != IndexWord.EMPTY && maxDist >= IndexWord.MAX_DIST) {
            // A word moved on would pass the dist field's range (and growth keeps far below it).
            throw probeTooLong();
        }
        WORD.set(t, (long) slot << 3, IndexWord.withDist(word, d));
        shiftOn(t, cap, slot, w);
        maxDist = Math.max(maxDist, d);
    }

    private static IllegalStateException probeTooLong() {
        return new IllegalStateException("index probe length over " + IndexWord.MAX_DIST);
    }

    /**
     * Moves the words from the slot after {@code slot} to the cluster's end one slot on, {@code
     * w} (the word that was in {@code slot}) first: each is one slot farther from its home, a
     * single add to its dist field. The Robin Hood swaps of a placement leave the same dists
     * slot by slot (a cluster is ordered by home slot; words of one home may change places among
     * themselves), with a load, an add and a store per word instead of a dist compared and a
     * word swapped (docs/speed-work.md, fifty-third session).
     */
    private void shiftOn(MemorySegment t, int cap, int slot, long w) {
        // Nothing but the words' load, add and store in the loop, and the farthest dist field
        // kept in a local: with maxDist updated (and checked) inside it, C2 kept the segment's
        // bounds, alignment, read-only and liveness checks in every pass, twice: ~67
        // instructions a word against ~20 (docs/speed-work.md, fifty-ninth session). place
        // refused a table whose maxDist is at MAX_DIST, so a word moved once stays within the
        // field; one at MAX_DIST has gone round a table with no empty slot (which the load
        // limits rule out), and the shift stops there instead of carrying into the tag.
        long farthest = 0;
        while (w != IndexWord.EMPTY) {
            if (++slot == cap) {
                slot = 0;
            }
            long next = (long) WORD.get(t, (long) slot << 3);
            long shifted = w + IndexWord.DIST_ONE;
            long field = shifted & IndexWord.DIST_FIELD;
            if (field == IndexWord.DIST_FIELD) {
                throw probeTooLong();
            }
            farthest = Math.max(farthest, field);
            WORD.set(t, (long) slot << 3, shifted);
            w = next;
        }
        maxDist = Math.max(maxDist, (int) (farthest >>> IndexWord.DIST_SHIFT) - 1);
    }

    /**
     * Removes the word in {@code slot} by shifting its followers back, with plain stores (see
     * {@link #place}). Caller holds the lock.
     */
    public void removeAt(int slot, int recordBytes) {
        beginChange();
        try {
            MemorySegment t = table;
            int hole = slot;
            for (; ; ) {
                int next = hole + 1 == capacity ? 0 : hole + 1;
                long w = (long) WORD.get(t, (long) next << 3);
                // Empty (no dist field) or at its home (dist 0): the cluster ends, or a new one starts.
                if ((w & IndexWord.DIST_FIELD) <= IndexWord.DIST_ONE) {
                    WORD.set(t, (long) hole << 3, IndexWord.EMPTY);
                    break;
                }
                WORD.set(t, (long) hole << 3, w - IndexWord.DIST_ONE); // one slot nearer its home
                hole = next;
            }
        } finally {
            endChange();
        }
        count--;
        liveBytes -= recordBytes;
    }

    /**
     * Makes {@link #seq} odd before the caller changes words or rewrites a record in place: an
     * optimistic reader that overlaps the change fails its {@link #validate}. Caller holds the lock.
     */
    public void beginChange() {
        SEQ.setRelease(this, (long) SEQ.get(this) + 1);
        VarHandle.storeStoreFence();
    }

    /**
     * Like {@link #beginChange}, with a full fence after the odd seq is published, for a writer
     * that must next read what readers announced (the reader epochs): Dekker's handshake.
     */
    public void beginChangeFenced() {
        SEQ.setVolatile(this, (long) SEQ.get(this) + 1);
    }

    /**
     * Announces a conditional update (see {@link #pendingUpdates}) before it reads the record it
     * will compare against. An atomic add is a full fence: an in-place writer that rewrites the
     * record after this sees it and appends instead; one that rewrote it before has finished
     * (the update's read waits for an even seq). Pair with {@link #endUpdate}.
     */
    public void beginUpdate() {
        PENDING.getAndAdd(this, 1);
    }

    public void endUpdate() {
        PENDING.getAndAdd(this, -1);
    }

    /**
     * Whether a record may be rewritten in place now: no conditional update is in flight. Call
     * after {@link #beginChangeFenced}.
     */
    public boolean noPendingUpdates() {
        return (int) PENDING.getVolatile(this) == 0;
    }

    /** Makes {@link #seq} even again: the change is published. */
    public void endChange() {
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
        NativeMemory.Block newBlock = NativeMemory.allocate(newCap * 8L, adviseHugePages);
        MemorySegment t = table;
        MemorySegment n = newBlock.segment();
        maxDist = 0;
        RecordLayout.Header header = new RecordLayout.Header(); // one for the whole rehash
        for (int i = 0; i < capacity; i++) {
            long w = (long) WORD.get(t, (long) i << 3);
            if (w != IndexWord.EMPTY) {
                long h = store.hashOfKeyAt(seed, IndexWord.location(w), header);
                place(n, newCap, IndexWord.withDist(w, 0), IndexWord.homeSlot(h, newCap));
            }
        }
        NativeMemory.Block old = block;
        block = newBlock;
        capacity = newCap;
        growthCount = (long) (newCap * maxLoad);
        beginChange();
        table = n;
        endChange();
        return old;
    }

    /** Removes every word. Caller holds the lock. Returns the number removed. */
    public void clearAll() {
        beginChange();
        try {
            table.fill((byte) 0);
        } finally {
            endChange();
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

    /**
     * Counts one put and returns the shard's count with it. Caller holds the lock: a plain add on
     * the lock's own line, where an atomic add on a counter stripe was one more locked instruction
     * per put, waiting for every store before it (docs/speed-work.md, thirty-second session).
     */
    public long countPut() {
        long n = (long) PUTS.get(this) + 1;
        PUTS.setOpaque(this, n);
        return n;
    }

    /** Takes back the put {@link #countPut} counted. Caller holds the lock. */
    public void uncountPut() {
        PUTS.setOpaque(this, (long) PUTS.get(this) - 1);
    }

    /** Puts counted under the lock so far; any thread. */
    public long puts() {
        return (long) PUTS.getOpaque(this);
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
