package dev.larder.internal;

import dev.larder.CacheLoader;
import dev.larder.CacheStats;
import dev.larder.Codec;
import dev.larder.EntryTooLargeException;
import dev.larder.LoadingLarderCache;
import dev.larder.RemovalCause;
import dev.larder.RemovalListener;
import dev.larder.Ticker;
import dev.larder.ValueReader;
import dev.larder.internal.concurrent.ReaderEpochs;
import dev.larder.internal.hash.KeyHash;
import dev.larder.internal.index.IndexShard;
import dev.larder.internal.index.IndexWord;
import dev.larder.internal.memory.LargeValueStore;
import dev.larder.internal.memory.MemoryBudget;
import dev.larder.internal.memory.NativeMemory;
import dev.larder.internal.memory.PageStore;
import dev.larder.internal.memory.RecordLayout;
import dev.larder.internal.policy.ReadBuffer;
import dev.larder.internal.policy.WindowTinyLfu;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.RecursiveAction;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.LongConsumer;

/**
 * The cache. Ties the parts together: a per-cache seeded {@link KeyHash}, sharded {@link
 * IndexShard}s of 64-bit words, the {@link PageStore} log of records, the {@link
 * LargeValueStore}, {@link ReaderEpochs} for safe reclamation, and the {@link Evictor}.
 *
 * <p>A read: encode the key into a per-thread buffer, hash it, enter the reader epoch, probe the
 * shard (tags first, key bytes on a tag match), check the deadline, decode the value, exit. No
 * lock, no shared write except the reader's own epoch stripe and a saturating access counter.
 *
 * <p>A write: append the record to the log first (one CAS on the writer's stripe, the bytes
 * copied with no lock held), then take the shard's lock only to check the condition (absent,
 * present, same location) and swap the index word, then mark the record decided. A write whose
 * condition fails, or that must first make room, abandons its record (dead bytes the evictor
 * skips) and retries. No user code (codecs excepted) and no eviction runs under a shard lock
 * or inside a reader epoch, so writers, readers and the evictor can never wait on each other
 * in a cycle.
 */
public final class NativeCache<K, V> implements LoadingLarderCache<K, V> {
    private static final ValueLayout.OfLong EXTENT_ID = ValueLayout.JAVA_LONG_UNALIGNED;

    /** Conditions for {@link #write}: any state, key absent, key present, or a location. */
    static final long ANY = -2;

    static final long ABSENT = -1;
    static final long PRESENT = -4;
    /** {@link #write} outcome when the condition did not hold. */
    static final long FAILED = -3;
    /** Internal {@link #install} state: the condition held and the word was swapped. */
    private static final long DONE = -7;

    private static final ThreadLocal<int[]> READER_DEPTH = ThreadLocal.withInitial(() -> new int[1]);

    final Codec<K> keyCodec;
    final Codec<V> valueCodec;
    final long seed;
    final CacheSizing sizing;
    final MemoryBudget budget;
    final PageStore store;
    final LargeValueStore large;
    final ReaderEpochs epochs;
    final IndexShard[] shards;
    final int shardMask;
    final AtomicLong entries = new AtomicLong();
    /** Entries whose record is in the window queue (the rest are in main). */
    final LongAdder windowEntries = new LongAdder();

    private final AtomicLong indexBytes = new AtomicLong();
    final long maximumEntries;
    final StatsCounters stats = new StatsCounters();
    final ReentrantLock maintenanceLock = new ReentrantLock();
    final Evictor evictor;
    final WindowTinyLfu policy;
    /** Reads and writes to count in the frequency sketch, drained under the maintenance lock. */
    private final ReadBuffer accesses;

    private final LongConsumer countAccess;
    private final Executor executor;
    private final AtomicBoolean maintenanceScheduled = new AtomicBoolean();
    /** Set by a writer that took a page and found few left: maintenance then frees a batch. */
    private volatile boolean pagesWanted;

    private final Runnable maintenanceTask = this::maintain;
    private final ForkJoinMaintenance forkJoinTask = new ForkJoinMaintenance();
    private final ForkJoinMaintenance forkJoinSpare = new ForkJoinMaintenance();
    final RemovalListener<? super K, ? super V> listener;
    final Ticker ticker;
    final long expireAfterWriteNanos;
    final long expireAfterAccessNanos;
    private final CacheLoader<? super K, V> loader;
    private final ConcurrentHashMap<K, CompletableFuture<V>> loads = new ConcurrentHashMap<>();
    private final List<NativeMemory.Block> retiredTables = new ArrayList<>();
    private volatile boolean closed;
    private CacheMapView<K, V> mapView;

    private NativeCache(CacheConfig<K, V> config, CacheLoader<? super K, V> loader) {
        this.keyCodec = config.keyCodec();
        this.valueCodec = config.valueCodec();
        this.loader = loader;
        this.listener = config.removalListener();
        this.ticker = config.ticker();
        this.expireAfterWriteNanos = config.expireAfterWriteNanos();
        this.expireAfterAccessNanos = config.expireAfterAccessNanos();
        this.maximumEntries = config.maximumEntries() > 0 ? config.maximumEntries() : Long.MAX_VALUE;
        this.seed = ThreadLocalRandom.current().nextLong();
        int cores = Runtime.getRuntime().availableProcessors();
        this.sizing = CacheSizing.of(
                config.maximumBytes(),
                config.expectedEntries(),
                config.indexMemoryBudget(),
                config.concurrencyLevel(),
                cores);
        this.budget = new MemoryBudget(config.maximumBytes());
        this.shards = new IndexShard[sizing.shards()];
        this.shardMask = shards.length - 1;
        try {
            for (int i = 0; i < shards.length; i++) {
                shards[i] = new IndexShard(sizing.initialSlotsPerShard(), sizing.maxLoad(), budget);
            }
        } catch (RuntimeException e) {
            for (IndexShard shard : shards) {
                if (shard != null) {
                    shard.free();
                }
            }
            throw new IllegalArgumentException(
                    "maximumBytes (" + config.maximumBytes() + ") is too small for the index of " + shards.length
                            + " shards; raise it or set a lower concurrencyLevel or expectedEntries",
                    e);
        }
        for (IndexShard shard : shards) {
            indexBytes.addAndGet(shard.tableBytes());
        }
        if (budget.available() < 4L * sizing.pageSize()) {
            for (IndexShard shard : shards) {
                shard.free();
            }
            throw new IllegalArgumentException("maximumBytes (" + config.maximumBytes()
                    + ") leaves less than 4 pages of " + sizing.pageSize() + " bytes after the index");
        }
        this.store = new PageStore(sizing.pageSize(), config.maximumBytes(), sizing.writerStripes(), budget);
        this.large = new LargeValueStore(budget);
        this.epochs = new ReaderEpochs(4 * cores);
        this.policy = new WindowTinyLfu(policyCapacity(config, sizing), seed, budget);
        this.evictor = new Evictor(this, policy);
        this.accesses = new ReadBuffer(2 * CacheSizing.ceilPow2(cores), ACCESS_BUFFER);
        this.countAccess = policy::record;
        this.executor = config.executor();
    }

    /** Accesses a reader stripe holds before they are counted (or, when it is full, dropped). */
    private static final int ACCESS_BUFFER = 128;

    /** Entries the policy is sized for first: the bound, the expectation, or a guess it grows from. */
    private static long policyCapacity(CacheConfig<?, ?> config, CacheSizing sizing) {
        if (config.maximumEntries() > 0) {
            return Math.min(config.maximumEntries(), config.maximumBytes() / 16);
        }
        if (config.expectedEntries() > 0) {
            return config.expectedEntries();
        }
        return Math.max(16, config.maximumBytes() / 1024);
    }

    public static <K, V> NativeCache<K, V> create(CacheConfig<K, V> config, CacheLoader<? super K, V> loader) {
        return new NativeCache<>(config, loader);
    }

    // ---------------------------------------------------------------------------------------
    // Reads

    @Override
    public V getIfPresent(K key) {
        checkOpen();
        Objects.requireNonNull(key, "key");
        KeyScratch ks = KeyScratch.encode(keyCodec, key, sizing.maxKeyLength());
        try {
            V value = lookup(ks, true);
            if (value == null) {
                stats.misses.increment();
            } else {
                stats.hits.increment();
            }
            return value;
        } finally {
            ks.release();
        }
    }

    /** Decodes the live value of the encoded key, or returns null. */
    private V lookup(KeyScratch ks, boolean recordAccess) {
        long hash = KeyHash.hash(seed, ks.segment, 0, ks.length);
        IndexShard shard = shardFor(hash);
        long expiredLocation = -1;
        int token = epochs.enter();
        try {
            long w = shard.find(hash, store, ks.segment, ks.length);
            if (w == IndexWord.EMPTY) {
                return null;
            }
            long location = IndexWord.location(w);
            MemorySegment page = store.page(location);
            long offset = store.offset(location);
            RecordLayout.Header h = ks.header.parse(page, offset, sizing.pageSize());
            if (h.expires()) {
                long now = ticker.read();
                long deadline = RecordLayout.readDeadline(page, h.deadlineOffset);
                if (now - deadline >= 0) {
                    expiredLocation = location;
                    return null;
                }
                if (recordAccess && expireAfterAccessNanos > 0 && (h.layout & RecordLayout.FIXED_TTL) == 0) {
                    extendLife(page, h, deadline, now);
                }
            }
            if (recordAccess) {
                RecordLayout.recordAccess(page, offset);
                recordInSketch(hash);
            }
            return decodeValue(location, h);
        } finally {
            epochs.exit(token);
            if (expiredLocation >= 0) {
                removeExpired(shard, hash, ks, expiredLocation);
            }
        }
    }

    /** Under expireAfterAccess, moves a read entry's deadline forward (coarsely, to save writes). */
    private void extendLife(MemorySegment page, RecordLayout.Header h, long deadline, long now) {
        long extended = now + expireAfterAccessNanos;
        if (extended - deadline > (expireAfterAccessNanos >>> 5)) {
            RecordLayout.writeDeadline(page, h.deadlineOffset, extended);
        }
    }

    /** Decodes the value of the record at {@code location}; the caller is inside an epoch. */
    V decodeValue(long location, RecordLayout.Header h) {
        if (h.large()) {
            long id = store.page(location).get(EXTENT_ID, h.valueOffset);
            return valueCodec.read(large.segment(id, h.valueLength).asReadOnly(), 0, h.valueLength);
        }
        return valueCodec.read(store.readOnlyPage(location), h.valueOffset, h.valueLength);
    }

    K decodeKey(long location, RecordLayout.Header h) {
        return keyCodec.read(store.readOnlyPage(location), h.keyOffset, h.keyLength);
    }

    /** A read-only view of the value's bytes; the caller is inside an epoch. */
    private MemorySegment valueView(long location, RecordLayout.Header h) {
        if (h.large()) {
            long id = store.page(location).get(EXTENT_ID, h.valueOffset);
            return large.segment(id, h.valueLength).asReadOnly();
        }
        return store.readOnlyPage(location).asSlice(h.valueOffset, h.valueLength);
    }

    @Override
    public <R> R read(K key, ValueReader<R> reader) {
        checkOpen();
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(reader, "reader");
        KeyScratch ks = KeyScratch.encode(keyCodec, key, sizing.maxKeyLength());
        long hash = KeyHash.hash(seed, ks.segment, 0, ks.length);
        IndexShard shard = shardFor(hash);
        long expiredLocation = -1;
        int[] depth = READER_DEPTH.get();
        int token = epochs.enter();
        depth[0]++;
        try {
            long w = shard.find(hash, store, ks.segment, ks.length);
            if (w == IndexWord.EMPTY) {
                stats.misses.increment();
                return null;
            }
            long location = IndexWord.location(w);
            MemorySegment page = store.page(location);
            long offset = store.offset(location);
            RecordLayout.Header h = new RecordLayout.Header().parse(page, offset, sizing.pageSize());
            if (h.expires()) {
                long now = ticker.read();
                long deadline = RecordLayout.readDeadline(page, h.deadlineOffset);
                if (now - deadline >= 0) {
                    expiredLocation = location;
                    stats.misses.increment();
                    return null;
                }
                if (expireAfterAccessNanos > 0 && (h.layout & RecordLayout.FIXED_TTL) == 0) {
                    extendLife(page, h, deadline, now);
                }
            }
            RecordLayout.recordAccess(page, offset);
            recordInSketch(hash);
            stats.hits.increment();
            return reader.read(valueView(location, h));
        } finally {
            depth[0]--;
            epochs.exit(token);
            try {
                if (expiredLocation >= 0) {
                    removeExpired(shard, hash, ks, expiredLocation);
                }
            } finally {
                ks.release();
            }
        }
    }

    /** Whether the calling thread is inside a {@link ValueReader} callback of some cache. */
    static boolean insideReader() {
        return READER_DEPTH.get()[0] > 0;
    }

    /**
     * The present values of {@code keys}; a loading cache also loads the absent ones (one load
     * per key at a time, as {@link #get(Object)}), leaving out keys it loads no value for.
     */
    @Override
    public Map<K, V> getAll(Iterable<? extends K> keys) {
        checkOpen();
        Objects.requireNonNull(keys, "keys");
        Map<K, V> result = new LinkedHashMap<>();
        for (K key : keys) {
            V value = loader == null ? getIfPresent(key) : get(key);
            if (value != null) {
                result.put(key, value);
            }
        }
        return result;
    }

    @Override
    public boolean containsKey(K key) {
        checkOpen();
        Objects.requireNonNull(key, "key");
        KeyScratch ks = KeyScratch.encode(keyCodec, key, sizing.maxKeyLength());
        try {
            return locate(ks) >= 0;
        } finally {
            ks.release();
        }
    }

    /** The location of the key's live record, or {@link #ABSENT}. */
    private long locate(KeyScratch ks) {
        int token = epochs.enter();
        try {
            return liveLocation(ks);
        } finally {
            epochs.exit(token);
        }
    }

    /** Inside an epoch: the location of the encoded key's live record, or {@link #ABSENT}. */
    private long liveLocation(KeyScratch ks) {
        long hash = KeyHash.hash(seed, ks.segment, 0, ks.length);
        long w = shardFor(hash).find(hash, store, ks.segment, ks.length);
        if (w == IndexWord.EMPTY) {
            return ABSENT;
        }
        long location = IndexWord.location(w);
        return isExpired(location) ? ABSENT : location;
    }

    /** Whether the record at {@code location} is past its deadline; the caller is inside an epoch. */
    boolean isExpired(long location) {
        MemorySegment page = store.page(location);
        long offset = store.offset(location);
        int layout = RecordLayout.layout(page, offset);
        if ((layout & RecordLayout.EXPIRES) == 0) {
            return false;
        }
        return isExpired(location, new RecordLayout.Header().parse(page, offset, sizing.pageSize()));
    }

    /** Whether the record at {@code location}, parsed into {@code h}, is past its deadline. */
    boolean isExpired(long location, RecordLayout.Header h) {
        return h.expires() && ticker.read() - RecordLayout.readDeadline(store.page(location), h.deadlineOffset) >= 0;
    }

    /**
     * The live value of the key and its location, for the compute family: {@code out[0]} gets
     * the value (or null), the return value is the location or {@link #ABSENT}.
     */
    private long readForUpdate(KeyScratch ks, Object[] out) {
        int token = epochs.enter();
        try {
            long location = liveLocation(ks);
            out[0] = location == ABSENT ? null : decodeValue(location, header(location));
            return location;
        } finally {
            epochs.exit(token);
        }
    }

    RecordLayout.Header header(long location) {
        return new RecordLayout.Header().parse(store.page(location), store.offset(location), sizing.pageSize());
    }

    // ---------------------------------------------------------------------------------------
    // Writes

    @Override
    public void put(K key, V value) {
        putInternal(key, value, 0, ANY, null);
    }

    @Override
    public void put(K key, V value, Duration timeToLive) {
        Objects.requireNonNull(timeToLive, "timeToLive");
        if (timeToLive.isNegative() || timeToLive.isZero()) {
            throw new IllegalArgumentException("timeToLive must be positive, was " + timeToLive);
        }
        putInternal(key, value, timeToLive.toNanos(), ANY, null);
    }

    @Override
    public void putAll(Map<? extends K, ? extends V> map) {
        Objects.requireNonNull(map, "map");
        for (Map.Entry<? extends K, ? extends V> e : map.entrySet()) {
            put(e.getKey(), e.getValue());
        }
    }

    @Override
    public V getAndPut(K key, V value) {
        Object[] old = new Object[1];
        putInternal(key, value, 0, ANY, old);
        return castValue(old[0]);
    }

    @Override
    public boolean putIfAbsent(K key, V value) {
        return putInternal(key, value, 0, ABSENT, null) != FAILED;
    }

    @Override
    public boolean replace(K key, V value) {
        return putInternal(key, value, 0, PRESENT, null) != FAILED;
    }

    @Override
    public boolean replace(K key, V expected, V value) {
        checkOpen();
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(expected, "expected");
        Objects.requireNonNull(value, "value");
        byte[] expectedBytes = encodeValue(expected);
        for (; ; ) {
            long location = locateIfValueEquals(key, expectedBytes);
            if (location < 0) {
                return false;
            }
            if (putInternal(key, value, 0, location, null) != FAILED) {
                return true;
            }
        }
    }

    private long putInternal(K key, V value, long ttlNanos, long condition, Object[] previous) {
        checkOpen();
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(value, "value");
        KeyScratch ks = KeyScratch.encode(keyCodec, key, sizing.maxKeyLength());
        try {
            long result = write(ks, value, ttlNanos, condition, previous);
            if (result != FAILED) {
                stats.puts.increment();
            }
            return result;
        } finally {
            ks.release();
        }
    }

    byte[] encodeValue(V value) {
        int length = valueCodec.size(value);
        byte[] bytes = new byte[length];
        valueCodec.write(value, MemorySegment.ofArray(bytes), 0);
        return bytes;
    }

    /**
     * Appends a record for the encoded key and installs it if {@code condition} holds. Returns
     * the replaced location, {@link #ABSENT} if the key was new, or {@link #FAILED}. With {@code
     * previous} non-null, {@code previous[0]} gets the replaced value.
     */
    long write(KeyScratch ks, V value, long ttlNanos, long condition, Object[] previous) {
        int keyLength = ks.length;
        int valueLength = valueCodec.size(value);
        if (valueLength < 0) {
            throw new IllegalArgumentException(
                    "value codec " + valueCodec + " returned a negative size: " + valueLength);
        }
        long now = 0;
        long deadline = 0;
        boolean fixedTtl = ttlNanos > 0;
        long life = fixedTtl ? ttlNanos : expireAfterWriteNanos > 0 ? expireAfterWriteNanos : expireAfterAccessNanos;
        boolean expires = life > 0;
        if (expires) {
            now = ticker.read();
            deadline = now + life;
        }
        boolean isLarge = valueLength > sizing.largeValueThreshold()
                || RecordLayout.maxRecordSize(keyLength, valueLength, expires, false) > sizing.pageSize();
        checkFits(keyLength, valueLength, expires, isLarge);
        long hash = KeyHash.hash(seed, ks.segment, 0, keyLength);
        IndexShard shard = shardFor(hash);
        long extent = -1;
        if (isLarge) {
            extent = allocateLarge(valueLength);
            try {
                writeValue(value, large.segment(extent), 0, valueLength);
            } catch (Throwable t) {
                large.free(extent);
                throw t;
            }
        }
        int stripe = (int) Thread.currentThread().threadId() & (store.writerStripes() - 1);
        for (; ; ) {
            long location = reserve(stripe, keyLength, valueLength, expires, isLarge);
            if (expires) {
                store.noteDeadline(location, deadline);
            }
            MemorySegment page = store.page(location);
            long offset = store.offset(location);
            int recordBytes;
            try {
                long keyAt = RecordLayout.writeHeader(
                        page, offset, keyLength, valueLength, isLarge, expires, fixedTtl, deadline);
                MemorySegment.copy(ks.segment, 0, page, keyAt, keyLength);
                long valueAt = keyAt + keyLength;
                if (isLarge) {
                    page.set(EXTENT_ID, valueAt, extent);
                    recordBytes = (int) (valueAt + RecordLayout.EXTENT_ID_BYTES - offset);
                } else {
                    writeValue(value, page, valueAt, valueLength);
                    recordBytes = (int) (valueAt + valueLength - offset);
                }
            } catch (Throwable t) {
                RecordLayout.markDecided(page, offset); // abandoned: dead bytes
                if (extent >= 0) {
                    large.free(extent);
                }
                throw t;
            }
            long outcome = install(shard, hash, ks, location, recordBytes, condition, previous);
            if (outcome == FAILED) {
                if (extent >= 0) {
                    large.free(extent);
                }
                return FAILED;
            } else if (outcome == NEED_ENTRY) {
                makeRoom(Evictor.Goal.ENTRY, 0);
            } else if (outcome == NEED_BYTES) {
                makeRoom(Evictor.Goal.BYTES, shard.growthBytes());
            } else {
                countWrite(hash);
                afterWrite(ks, offset == 0);
                return outcome;
            }
        }
    }

    private void writeValue(V value, MemorySegment target, long offset, int length) {
        if (valueCodec instanceof TrustedCodec<?>) {
            valueCodec.write(value, target, offset);
        } else {
            valueCodec.write(value, target.asSlice(offset, length), 0);
        }
    }

    /** {@link #install} outcomes besides a location, {@link #ABSENT} and {@link #FAILED}. */
    private static final long NEED_ENTRY = -5;

    private static final long NEED_BYTES = -6;

    /**
     * Swaps the key's index word to the new record at {@code location} if the condition holds,
     * and marks the record decided either way. Returns the replaced live location, {@link
     * #ABSENT}, {@link #FAILED}, or {@link #NEED_ENTRY}/{@link #NEED_BYTES} when room must be
     * made first (the record is then abandoned).
     */
    private long install(
            IndexShard shard,
            long hash,
            KeyScratch ks,
            long location,
            int recordBytes,
            long condition,
            Object[] previous) {
        MemorySegment page = store.page(location);
        long offset = store.offset(location);
        long outcome;
        long replaced = ABSENT;
        boolean replacedExpired = false;
        Evictor.Removal removal = null;
        // Decoding the replaced value needs an epoch entered before the lock is released; a
        // plain put skips both.
        boolean decode = previous != null || listener != null;
        int token = decode ? epochs.enter() : -1;
        try {
            NativeMemory.Block oldTable = null;
            RecordLayout.Header old = null;
            shard.lockSpinning();
            try {
                // Decided before the word is published, under the lock: see RecordLayout.
                RecordLayout.markDecided(page, offset);
                checkOpen();
                int slot = shard.slotOf(hash, store, ks.segment, ks.length);
                long current = slot >= 0 ? IndexWord.location(shard.wordAt(slot)) : ABSENT;
                if (current >= 0) {
                    // Safe without an epoch: the evictor needs this lock to reclaim the record.
                    old = ks.header.parse(store.page(current), store.offset(current), sizing.pageSize());
                }
                boolean live = current >= 0 && !isExpired(current, old);
                if (!conditionHolds(condition, live ? current : ABSENT)) {
                    outcome = FAILED;
                } else if (current >= 0) {
                    shard.relocate(slot, location, (int) (old.end - store.offset(current)), recordBytes);
                    if (store.queueOf(current) != PageStore.WINDOW) {
                        windowEntries.increment(); // the new record is in the window
                    }
                    replaced = current;
                    replacedExpired = !live;
                    if (!decode && old.large()) {
                        large.retire(store.page(current).get(EXTENT_ID, old.valueOffset));
                    }
                    outcome = DONE;
                } else if (!tryAddEntry()) {
                    outcome = NEED_ENTRY;
                } else {
                    if (!shard.hasRoomWithoutGrowth()) {
                        long growth = shard.growthBytes();
                        if (budget.tryReserve(growth)) {
                            long before = shard.tableBytes();
                            try {
                                oldTable = shard.grow(seed, store);
                            } catch (RuntimeException | Error e) {
                                budget.release(growth);
                                entries.decrementAndGet();
                                throw e;
                            }
                            indexBytes.addAndGet(shard.tableBytes() - before);
                        } else if (!shard.hasRoomAtHardLimit()) {
                            entries.decrementAndGet();
                            return NEED_BYTES;
                        }
                    }
                    shard.insert(hash, location, recordBytes);
                    windowEntries.increment();
                    outcome = DONE;
                }
            } finally {
                shard.lock.unlock();
                if (oldTable != null) {
                    retireTable(oldTable);
                }
            }
            if (decode && outcome == DONE && replaced >= 0) {
                // A fresh header: handing `old` to another method would make it escape, and every
                // put would allocate it.
                removal = unlinked(
                        replaced,
                        header(replaced),
                        previous,
                        replacedExpired ? RemovalCause.EXPIRED : RemovalCause.REPLACED);
            }
        } finally {
            if (decode) {
                epochs.exit(token);
            }
        }
        if (outcome == DONE) {
            outcome = replaced >= 0 && !replacedExpired ? replaced : ABSENT;
            if (replacedExpired) {
                stats.expirations.increment();
            }
            deliver(removal);
        }
        return outcome;
    }

    private static boolean conditionHolds(long condition, long current) {
        if (condition == ANY) {
            return true;
        }
        if (condition == ABSENT) {
            return current == ABSENT;
        }
        if (condition == PRESENT) {
            return current != ABSENT;
        }
        return current == condition;
    }

    private boolean tryAddEntry() {
        for (; ; ) {
            long n = entries.get();
            if (n >= maximumEntries) {
                return false;
            }
            if (entries.compareAndSet(n, n + 1)) {
                return true;
            }
        }
    }

    private void checkFits(int keyLength, int valueLength, boolean expires, boolean isLarge) {
        long recordBytes = RecordLayout.maxRecordSize(keyLength, valueLength, expires, isLarge);
        long largeBytes = isLarge ? Math.max(8, valueLength) : 0;
        // Room left for records once the index, the sketch and three pages (a writer's and the
        // evictor's two) are set aside.
        long room = budget.maximum() - indexBytes() - policy.sketchBytes() - 3L * sizing.pageSize();
        if (recordBytes > sizing.pageSize() || largeBytes > room) {
            stats.rejectedPuts.increment();
            throw new EntryTooLargeException("entry of " + keyLength + " key bytes and " + valueLength
                    + " value bytes cannot fit in this cache: maximumBytes is " + budget.maximum()
                    + ", of which " + Math.max(0, room) + " can hold one value");
        }
    }

    private long reserve(int stripe, int keyLength, int valueLength, boolean expires, boolean isLarge) {
        for (; ; ) {
            long location = store.reserve(stripe, keyLength, valueLength, expires, isLarge);
            if (location != PageStore.NO_PAGE) {
                return location;
            }
            makeRoom(Evictor.Goal.PAGE, 0);
        }
    }

    private long allocateLarge(int valueLength) {
        for (; ; ) {
            long id = large.allocate(valueLength);
            if (id >= 0) {
                return id;
            }
            makeRoom(Evictor.Goal.BYTES, Math.max(8, valueLength));
        }
    }

    /** Runs the evictor until {@code goal} is met; blocks other maintenance meanwhile. */
    void makeRoom(Evictor.Goal goal, long bytes) {
        if (insideReader()) {
            throw new IllegalStateException("the cache is full and cannot reclaim memory while this thread is"
                    + " inside a ValueReader callback; do not write to the cache from inside one");
        }
        List<Evictor.Removal> removed;
        maintenanceLock.lock();
        try {
            checkOpen();
            drainAccesses();
            if (!evictor.makeRoom(goal, bytes)) {
                throw new IllegalStateException("cannot make room in the cache for " + goal + " (" + bytes
                        + " bytes): every page is held by writers in progress");
            }
            removed = evictor.takeRemovals();
        } finally {
            maintenanceLock.unlock();
        }
        deliver(removed);
    }

    /**
     * Schedules maintenance when a write took a fresh page and few are left (the low watermark)
     * and, for expiry and the policy's housekeeping, after every 64
     * writes of a thread. Writers wait for eviction only at the high watermark: no page to
     * append to, or no entry slot (see {@link #makeRoom}).
     */
    private void afterWrite(KeyScratch ks, boolean freshPage) {
        if (insideReader()) {
            return;
        }
        // Free pages only go when a writer takes one: look at the watermark then, not on every
        // write (large values use the budget too, and must not make every write evict).
        boolean pagesLow = freshPage && store.lowOnPages(evictor.lowWatermarkPages());
        if (pagesLow) {
            pagesWanted = true;
        }
        if (pagesLow || (++ks.writes & 63) == 0) {
            scheduleMaintenance();
        }
    }

    /** Hands the maintenance task to the executor unless it is already scheduled. */
    void scheduleMaintenance() {
        if (maintenanceScheduled.get() || !maintenanceScheduled.compareAndSet(false, true)) {
            return;
        }
        try {
            if (executor instanceof ForkJoinPool pool) {
                // A ForkJoinPool wraps a plain Runnable in a new task each time: hand it one of
                // two reusable tasks instead, so scheduling allocates nothing. Scheduling is
                // cleared when a run starts, so at most one runs while another waits.
                ForkJoinMaintenance task =
                        forkJoinTask.reusable() ? forkJoinTask : forkJoinSpare.reusable() ? forkJoinSpare : null;
                if (task == null) {
                    maintenanceScheduled.set(false); // both in flight: the running one will see
                    return;
                }
                task.reinitialize();
                task.submitted = true;
                pool.execute(task);
            } else {
                executor.execute(maintenanceTask);
            }
        } catch (RuntimeException rejected) {
            // A shut-down or saturated executor: writers evict on their own at the high watermark.
            maintenanceScheduled.set(false);
        }
    }

    /** The maintenance task as a reusable fork-join task. */
    private final class ForkJoinMaintenance extends RecursiveAction {
        volatile boolean submitted;

        boolean reusable() {
            return !submitted || isDone();
        }

        @Override
        protected void compute() {
            maintain();
        }
    }

    /** The maintenance task: drain the access buffers, expire, evict down to the low watermark. */
    private void maintain() {
        maintenanceScheduled.set(false);
        if (closed) {
            return;
        }
        List<Evictor.Removal> removed;
        maintenanceLock.lock();
        try {
            if (closed) {
                return;
            }
            drainAccesses();
            boolean freePages = pagesWanted;
            pagesWanted = false;
            evictor.routine(freePages);
            removed = evictor.takeRemovals();
        } finally {
            maintenanceLock.unlock();
        }
        deliver(removed);
    }

    /**
     * Counts a write in the frequency sketch. Unlike a read it is not given up at the first
     * full stripe: a new key's first count is what its admission is judged by. A writer whose
     * stripe is full drains it if the maintenance lock is free, else spins briefly for the holder
     * to drain it; it never parks on the lock (parking allocated a queue node per contended write,
     * and put a writer behind a whole eviction batch). Under sustained contention a count can
     * still be lost, as a read's can.
     */
    private void countWrite(long hash) {
        if (accesses.offer(hash) || insideReader()) {
            return;
        }
        for (int attempt = 0; attempt < 64; attempt++) {
            if (drainAndOfferIfFree(hash)) {
                return;
            }
            Thread.onSpinWait();
            if (accesses.offer(hash)) {
                return;
            }
        }
    }

    /**
     * Counts a read in the frequency sketch, through the lossy read buffer: readers share no
     * lock. A full buffer is drained by whoever gets the maintenance lock at once; if another
     * thread holds it, the access is dropped (the sketch only estimates).
     */
    private void recordInSketch(long hash) {
        if (!accesses.offer(hash) && !insideReader()) {
            drainAndOfferIfFree(hash);
        }
    }

    /**
     * If the maintenance lock is free: drains the access buffers into the sketch and offers
     * {@code hash} again. Returns whether it got the lock.
     */
    private boolean drainAndOfferIfFree(long hash) {
        if (!maintenanceLock.tryLock()) {
            return false;
        }
        try {
            if (!closed) {
                drainAccesses();
                accesses.offer(hash);
            }
        } finally {
            maintenanceLock.unlock();
        }
        return true;
    }

    /** Under the maintenance lock: counts the buffered accesses and lets the policy adapt. */
    private void drainAccesses() {
        accesses.drainTo(countAccess);
        evictor.adapt(stats.hits.sum(), stats.misses.sum());
        policy.ensureCapacity(entries.get());
    }

    @Override
    public void cleanUp() {
        checkOpen();
        List<Evictor.Removal> removed;
        maintenanceLock.lock();
        try {
            checkOpen();
            drainAccesses();
            evictor.cleanUp();
            removed = evictor.takeRemovals();
        } finally {
            maintenanceLock.unlock();
        }
        deliver(removed);
    }

    void retireTable(NativeMemory.Block table) {
        synchronized (retiredTables) {
            retiredTables.add(table);
        }
    }

    /** Index tables retired by growth; the evictor frees them after a grace period. */
    List<NativeMemory.Block> takeRetiredTables() {
        synchronized (retiredTables) {
            if (retiredTables.isEmpty()) {
                return List.of();
            }
            List<NativeMemory.Block> out = new ArrayList<>(retiredTables);
            retiredTables.clear();
            return out;
        }
    }

    boolean hasRetiredTables() {
        synchronized (retiredTables) {
            return !retiredTables.isEmpty();
        }
    }

    /** Bytes of live index tables (retired ones excluded), kept current by growth. */
    long indexBytes() {
        return indexBytes.get();
    }

    // ---------------------------------------------------------------------------------------
    // Removal

    @Override
    public boolean remove(K key) {
        return removeInternal(key, ANY, null) != FAILED;
    }

    @Override
    public boolean remove(K key, V expected) {
        checkOpen();
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(expected, "expected");
        byte[] expectedBytes = encodeValue(expected);
        for (; ; ) {
            long location = locateIfValueEquals(key, expectedBytes);
            if (location < 0) {
                return false;
            }
            if (removeInternal(key, location, null) != FAILED) {
                return true;
            }
        }
    }

    @Override
    public V getAndRemove(K key) {
        Object[] old = new Object[1];
        removeInternal(key, ANY, old);
        return castValue(old[0]);
    }

    /** The location of the key's live record if its value's bytes equal {@code expected}, else -1. */
    private long locateIfValueEquals(K key, byte[] expected) {
        KeyScratch ks = KeyScratch.encode(keyCodec, key, sizing.maxKeyLength());
        int token = epochs.enter();
        try {
            long location = liveLocation(ks);
            if (location == ABSENT) {
                return ABSENT;
            }
            RecordLayout.Header h = header(location);
            if (h.valueLength != expected.length) {
                return ABSENT;
            }
            MemorySegment view = valueView(location, h);
            return MemorySegment.mismatch(view, 0, expected.length, MemorySegment.ofArray(expected), 0, expected.length)
                            < 0
                    ? location
                    : ABSENT;
        } finally {
            epochs.exit(token);
            ks.release();
        }
    }

    /**
     * Removes the key if its record is at {@code condition} (or {@link #ANY}). Returns the
     * removed location or {@link #FAILED}.
     */
    private long removeInternal(K key, long condition, Object[] previous) {
        checkOpen();
        Objects.requireNonNull(key, "key");
        KeyScratch ks = KeyScratch.encode(keyCodec, key, sizing.maxKeyLength());
        try {
            long hash = KeyHash.hash(seed, ks.segment, 0, ks.length);
            return unlink(shardFor(hash), hash, ks, condition, previous, RemovalCause.EXPLICIT);
        } finally {
            ks.release();
        }
    }

    /**
     * Removes the encoded key's word if it leads to {@code condition} (or any location), counts
     * it and tells the listener. An entry found expired is removed as EXPIRED and counts as not
     * found for {@link RemovalCause#EXPLICIT} removals.
     */
    private long unlink(
            IndexShard shard, long hash, KeyScratch ks, long condition, Object[] previous, RemovalCause cause) {
        Evictor.Removal removal;
        RemovalCause actual = cause;
        long removed = FAILED;
        int token = epochs.enter();
        try {
            RecordLayout.Header h;
            shard.lockSpinning();
            try {
                checkOpen();
                int slot = shard.slotOf(hash, store, ks.segment, ks.length);
                if (slot < 0) {
                    return FAILED;
                }
                long current = IndexWord.location(shard.wordAt(slot));
                if (condition != ANY && current != condition) {
                    return FAILED;
                }
                boolean expired = isExpired(current);
                if (expired) {
                    actual = RemovalCause.EXPIRED;
                } else if (cause == RemovalCause.EXPIRED) {
                    return FAILED; // rewritten meanwhile: alive again
                }
                h = header(current);
                shard.removeAt(slot, (int) (h.end - store.offset(current)));
                entries.decrementAndGet();
                if (store.queueOf(current) == PageStore.WINDOW) {
                    windowEntries.decrement();
                }
                removed = current;
            } finally {
                shard.lock.unlock();
            }
            removal = unlinked(removed, h, previous, actual);
        } finally {
            epochs.exit(token);
        }
        if (actual == RemovalCause.EXPIRED) {
            stats.expirations.increment();
        } else {
            stats.removals.increment();
        }
        deliver(removal);
        return actual == cause ? removed : FAILED;
    }

    private void removeExpired(IndexShard shard, long hash, KeyScratch ks, long location) {
        if (!closed) {
            unlink(shard, hash, ks, location, null, RemovalCause.EXPIRED);
        }
    }

    // ---------------------------------------------------------------------------------------
    // Atomic per-key updates: optimistic, retried when another writer changed the key.

    @Override
    public V compute(K key, BiFunction<? super K, ? super V, ? extends V> remapping) {
        checkOpen();
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(remapping, "remapping");
        return update(key, (k, old) -> remapping.apply(k, old), true, true);
    }

    @Override
    public V computeIfAbsent(K key, Function<? super K, ? extends V> mapping) {
        checkOpen();
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(mapping, "mapping");
        V present = getIfPresentQuietly(key);
        if (present != null) {
            return present;
        }
        return update(key, (k, old) -> old != null ? old : mapping.apply(k), true, false);
    }

    @Override
    public V computeIfPresent(K key, BiFunction<? super K, ? super V, ? extends V> remapping) {
        checkOpen();
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(remapping, "remapping");
        return update(key, (k, old) -> remapping.apply(k, old), false, true);
    }

    @Override
    public V merge(K key, V value, BiFunction<? super V, ? super V, ? extends V> remapping) {
        checkOpen();
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(value, "value");
        Objects.requireNonNull(remapping, "remapping");
        return update(key, (k, old) -> old == null ? value : remapping.apply(old, value), true, true);
    }

    /**
     * Reads the key's value and location, computes the new value outside any lock, and installs
     * it only if the key still has the same location; retries otherwise.
     *
     * @param whenAbsent whether to call {@code fn} when the key is absent
     * @param whenPresent whether to call {@code fn} when the key is present (else keep the value)
     */
    private V update(K key, BiFunction<K, V, ? extends V> fn, boolean whenAbsent, boolean whenPresent) {
        Object[] current = new Object[1];
        for (; ; ) {
            long location;
            KeyScratch ks = KeyScratch.encode(keyCodec, key, sizing.maxKeyLength());
            try {
                location = readForUpdate(ks, current);
            } finally {
                ks.release();
            }
            V old = castValue(current[0]);
            if (location == ABSENT && !whenAbsent) {
                return null;
            }
            if (location >= 0 && !whenPresent) {
                return old;
            }
            V result = fn.apply(key, old);
            if (result == old && old != null) {
                return old; // unchanged (computeIfAbsent of a present key)
            }
            if (result == null) {
                if (location == ABSENT || removeInternal(key, location, null) != FAILED) {
                    return null;
                }
                continue;
            }
            if (putInternal(key, result, 0, location == ABSENT ? ABSENT : location, null) != FAILED) {
                return result;
            }
        }
    }

    private V getIfPresentQuietly(K key) {
        KeyScratch ks = KeyScratch.encode(keyCodec, key, sizing.maxKeyLength());
        try {
            return lookup(ks, true);
        } finally {
            ks.release();
        }
    }

    // ---------------------------------------------------------------------------------------
    // Loading

    @Override
    public V get(K key, Function<? super K, ? extends V> mappingLoader) {
        checkOpen();
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(mappingLoader, "loader");
        V value = getIfPresent(key);
        if (value != null) {
            return value;
        }
        return loadOnce(key, k -> mappingLoader.apply(k));
    }

    @Override
    public V get(K key) {
        if (loader == null) {
            throw new UnsupportedOperationException("not a loading cache: build it with build(CacheLoader)");
        }
        CacheLoader<? super K, V> l = loader;
        return get(key, k -> {
            try {
                return l.load(k);
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new CompletionException(e);
            } catch (Exception e) {
                throw new CompletionException(e);
            }
        });
    }

    /** Loads the key unless another thread already is; then waits for that load's result. */
    private V loadOnce(K key, Function<? super K, ? extends V> load) {
        CompletableFuture<V> mine = new CompletableFuture<>();
        CompletableFuture<V> running = loads.putIfAbsent(key, mine);
        if (running != null) {
            return join(running);
        }
        try {
            V present = getIfPresentQuietly(key);
            if (present != null) {
                mine.complete(present);
                return present;
            }
            long start = System.nanoTime();
            V loaded;
            try {
                loaded = load.apply(key);
            } catch (Throwable t) {
                stats.loadFailures.increment();
                stats.loadNanos.add(System.nanoTime() - start);
                mine.completeExceptionally(t);
                throw t;
            }
            stats.loadNanos.add(System.nanoTime() - start);
            if (loaded == null) {
                stats.loadFailures.increment();
            } else {
                stats.loadSuccesses.increment();
                put(key, loaded);
            }
            mine.complete(loaded);
            return loaded;
        } catch (Throwable t) {
            mine.completeExceptionally(t);
            throw t;
        } finally {
            loads.remove(key, mine);
        }
    }

    private static <V> V join(CompletableFuture<V> future) {
        try {
            return future.join();
        } catch (CompletionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException re) {
                throw re;
            }
            if (cause instanceof Error err) {
                throw err;
            }
            throw e;
        }
    }

    @Override
    public CompletableFuture<V> refresh(K key) {
        checkOpen();
        Objects.requireNonNull(key, "key");
        if (loader == null) {
            throw new UnsupportedOperationException("not a loading cache: build it with build(CacheLoader)");
        }
        CacheLoader<? super K, V> l = loader;
        return CompletableFuture.supplyAsync(() -> {
            V old = getIfPresentQuietly(key);
            long start = System.nanoTime();
            V fresh;
            try {
                fresh = old == null ? l.load(key) : l.reload(key, old);
            } catch (Exception e) {
                stats.loadFailures.increment();
                stats.loadNanos.add(System.nanoTime() - start);
                throw new CompletionException(e);
            }
            stats.loadNanos.add(System.nanoTime() - start);
            if (fresh == null) {
                stats.loadFailures.increment();
                remove(key);
            } else {
                stats.loadSuccesses.increment();
                put(key, fresh);
            }
            return fresh;
        });
    }

    // ---------------------------------------------------------------------------------------
    // Whole-cache operations

    @Override
    public void clear() {
        checkOpen();
        for (IndexShard shard : shards) {
            List<Evictor.Removal> removed = new ArrayList<>();
            int token = epochs.enter();
            try {
                shard.lock.lock();
                try {
                    checkOpen();
                    long[] locations = shard.locations(new long[0]);
                    int n = shard.count();
                    for (int i = 0; i < n; i++) {
                        long location = locations[i];
                        if (store.queueOf(location) == PageStore.WINDOW) {
                            windowEntries.decrement();
                        }
                        boolean expired = isExpired(location);
                        Evictor.Removal removal = unlinked(
                                location,
                                header(location),
                                null,
                                expired ? RemovalCause.EXPIRED : RemovalCause.EXPLICIT);
                        if (removal != null) {
                            removed.add(removal);
                        }
                        if (expired) {
                            stats.expirations.increment();
                        } else {
                            stats.removals.increment();
                        }
                    }
                    shard.clearAll();
                    entries.addAndGet(-n);
                } finally {
                    shard.lock.unlock();
                }
            } finally {
                epochs.exit(token);
            }
            deliver(removed);
        }
    }

    @Override
    public long size() {
        checkOpen();
        return entries.get();
    }

    @Override
    public Iterator<K> keys() {
        checkOpen();
        return new ShardIterator<>(this, false);
    }

    @Override
    public Iterator<Map.Entry<K, V>> entries() {
        checkOpen();
        return new ShardIterator<>(this, true);
    }

    /**
     * Decodes the live entries of one shard into {@code keys} and {@code values} (values only
     * when asked). Used by the weakly consistent iterators.
     */
    void snapshotShard(int index, List<K> keys, List<V> values) {
        IndexShard shard = shards[index];
        int token = epochs.enter();
        try {
            long[] locations;
            int n;
            shard.lock.lock();
            try {
                checkOpen();
                n = shard.count();
                locations = shard.locations(new long[n]);
            } finally {
                shard.lock.unlock();
            }
            for (int i = 0; i < n; i++) {
                long location = locations[i];
                if (isExpired(location)) {
                    continue;
                }
                RecordLayout.Header h = header(location);
                keys.add(decodeKey(location, h));
                if (values != null) {
                    values.add(decodeValue(location, h));
                }
            }
        } finally {
            epochs.exit(token);
        }
    }

    int shardCount() {
        return shards.length;
    }

    @Override
    public synchronized ConcurrentMap<K, V> asMap() {
        checkOpen();
        if (mapView == null) {
            mapView = new CacheMapView<>(this);
        }
        return mapView;
    }

    @Override
    public CacheStats stats() {
        checkOpen();
        return new CacheStats(
                stats.hits.sum(),
                stats.misses.sum(),
                stats.puts.sum(),
                stats.removals.sum(),
                stats.evictions.sum(),
                stats.expirations.sum(),
                stats.rejectedPuts.sum(),
                stats.loadSuccesses.sum(),
                stats.loadFailures.sum(),
                stats.loadNanos.sum(),
                entries.get(),
                budget.used(),
                budget.maximum());
    }

    @Override
    public long memoryUsed() {
        checkOpen();
        return budget.used();
    }

    @Override
    public long memoryMax() {
        checkOpen();
        return budget.maximum();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        maintenanceLock.lock();
        try {
            for (IndexShard shard : shards) {
                shard.lock.lock();
                try {
                    shard.free();
                } finally {
                    shard.lock.unlock();
                }
            }
            for (NativeMemory.Block table : takeRetiredTables()) {
                table.free();
            }
            store.freeAll();
            large.freeAll();
            policy.free();
        } finally {
            maintenanceLock.unlock();
        }
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    void checkOpen() {
        if (closed) {
            throw new IllegalStateException("cache is closed");
        }
    }

    IndexShard shardFor(long hash) {
        return shards[IndexWord.shardBits(hash) & shardMask];
    }

    /**
     * After a record's word is gone, inside an epoch: decodes the value for the caller ({@code
     * previous[0]}, unless it expired) and the entry for the listener, and retires the record's
     * large value. Returns the removal to deliver once out of the epoch, or null.
     */
    Evictor.Removal unlinked(long location, RecordLayout.Header h, Object[] previous, RemovalCause cause) {
        boolean wantValue = previous != null && cause != RemovalCause.EXPIRED;
        Evictor.Removal removal = null;
        if (wantValue || listener != null) {
            Object value = decodeValue(location, h);
            if (wantValue) {
                previous[0] = value;
            }
            if (listener != null) {
                removal = new Evictor.Removal(decodeKey(location, h), value, cause);
            }
        }
        if (h.large()) {
            large.retire(store.page(location).get(EXTENT_ID, h.valueOffset));
        }
        return removal;
    }

    /** Tells the listener about one removal (null: nothing to tell). */
    @SuppressWarnings("unchecked")
    void deliver(Evictor.Removal removal) {
        if (removal == null || listener == null) {
            return;
        }
        try {
            listener.onRemoval((K) removal.key(), (V) removal.value(), removal.cause());
        } catch (RuntimeException e) {
            System.getLogger(NativeCache.class.getName())
                    .log(System.Logger.Level.WARNING, "removal listener threw; ignored", e);
        }
    }

    void deliver(List<Evictor.Removal> removed) {
        for (Evictor.Removal r : removed) {
            deliver(r);
        }
    }

    @SuppressWarnings("unchecked")
    private V castValue(Object value) {
        return (V) value;
    }

    @Override
    public String toString() {
        return "LarderCache[size=" + entries.get() + ", memoryUsed=" + budget.used() + ", memoryMax=" + budget.maximum()
                + (closed ? ", closed" : "") + "]";
    }

    /** Iterates shard by shard over decoded snapshots of each shard's entries. */
    private static final class ShardIterator<K, V, T> implements Iterator<T> {
        private final NativeCache<K, V> cache;
        private final boolean withValues;
        private final List<K> keys = new ArrayList<>();
        private final List<V> values = new ArrayList<>();
        private int shard;
        private int position;
        private K last;

        ShardIterator(NativeCache<K, V> cache, boolean withValues) {
            this.cache = cache;
            this.withValues = withValues;
        }

        @Override
        public boolean hasNext() {
            while (position >= keys.size()) {
                if (shard >= cache.shardCount()) {
                    return false;
                }
                keys.clear();
                values.clear();
                position = 0;
                cache.snapshotShard(shard++, keys, withValues ? values : null);
            }
            return true;
        }

        @Override
        @SuppressWarnings("unchecked")
        public T next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            K key = keys.get(position);
            last = key;
            if (withValues) {
                V value = values.get(position++);
                return (T) new CacheMapView.LiveEntry<>(cache, key, value);
            }
            position++;
            return (T) key;
        }

        @Override
        public void remove() {
            if (last == null) {
                throw new IllegalStateException("next() was not called, or remove() was already called");
            }
            cache.remove(last);
            last = null;
        }
    }
}
