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
import dev.larder.internal.policy.AccessBuffer;
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
import java.util.concurrent.ForkJoinTask;
import java.util.concurrent.RecursiveAction;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiFunction;
import java.util.function.Function;

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

    final Codec<K> keyCodec;
    final Codec<V> valueCodec;
    final long seed;
    final CacheSizing sizing;
    /** {@code sizing.maxKeyLength()}, which every keyed call passes: kept, not computed each time. */
    private final int maxKeyLength;

    final MemoryBudget budget;
    final PageStore store;
    final LargeValueStore large;
    final ReaderEpochs epochs;
    final IndexShard[] shards;
    /**
     * The shards' first tables, one after another in one block advised for huge pages, when they
     * are smaller than a huge page each and a huge page or more together (else null): a table of
     * its own that small never gets one. Freed when the cache closes; a table retired before
     * then gives its memory back and leaves the block mapped.
     */
    private final NativeMemory.Block firstTables;

    final int shardMask;
    final EntryCount entries = new EntryCount();
    /** Entries in main's queues (the window holds the rest). */
    final QueueCounts queues = new QueueCounts();

    private final AtomicLong indexBytes = new AtomicLong();
    /**
     * The entry bound. A partition's is its share of the cache's, moved between partitions by
     * its {@link EntryLender} (so volatile); a single cache's never changes.
     */
    volatile long maximumEntries;
    /**
     * The entry bound the cache was built with, which its sketch is sized for: a partition that
     * borrows slots beyond it keeps its sketch (growing it would double it and lose its counts).
     */
    private final long firstEntryBound;

    /** How many partitions this cache is one of (1: it is the whole cache). */
    private final int partitionsOf;

    /** Lends entry slots between the partitions of one cache; null for a cache of one. */
    private EntryLender lender;

    /**
     * The least entry bound a partition keeps when it lends: half its first share, at least 1.
     * A partition that lent every slot would have no entry of its own to evict when a key of its
     * own came, and another partition's evictor would have to make room for it.
     */
    private long entryFloor;
    /** Whether reads may decode optimistically (see {@link #lookupOptimistically}): Larder's own value codecs. */
    private final boolean optimisticReads;
    /** Whether writes may rewrite a record in place (see {@link #rewriteInPlace}). */
    private final boolean inPlaceWrites;

    final StatsCounters stats = new StatsCounters();
    final ReentrantLock maintenanceLock = new ReentrantLock();
    final Evictor evictor;
    final WindowTinyLfu policy;
    /**
     * Hits to count in the frequency sketch and to mark in their records, drained under the
     * maintenance lock. Every hit is offered here exactly once, so the buffer's count of offers
     * is the hit count: counting a hit costs nothing more than recording the access.
     */
    private final AccessBuffer reads;

    /** Writes to count in the frequency sketch, drained with the reads; never dropped. */
    private final AccessBuffer writes;

    private final AccessBuffer.Sink countRead;
    private final AccessBuffer.Sink countWrite;
    private final Executor executor;
    private final AtomicBoolean maintenanceScheduled = new AtomicBoolean();
    /** Set by a writer that took a page and found few left: maintenance then frees a batch. */
    private volatile boolean pagesWanted;
    /**
     * Entries at which a writer must evict before it inserts: {@code maximumEntries} plus a
     * slack (see {@link Evictor#entrySlack}) in which an insert past the bound finds the
     * maintenance lock taken and goes on, while the lock's holder evicts.
     */
    private volatile long entryHardLimit;

    private final long entrySlack;

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

    private NativeCache(CacheConfig<K, V> config, CacheLoader<? super K, V> loader, long seed) {
        this.keyCodec = config.keyCodec();
        this.valueCodec = config.valueCodec();
        this.loader = loader;
        this.listener = config.removalListener();
        this.ticker = config.ticker();
        this.lastMaintenanceNow = ticker.read(); // a reading to fall back on from the start
        this.expireAfterWriteNanos = config.expireAfterWriteNanos();
        this.expireAfterAccessNanos = config.expireAfterAccessNanos();
        this.maximumEntries = config.maximumEntries() > 0 ? config.maximumEntries() : Long.MAX_VALUE;
        this.optimisticReads = valueCodec instanceof TrustedCodec<?>;
        // A listener wants the replaced value, which a rewrite in place would have to decode
        // under the shard's lock: such caches append instead.
        this.inPlaceWrites = valueCodec instanceof TrustedCodec<?> t && t.infallibleWrite() && listener == null;
        this.seed = seed;
        int cores = Runtime.getRuntime().availableProcessors();
        this.sizing = CacheSizing.of(
                config.maximumBytes(),
                config.expectedEntries(),
                config.indexMemoryBudget(),
                config.concurrencyLevel(),
                cores,
                config.partitions());
        this.maxKeyLength = sizing.maxKeyLength();
        if (RecordLayout.maxRecordSize(maxKeyLength, sizing.largeValueThreshold(), true, false) > sizing.pageSize()) {
            // write() relies on it: a value up to the threshold always fits a page.
            throw new IllegalStateException("pages of " + sizing.pageSize() + " bytes cannot hold a record of the "
                    + "longest key and a value at the large-value threshold");
        }
        this.budget = new MemoryBudget(config.maximumBytes());
        this.shards = new IndexShard[sizing.shards()];
        this.shardMask = shards.length - 1;
        boolean advise = config.adviseHugePages();
        if (advise) {
            NativeMemory.requireHugePageAdvice();
        }
        long tableBytes = IndexShard.tableBytesFor(sizing.initialSlotsPerShard());
        this.firstTables =
                advise && tableBytes < NativeMemory.HUGE_PAGE && tableBytes * shards.length >= NativeMemory.HUGE_PAGE
                        ? NativeMemory.allocate(tableBytes * shards.length, true)
                        : null;
        try {
            for (int i = 0; i < shards.length; i++) {
                NativeMemory.Block first =
                        firstTables != null ? NativeMemory.Block.slice(firstTables, i * tableBytes, tableBytes) : null;
                shards[i] = new IndexShard(sizing.initialSlotsPerShard(), sizing.maxLoad(), budget, first, advise);
            }
        } catch (RuntimeException e) {
            freeIndex();
            throw new IllegalArgumentException(
                    "maximumBytes (" + config.maximumBytes() + ") is too small for the index of " + shards.length
                            + " shards; raise it or set a lower concurrencyLevel or expectedEntries",
                    e);
        }
        for (IndexShard shard : shards) {
            indexBytes.addAndGet(shard.tableBytes());
        }
        if (budget.available() < 4L * sizing.pageSize()) {
            freeIndex();
            throw new IllegalArgumentException("maximumBytes (" + config.maximumBytes()
                    + ") leaves less than 4 pages of " + sizing.pageSize() + " bytes after the index");
        }
        this.store = new PageStore(sizing.pageSize(), config.maximumBytes(), sizing.writerStripes(), budget, advise);
        this.large = new LargeValueStore(budget);
        this.epochs = new ReaderEpochs(4 * cores);
        this.policy = new WindowTinyLfu(policyCapacity(config, sizing), seed, budget, advise);
        this.evictor = new Evictor(this, policy);
        this.firstEntryBound = maximumEntries;
        this.partitionsOf = Math.max(1, config.partitions());
        this.entrySlack = Evictor.entrySlack(maximumEntries);
        this.entryHardLimit = maximumEntries + entrySlack;
        this.reads = new AccessBuffer(2 * CacheSizing.ceilPow2(cores), ACCESS_BUFFER, KeyScratch::threadsNumbered);
        this.writes = new AccessBuffer(2 * CacheSizing.ceilPow2(cores), ACCESS_BUFFER, KeyScratch::threadsNumbered);
        this.countRead = this::applyAccess;
        this.countWrite = (hash, ref) -> {
            if (ref != APPENDED_ABSENT_KEY) {
                policy.record(hash); // an appended record is counted when the evictor passes it
            }
            if (ref != WRITE_OF_PRESENT_KEY) {
                policy.written(hash); // a key present has no ghost to look for
            }
        };
        this.executor = config.executor();
    }

    /** Frees the shards' tables built so far and the block of first tables: a constructor that fails. */
    private void freeIndex() {
        for (IndexShard shard : shards) {
            if (shard != null) {
                shard.free();
            }
        }
        if (firstTables != null) {
            firstTables.free(); // after the shards' tables, slices of it
        }
    }

    /** Accesses a stripe of the access buffers holds before the oldest are overwritten. */
    private static final int ACCESS_BUFFER = 512;

    /**
     * A reader drains the buffers each time its stripe has recorded this many accesses. Small,
     * because the reader that drains waits for it: a drain of 256 accesses was the whole p99.9 of
     * a one-thread GET (~11 µs at 100K entries, ~30 µs at 1M; docs/speed-work.md, eleventh and
     * twelfth sessions). An eighth of the ring, so a drainer held up by a maintenance batch still
     * has room before accesses are lost.
     */
    private static final int DRAIN_EVERY = ACCESS_BUFFER / 8;

    /**
     * Accesses a reader's drains take in between two looks at the policy's inputs (the hit and
     * miss counts for the climber, the entry count for the sketch's size). Those reads touch
     * lines that every reader and writer updates, so they are the fixed part of a drain: a reader
     * takes them once per 256 accesses, as when it drained every 256, not on each small drain.
     * Maintenance takes them on each of its drains, so the climber's sample periods end where
     * they did.
     */
    private static final int ADAPT_EVERY = 256;

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
        return new NativeCache<>(config, loader, ThreadLocalRandom.current().nextLong());
    }

    /** A cache whose keys hash under {@code seed}: a partition of a {@link PartitionedCache}. */
    static <K, V> NativeCache<K, V> create(CacheConfig<K, V> config, CacheLoader<? super K, V> loader, long seed) {
        return new NativeCache<>(config, loader, seed);
    }

    /** The longest key this cache takes, in encoded bytes. */
    int maxKeyLength() {
        return maxKeyLength;
    }

    // ---------------------------------------------------------------------------------------
    // Reads

    @Override
    public V getIfPresent(K key) {
        checkOpen();
        Objects.requireNonNull(key, "key");
        return getIfPresent(KeyScratch.encode(keyCodec, key, maxKeyLength));
    }

    /** {@link #getIfPresent(Object)} of a key encoded by the caller; releases {@code ks}. */
    V getIfPresent(KeyScratch ks) {
        try {
            V value = lookup(ks, true);
            if (value == null) {
                stats.misses.increment();
            }
            return value; // a hit was counted when it was recorded
        } finally {
            ks.release();
        }
    }

    /** Decodes the live value of the encoded key, or returns null. */
    private V lookup(KeyScratch ks, boolean recordAccess) {
        long hash = ks.hash(seed);
        IndexShard shard = shardFor(hash);
        if (optimisticReads) {
            Object value = lookupOptimistically(shard, hash, ks, recordAccess);
            if (value != IN_EPOCH) {
                return castValue(value);
            }
        }
        return lookupInEpoch(shard, hash, ks, recordAccess);
    }

    /** {@link #lookupOptimistically}'s answer when the reader must go the epoch's way. */
    private static final Object IN_EPOCH = new Object();

    /** Tries before an optimistic read that keeps racing with writers takes the epoch's way. */
    private static final int OPTIMISTIC_ATTEMPTS = 8;

    /**
     * Values up to this many bytes are read optimistically; a longer copy would be more likely to
     * race with a writer, and next to it the epoch's two atomic adds cost nothing.
     */
    static final int OPTIMISTIC_MAX_VALUE = 8 * 1024;

    /**
     * The optimistic read, for Larder's own value codecs (which only copy): probe and decode with
     * no registration at all, then keep the value only if the shard's seqlock shows that no writer
     * changed anything meanwhile (see {@link IndexShard}). Returns the value, null for a miss, or
     * {@link #IN_EPOCH} when the epoch's way must answer: the entry is expired (it is removed
     * there), the value is large, or the read kept racing.
     */
    private Object lookupOptimistically(IndexShard shard, long hash, KeyScratch ks, boolean recordAccess) {
        RecordLayout.Header h = ks.header;
        for (int attempt = 0; attempt < OPTIMISTIC_ATTEMPTS; attempt++) {
            long s = shard.beginRead();
            if (s < 0) {
                IndexShard.backOff(attempt);
                continue;
            }
            boolean recorded = false;
            try {
                long w = shard.probe(hash, store, ks.bytes, ks.length, h);
                if (w == IndexWord.EMPTY) {
                    if (shard.validate(s)) {
                        return null;
                    }
                    continue;
                }
                if (h.large() || h.valueLength > OPTIMISTIC_MAX_VALUE) {
                    return IN_EPOCH;
                }
                long location = IndexWord.location(w);
                MemorySegment page = store.page(location);
                long now = h.expires() ? ticker.read() : 0;
                int life = life(page, h, now, recordAccess);
                if (life == EXPIRED) {
                    return IN_EPOCH; // removed there
                }
                if (recordAccess) {
                    long ref = AccessBuffer.NO_REF;
                    // A record read as often as its ACCESS bits can say (most hits on hot keys)
                    // gets no reference: the drain then only counts the key, and does not read
                    // the record again (a miss by then: 2-4% of a GET).
                    boolean saturated = RecordLayout.accessSaturated(h.layout);
                    if (!saturated) {
                        // The page's generation, confirmed by a first validation: the record was
                        // live, so its page was not reused, while the generation was read (a
                        // reference with a wrong generation would have maintenance mark bytes
                        // that are not a record).
                        int generation = store.generation(store.pageOf(location));
                        if (!shard.validate(s)) {
                            continue;
                        }
                        ref = accessRef(location, generation);
                    }
                    // Recorded before the copy: the buffer's atomic would otherwise wait for the
                    // copy's stores to reach the cache (a full fence on x86), and the value's new
                    // lines are rarely there. Taken back from the count below if the read races.
                    recordRead(ks, hash, ref, saturated);
                    recorded = true;
                }
                Object value = valueCodec.read(page, h.valueOffset, h.valueLength);
                if (shard.validate(s)) {
                    if (life == EXTEND) {
                        extendLife(shard, hash, ks, now);
                    }
                    return value;
                }
                if (recorded) {
                    reads.uncount(ks.ordinal);
                }
            } catch (RuntimeException raced) {
                // Garbage read from memory a writer changed: a torn length, a closed segment. On a
                // consistent snapshot the failure is real.
                if (recorded) {
                    reads.uncount(ks.ordinal);
                }
                checkOpen();
                if (shard.validate(s)) {
                    throw raced;
                }
            }
        }
        return IN_EPOCH;
    }

    /** {@link #life}: the entry is alive (or never expires), expired, or alive and due a longer life. */
    private static final int LIVE = 0;

    private static final int EXPIRED = 1;
    private static final int EXTEND = 2;

    /**
     * Where the record parsed into {@code h} stands at {@code now} (read from the ticker only for
     * an expiring record): {@link #EXPIRED}, {@link #EXTEND} when a read ({@code access}) under
     * expire-after-access is due to move its deadline, else {@link #LIVE}.
     */
    private int life(MemorySegment page, RecordLayout.Header h, long now, boolean access) {
        if (!h.expires()) {
            return LIVE;
        }
        long deadline = RecordLayout.readDeadline(page, h.deadlineOffset);
        if (now - deadline >= 0) {
            return EXPIRED;
        }
        return access
                        && expireAfterAccessNanos > 0
                        && (h.layout & RecordLayout.FIXED_TTL) == 0
                        && extensionDue(deadline, now)
                ? EXTEND
                : LIVE;
    }

    /** The read inside a reader epoch: memory cannot be reused, or rewritten in place, meanwhile. */
    private V lookupInEpoch(IndexShard shard, long hash, KeyScratch ks, boolean recordAccess) {
        long expiredLocation = -1;
        long readLocation = -1;
        int readGeneration = 0;
        boolean readSaturated = false;
        int life = LIVE;
        long now = 0;
        int token = epochs.enter(ks.threadIndex);
        try {
            RecordLayout.Header h = ks.header;
            long w = shard.find(hash, store, ks.bytes, ks.length, h);
            if (w == IndexWord.EMPTY) {
                return null;
            }
            long location = IndexWord.location(w);
            MemorySegment page = store.page(location);
            now = h.expires() ? ticker.read() : 0;
            life = life(page, h, now, recordAccess);
            if (life == EXPIRED) {
                expiredLocation = location;
                return null;
            }
            if (recordAccess) {
                readLocation = location;
                readGeneration = store.generation(store.pageOf(location));
                readSaturated = RecordLayout.accessSaturated(h.layout);
            }
            return decodeValue(location, h);
        } finally {
            epochs.exit(token);
            afterRead(shard, hash, ks, expiredLocation, readLocation, readGeneration, readSaturated, life, now);
        }
    }

    /**
     * What a read does once out of its epoch (a synchronous executor may run maintenance here,
     * and maintenance waits for epochs): removes the expired entry it met, or records the hit
     * and moves the entry's deadline if due.
     */
    private void afterRead(
            IndexShard shard,
            long hash,
            KeyScratch ks,
            long expiredLocation,
            long readLocation,
            int readGeneration,
            boolean readSaturated,
            int life,
            long now) {
        if (expiredLocation >= 0) {
            removeExpired(shard, hash, ks, expiredLocation);
            return;
        }
        if (readLocation >= 0) {
            recordRead(ks, hash, accessRef(readLocation, readGeneration), readSaturated);
        }
        if (life == EXTEND) {
            extendLife(shard, hash, ks, now);
        }
    }

    /**
     * Under expireAfterAccess, moves a read entry's deadline to {@code now} plus its life. Under
     * the shard's lock: the evictor copies records under it, so a copy never misses the new
     * deadline. Due at most once per 1/32 of the life, so reads rarely take the lock.
     */
    private void extendLife(IndexShard shard, long hash, KeyScratch ks, long now) {
        shard.lock();
        try {
            if (closed) {
                return;
            }
            RecordLayout.Header h = ks.header;
            int slot = shard.slotOf(hash, store, ks.bytes, ks.length, h);
            if (slot < 0 || !h.expires() || (h.layout & RecordLayout.FIXED_TTL) != 0) {
                return; // gone or rewritten meanwhile
            }
            MemorySegment page = store.page(IndexWord.location(shard.wordAt(slot)));
            long deadline = RecordLayout.readDeadline(page, h.deadlineOffset);
            if (now - deadline < 0 && extensionDue(deadline, now)) {
                RecordLayout.writeDeadline(page, h.deadlineOffset, now + expireAfterAccessNanos);
            }
        } finally {
            shard.unlock();
        }
    }

    /** Whether a read at {@code now} moves the deadline: by more than 1/32 of the life, to save writes. */
    private boolean extensionDue(long deadline, long now) {
        return now + expireAfterAccessNanos - deadline > (expireAfterAccessNanos >>> 5);
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
        return read(KeyScratch.encode(keyCodec, key, maxKeyLength), reader);
    }

    /** {@link #read(Object, ValueReader)} of a key encoded by the caller; releases {@code ks}. */
    <R> R read(KeyScratch ks, ValueReader<R> reader) {
        long hash = ks.hash(seed);
        IndexShard shard = shardFor(hash);
        long expiredLocation = -1;
        long readLocation = -1;
        int readGeneration = 0;
        boolean readSaturated = false;
        int life = LIVE;
        long now = 0;
        int token = epochs.enter(ks.threadIndex);
        ks.enterReader();
        try {
            RecordLayout.Header h = ks.header; // a nested call from the callback gets its own scratch
            long w = shard.find(hash, store, ks.bytes, ks.length, h);
            if (w == IndexWord.EMPTY) {
                stats.misses.increment();
                return null;
            }
            long location = IndexWord.location(w);
            MemorySegment page = store.page(location);
            now = h.expires() ? ticker.read() : 0;
            life = life(page, h, now, true);
            if (life == EXPIRED) {
                expiredLocation = location;
                stats.misses.increment();
                return null;
            }
            readLocation = location;
            readGeneration = store.generation(store.pageOf(location));
            readSaturated = RecordLayout.accessSaturated(h.layout);
            return reader.read(valueView(location, h));
        } finally {
            ks.exitReader();
            epochs.exit(token);
            try {
                afterRead(shard, hash, ks, expiredLocation, readLocation, readGeneration, readSaturated, life, now);
            } finally {
                ks.release();
            }
        }
    }

    /** Whether the calling thread is inside a {@link ValueReader} callback of some cache. */
    static boolean insideReader() {
        return KeyScratch.current().insideReader();
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
        KeyScratch ks = KeyScratch.encode(keyCodec, key, maxKeyLength);
        try {
            return locate(ks) >= 0;
        } finally {
            ks.release();
        }
    }

    /** The location of the key's live record, or {@link #ABSENT} (for tests of where records go). */
    long locationOf(K key) {
        KeyScratch ks = KeyScratch.encode(keyCodec, key, maxKeyLength);
        try {
            return locate(ks);
        } finally {
            ks.release();
        }
    }

    /** The location of the key's live record, or {@link #ABSENT}. */
    private long locate(KeyScratch ks) {
        int token = epochs.enter(ks.threadIndex);
        try {
            return liveLocation(ks);
        } finally {
            epochs.exit(token);
        }
    }

    /** Inside an epoch: the location of the encoded key's live record, or {@link #ABSENT}. */
    private long liveLocation(KeyScratch ks) {
        long hash = ks.hash(seed);
        long w = shardFor(hash).find(hash, store, ks.bytes, ks.length, ks.header);
        if (w == IndexWord.EMPTY) {
            return ABSENT;
        }
        long location = IndexWord.location(w);
        return isExpired(location, ks.header) ? ABSENT : location;
    }

    /** Whether the record at {@code location} is past its deadline; the caller is inside an epoch. */
    boolean isExpired(long location) {
        MemorySegment page = store.page(location);
        long offset = store.offset(location);
        int layout = RecordLayout.layout(page, offset);
        if ((layout & RecordLayout.EXPIRES) == 0) {
            return false;
        }
        return isExpired(location, new RecordLayout.Header().parse(page, offset, sizing.pageSize(), store.shapes()));
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
        int token = epochs.enter(ks.threadIndex);
        try {
            long location = liveLocation(ks);
            out[0] = location == ABSENT ? null : decodeValue(location, header(location));
            return location;
        } finally {
            epochs.exit(token);
        }
    }

    RecordLayout.Header header(long location) {
        return new RecordLayout.Header()
                .parse(store.page(location), store.offset(location), sizing.pageSize(), store.shapes());
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
        return ifValueEquals(key, expected, location -> putInternal(key, value, 0, location, null) != FAILED);
    }

    /**
     * Compare-and-set on value bytes: while the key's live value encodes to the same bytes as
     * {@code expected}, offers its location to {@code install} (a write conditioned on that
     * location), until one succeeds (true) or the value differs (false).
     */
    private boolean ifValueEquals(K key, V expected, java.util.function.LongPredicate install) {
        byte[] expectedBytes = encodeValue(expected);
        IndexShard shard = shardOfKey(key);
        shard.beginUpdate(); // installs by location: see rewriteInPlace
        try {
            for (; ; ) {
                long location = locateIfValueEquals(key, expectedBytes);
                if (location < 0) {
                    return false;
                }
                if (install.test(location)) {
                    return true;
                }
            }
        } finally {
            shard.endUpdate();
        }
    }

    /** The shard that holds {@code key}, to announce a conditional update on it. */
    private IndexShard shardOfKey(K key) {
        KeyScratch ks = KeyScratch.encode(keyCodec, key, maxKeyLength);
        try {
            return shardFor(ks.hash(seed));
        } finally {
            ks.release();
        }
    }

    private long putInternal(K key, V value, long ttlNanos, long condition, Object[] previous) {
        checkOpen();
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(value, "value");
        KeyScratch ks = KeyScratch.encode(keyCodec, key, maxKeyLength);
        try {
            return write(ks, value, ttlNanos, condition, previous); // a put was counted by countWrite
        } finally {
            ks.release();
        }
    }

    /** {@link #put(Object, Object)} of a key encoded by the caller; releases {@code ks}. */
    void put(KeyScratch ks, V value) {
        try {
            Objects.requireNonNull(value, "value");
            write(ks, value, 0, ANY, null);
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
        // A value up to the threshold (an eighth of a page) always fits a page with its record's
        // header, deadline and key (at most a quarter of a page: KeyScratch checked it), so only
        // a large value's record and extent need checking: ~40 instructions fewer per write.
        boolean isLarge = valueLength > sizing.largeValueThreshold();
        if (isLarge) {
            checkLargeFits(keyLength, valueLength, expires);
        }
        long hash = ks.hash(seed);
        IndexShard shard = shardFor(hash);
        boolean counted = false;
        boolean done = false;
        int capacity = -1; // a padded record's capacity, when the key's value changes length
        try {
            if (inPlaceWrites
                    && valueLength <= (isLarge ? LARGE_IN_PLACE_MAX_VALUE : IN_PLACE_MAX_VALUE)
                    && previous == null) {
                long outcome = rewriteInPlace(
                        shard, hash, ks, value, valueLength, isLarge, expires, fixedTtl, deadline, condition);
                counted = true; // by rewriteInPlace, whenever it returns
                if (!leftToAppend(outcome)) {
                    done = outcome != FAILED;
                    if (done) {
                        afterWrite(ks, outcome == ABSENT && ks.insertedOnFreshPage);
                    }
                    return outcome;
                }
                if (outcome == RESIZE) {
                    // Padded while the budget has room to spare; else exact, in the usual format.
                    capacity = resizeInPlace ? paddedCapacity(ks.header.capacity, valueLength) : -1;
                } else if (outcome == NEED_ENTRY) {
                    // An absent key at the entry bound's hard limit: a slot first, so that the
                    // append below is not written only to be abandoned by its install.
                    awaitEntrySlot();
                }
            }
            if (!counted) {
                countAppend(ks, hash);
                counted = true;
            }
            long outcome = append(
                    ks,
                    hash,
                    shard,
                    value,
                    valueLength,
                    capacity,
                    expires,
                    fixedTtl,
                    deadline,
                    isLarge,
                    condition,
                    previous);
            done = outcome != FAILED;
            return outcome;
        } finally {
            if (counted && !done) {
                writes.uncount(ks.ordinal);
            }
        }
    }

    /**
     * The write by appending a new record to the log, then swapping the index word to it. With
     * a {@code capacity} (else -1) the record is padded to it ({@link RecordLayout#FORMAT_PADDED}),
     * if that fits a page.
     */
    private long append(
            KeyScratch ks,
            long hash,
            IndexShard shard,
            V value,
            int valueLength,
            int capacity,
            boolean expires,
            boolean fixedTtl,
            long deadline,
            boolean isLarge,
            long condition,
            Object[] previous) {
        int keyLength = ks.length;
        boolean padded = capacity >= valueLength
                && RecordLayout.maxPaddedRecordSize(keyLength, capacity, expires) <= sizing.pageSize();
        int room = padded ? capacity : valueLength;
        int format = padded ? RecordLayout.FORMAT_PADDED : store.shapes().formatFor(keyLength, valueLength, isLarge);
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
        int stripe = ks.stripe(store.writerStripes());
        for (; ; ) {
            long location = reserve(stripe, format, keyLength, room, expires, isLarge);
            int recordBytes;
            try {
                recordBytes = writeRecord(
                        location, format, ks, value, valueLength, room, extent, expires, fixedTtl, deadline);
            } catch (Throwable t) {
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
                awaitEntrySlot();
            } else if (outcome == NEED_BYTES) {
                makeRoom(Evictor.Goal.BYTES, shard.growthBytes());
            } else {
                afterWrite(ks, store.offset(location) == 0);
                return outcome;
            }
        }
    }

    /**
     * Writes the record reserved at {@code location}: its header, the key, and the value or,
     * given an {@code extent} (else -1), the id of the large value's extent; notes its deadline on
     * the page. Returns the record's bytes. A write that throws leaves the record abandoned
     * (decided, dead bytes) and rethrows; the record is not decided otherwise.
     */
    private int writeRecord(
            long location,
            int format,
            KeyScratch ks,
            V value,
            int valueLength,
            int room,
            long extent,
            boolean expires,
            boolean fixedTtl,
            long deadline) {
        if (expires) {
            store.noteDeadline(location, deadline);
        }
        MemorySegment page = store.page(location);
        long offset = store.offset(location);
        boolean isLarge = extent >= 0;
        try {
            long keyAt = RecordLayout.writeHeader(
                    page, offset, format, ks.length, valueLength, room, isLarge, expires, fixedTtl, deadline);
            RecordLayout.copyKey(ks.bytes, page, keyAt, ks.length);
            long valueAt = keyAt + ks.length;
            if (isLarge) {
                page.set(EXTENT_ID, valueAt, extent);
                return (int) (valueAt + RecordLayout.EXTENT_ID_BYTES - offset);
            }
            writeValue(value, page, valueAt, valueLength);
            return (int) (valueAt + room - offset);
        } catch (Throwable t) {
            abandon(page, location);
            throw t;
        }
    }

    /**
     * Gives up the record appended at {@code location} on {@code page} without installing it:
     * dead bytes, counted out of its page before they are marked decided (see {@link
     * PageStore#recordAbandoned}).
     */
    private void abandon(MemorySegment page, long location) {
        store.recordAbandoned(location);
        RecordLayout.markDecided(page, store.offset(location));
    }

    /** {@link #rewriteInPlace}'s answer when the write must append a new record instead. */
    private static final long NOT_IN_PLACE = -8;

    /**
     * {@link #rewriteInPlace}'s answer when the key's record holds a value of another length that
     * does not fit it: the write appends a padded record ({@link #paddedCapacity}), whose later
     * overwrites of other lengths up to its capacity are rewritten in place. The key's header
     * stays parsed in the scratch's.
     */
    private static final long RESIZE = -9;

    /**
     * Whether overwrites that change a value's length pad their records and rewrite padded ones
     * in place: while live records fill less than {@link CacheSizing#PAD_BELOW} of {@link
     * #recordRoom()}. Past that, such an overwrite appends a record of its exact length, as every
     * one did before padding: records rewritten in place stay in the oldest pages, which
     * compaction must then copy nearly whole, and two writers changing lengths in a cache sized
     * for their average outran it and evicted most entries (docs/speed-work.md, twenty-third
     * session). Judged by the evictor at each maintenance pass; a stale answer costs a few bytes
     * or a copy, never correctness.
     */
    volatile boolean resizeInPlace = true;

    /**
     * The capacity of a padded record for a value of {@code length} bytes whose key's record had
     * room for {@code previous}: a sixteenth more than the value, or what the record had if that
     * is more, up to twice the value (so a value that shrank for good wastes at most its own
     * size, and one that goes back and forth settles in one record); never above {@link
     * #IN_PLACE_MAX_VALUE}, past which nothing is rewritten in place.
     */
    static int paddedCapacity(int previous, int length) {
        if (length >= IN_PLACE_MAX_VALUE) {
            return length;
        }
        int grown = length + (length >>> 4);
        int kept = Math.min(previous, 2 * length);
        return Math.min(Math.max(grown, kept), IN_PLACE_MAX_VALUE);
    }

    /**
     * Values up to this many bytes may be rewritten in place; a longer rewrite would keep the
     * shard's readers retrying for longer than appending costs. 4 KiB until 2026-11-26: 6,000-byte
     * overwrites at 100K entries appended at 3.2 µs, and take 1.7 µs in place (OHC 1.7).
     */
    static final int IN_PLACE_MAX_VALUE = 16 * 1024;

    /**
     * Large values up to this many bytes are rewritten in place when the new one has the same
     * length (into their extent, which no epoch reader may be reading): no extent to allocate,
     * retire and recycle. Longer ones would hold the shard's lock for the whole copy.
     */
    static final int LARGE_IN_PLACE_MAX_VALUE = 64 * 1024;

    /**
     * Rewrites the key's live record in place when the new value fits it (the same value length,
     * or one up to a padded record's capacity; the same expiry kind; never a large value): no new
     * record, no copy forward later, no dead bytes. Returns the replaced location, {@link
     * #FAILED}, {@link #RESIZE} when the key's record holds a value of another length that cannot
     * be rewritten in place, or {@link #NOT_IN_PLACE} when the write must append for another
     * reason (another expiry kind, someone who must not see the bytes change is looking, or no
     * such record and {@link #insertUnderLock} could not insert it without waiting). A key found
     * absent is inserted under the same lock if it can be: then {@link #ABSENT}.
     *
     * <p>Under the shard's lock, between {@link IndexShard#beginChangeFenced} and {@link
     * IndexShard#endChange}: optimistic readers of the shard see the seq move and retry. Readers in
     * a reader epoch (zero-copy callbacks, decoding for listeners and compute) and conditional
     * updates pending on the shard must not see a record change under them, so the rewrite
     * happens only if there is none; the fenced seq and their own atomic announcements make sure
     * that one that arrives meanwhile waits for the even seq and reads the new bytes whole.
     */
    private long rewriteInPlace(
            IndexShard shard,
            long hash,
            KeyScratch ks,
            V value,
            int valueLength,
            boolean isLarge,
            boolean expires,
            boolean fixedTtl,
            long deadline,
            long condition) {
        RecordLayout.Header h = ks.header;
        long outcome = NOT_IN_PLACE;
        boolean present = false;
        boolean resize = false;
        // The lock first, then the look: no seqlock read to validate, no second walk for the
        // slot, and the few instructions left after the record's miss let the next call's misses
        // start sooner (docs/speed-work.md, twenty-second session). A put that must append takes
        // the lock once more to install; measured, that costs inserts nothing.
        long counted;
        shard.lock();
        try {
            checkOpen();
            // The sketch's line that recordWrite counts this write in, loaded now so that its miss
            // overlaps the look's (the index word, the record) instead of following the unlock:
            // one thread's inserts at 1M ~10% faster (docs/speed-work.md, thirtieth session).
            ks.sketchWord = policy.touchAhead(hash);
            int slot = shard.slotOf(hash, store, ks.bytes, ks.length, h);
            present = slot >= 0;
            // The put is counted on the shard, under its lock: no atomic, which would wait for
            // every store before it (docs/speed-work.md, twenty-sixth and thirty-second sessions).
            // Taken back below, or by the caller if the write fails (on the write counters'
            // stripe: only the sum of both is a count, see putsCounted).
            counted = shard.countPut();
            try {
                if (present && sameKind(h, isLarge, expires, fixedTtl)) {
                    resize = !h.large() && h.valueLength != valueLength;
                    if (h.large()
                            ? h.valueLength == valueLength
                            : !resize || (resizeInPlace && fitsPadded(h, valueLength))) {
                        outcome = rewriteSlot(shard, slot, h, value, valueLength, expires, deadline, condition);
                    }
                } else if (!present && !isLarge) {
                    outcome = insertUnderLock(
                            shard, hash, ks, value, valueLength, expires, fixedTtl, deadline, condition);
                }
            } catch (Throwable t) {
                shard.uncountPut();
                throw t;
            }
        } finally {
            shard.unlock();
        }
        if (outcome == NOT_IN_PLACE && resize) {
            outcome = RESIZE;
        }
        // Recorded once the look told whether the key is present (no ghost to look for) and hot
        // (sampled), and whether the write appends a record (inserted here, or by the caller),
        // outside the lock.
        boolean appends = outcome == ABSENT || leftToAppend(outcome);
        recordWrite(ks, hash, present && RecordLayout.accessSaturated(h.layout), present, counted, true, appends);
        return outcome;
    }

    /** Whether {@link #rewriteInPlace}'s {@code outcome} leaves the write to the append path. */
    private static boolean leftToAppend(long outcome) {
        return outcome == NOT_IN_PLACE || outcome == RESIZE || outcome == NEED_ENTRY;
    }

    /**
     * Under the shard's lock, for a key its look found absent: appends the record and installs
     * it without letting go of the lock, if nothing needs waiting for (the stripe's page has room,
     * an entry slot is free, the table need not grow). Returns {@link #ABSENT}, {@link #FAILED}
     * if the condition wants the key present, {@link #NEED_ENTRY} at the entry bound's hard
     * limit, or {@link #NOT_IN_PLACE} for the append path, which waits for what is missing. One
     * lock and one look per insert instead of two (docs/speed-work.md, twenty-ninth session).
     *
     * <p>Only for an infallible codec (an in-place write's): its value is written under the lock.
     * A deadline is noted on the page under the lock too, as an in-place rewrite notes its own.
     * Readers do not see the record until its word is in the table, and the evictor, which may
     * meet it in the log first, waits for it to be decided, as for any append.
     */
    private long insertUnderLock(
            IndexShard shard,
            long hash,
            KeyScratch ks,
            V value,
            int valueLength,
            boolean expires,
            boolean fixedTtl,
            long deadline,
            long condition) {
        if (!conditionHolds(condition, ABSENT)) {
            return FAILED;
        }
        if (!shard.hasRoomWithoutGrowth()) {
            return NOT_IN_PLACE;
        }
        if (!tryAddEntry()) {
            return NEED_ENTRY;
        }
        int keyLength = ks.length;
        int format = store.shapes().formatFor(keyLength, valueLength, false);
        long location =
                store.reserveOnPage(ks.stripe(store.writerStripes()), format, keyLength, valueLength, expires, false);
        if (location == PageStore.NO_PAGE) {
            entries.decrementAndGet();
            return NOT_IN_PLACE;
        }
        int recordBytes;
        try {
            recordBytes =
                    writeRecord(location, format, ks, value, valueLength, valueLength, -1, expires, fixedTtl, deadline);
        } catch (Throwable t) {
            entries.decrementAndGet();
            throw t;
        }
        // Decided before the word is published: see RecordLayout.
        RecordLayout.markDecided(store.page(location), store.offset(location));
        shard.insert(hash, location, recordBytes); // into the window: counted by entries
        ks.insertedOnFreshPage = store.offset(location) == 0;
        return ABSENT;
    }

    /**
     * Under the shard's lock: rewrites the value of the record in {@code slot}, parsed into
     * {@code h} and with room for the write's {@code valueLength} bytes, unless it expired, the
     * condition fails or someone is looking (see {@link #rewriteInPlace}).
     */
    private long rewriteSlot(
            IndexShard shard,
            int slot,
            RecordLayout.Header h,
            V value,
            int valueLength,
            boolean expires,
            long deadline,
            long condition) {
        long current = IndexWord.location(shard.wordAt(slot));
        if (isExpired(current, h)) {
            return NOT_IN_PLACE; // the append path reports the expired entry
        }
        if (!conditionHolds(condition, current)) {
            return FAILED;
        }
        MemorySegment page = store.page(current);
        boolean resized = valueLength != h.valueLength;
        shard.beginChangeFenced();
        try {
            if (!epochs.idle() || !shard.noPendingUpdates()) {
                return NOT_IN_PLACE;
            }
            if (expires) {
                RecordLayout.writeDeadline(page, h.deadlineOffset, deadline);
            }
            if (resized) {
                RecordLayout.writeValueLength(page, h, valueLength); // a padded record: nothing else moves
            }
            if (h.large()) { // into its extent: epoch readers, the only readers of large values, are idle
                valueCodec.write(value, large.segment(page.get(EXTENT_ID, h.valueOffset)), 0);
            } else {
                valueCodec.write(value, page, h.valueOffset); // exactly the value's length, cannot fail
            }
        } finally {
            shard.endChange();
        }
        if (expires) {
            store.noteDeadline(current, deadline);
        }
        if (!resized) {
            // An update is an access, as in Caffeine. Not a change of length: that appended a
            // fresh record before, which no read had marked; marked, every record a workload of
            // changing lengths rewrites is owed a second chance, and in a log a second chance is
            // a copy: two writers changing lengths at 10K entries had compaction copy the whole
            // cache over and over, fall behind and evict 80% of it (docs/speed-work.md).
            RecordLayout.recordAccess(page, store.offset(current));
        }
        return current;
    }

    /**
     * Whether a value of {@code valueLength} bytes may be rewritten into the padded record parsed
     * into {@code h}: up to its capacity, and at least half of it, so that a value that shrank
     * wastes at most its own length (a smaller one appends a record of {@link #paddedCapacity}).
     */
    private static boolean fitsPadded(RecordLayout.Header h, int valueLength) {
        return h.padded() && valueLength <= h.capacity && 2L * valueLength >= h.capacity;
    }

    /**
     * Whether the record parsed into {@code h} holds its value where the write would (inline, or
     * in an extent when {@code large}) and has the expiry kind of the record a write would make.
     */
    private static boolean sameKind(RecordLayout.Header h, boolean large, boolean expires, boolean fixedTtl) {
        return h.large() == large && h.expires() == expires && ((h.layout & RecordLayout.FIXED_TTL) != 0) == fixedTtl;
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
        int token = decode ? epochs.enter(ks.threadIndex) : -1;
        try {
            NativeMemory.Block oldTable = null;
            RecordLayout.Header old = null;
            boolean decided = false; // and installed; otherwise abandoned, in the finally below
            shard.lock();
            try {
                checkOpen();
                // Safe without an epoch: the evictor needs this lock to reclaim the record.
                int slot = shard.slotOf(hash, store, ks.bytes, ks.length, ks.header);
                long current = slot >= 0 ? IndexWord.location(shard.wordAt(slot)) : ABSENT;
                if (current >= 0) {
                    old = ks.header;
                }
                boolean live = current >= 0 && !isExpired(current, old);
                if (!conditionHolds(condition, live ? current : ABSENT)) {
                    outcome = FAILED;
                } else if (current >= 0) {
                    // Decided before the word is published, under the lock: see RecordLayout.
                    RecordLayout.markDecided(page, offset);
                    decided = true;
                    shard.relocate(slot, location, (int) (old.end - store.offset(current)), recordBytes);
                    movedToWindow(current); // the new record is in the window
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
                    RecordLayout.markDecided(page, offset);
                    decided = true;
                    shard.insert(hash, location, recordBytes); // into the window: counted by entries
                    outcome = DONE;
                }
            } finally {
                if (!decided) {
                    abandon(page, location);
                }
                shard.unlock();
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
            if (n >= entryHardLimit) {
                return false;
            }
            if (entries.compareAndSet(n, n + 1)) {
                return true;
            }
        }
    }

    /** Throws if a large value's record (its extent's id) or its extent cannot fit. */
    private void checkLargeFits(int keyLength, int valueLength, boolean expires) {
        long recordBytes = RecordLayout.maxRecordSize(keyLength, valueLength, expires, true);
        // The room is read only for a large value, whose extent the budget must hold: its terms
        // sit on lines the evictor writes, and reading them on every write cost two writers ~3%.
        if (recordBytes > sizing.pageSize() || large.extentBytes(valueLength) > recordRoom()) {
            long room = recordRoom();
            stats.rejectedPuts.increment();
            String where = partitionsOf == 1
                    ? "this cache: maximumBytes is " + budget.maximum()
                    : "its partition (one of " + partitionsOf + " that share maximumBytes): its share is "
                            + budget.maximum();
            throw new EntryTooLargeException("entry of " + keyLength + " key bytes and " + valueLength
                    + " value bytes cannot fit in " + where + ", of which " + Math.max(0, room)
                    + " can hold one value");
        }
    }

    /**
     * The budget's room for records: what is left once the index, the policy (sketch and ghost
     * lists) and three pages (a writer's and the evictor's two) are set aside.
     */
    long recordRoom() {
        return budget.maximum() - indexBytes() - policy.bytes() - 3L * sizing.pageSize();
    }

    private long reserve(int stripe, int format, int keyLength, int valueLength, boolean expires, boolean isLarge) {
        for (; ; ) {
            long location = store.reserve(stripe, format, keyLength, valueLength, expires, isLarge);
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
            makeRoom(Evictor.Goal.EXTENT, large.extentBytes(valueLength));
        }
    }

    /**
     * An insert took the entry count past {@code maximumEntries} (into the slack) and the executor
     * has no core of its own ({@link #census}): evicts a batch if the maintenance lock is free;
     * if another thread holds it, that thread is evicting, and this one goes on rather than wait.
     */
    private void evictPastTheBound() {
        underMaintenanceLock(false, Pass.PAST_BOUND);
    }

    /**
     * A partition past its entry bound borrows spare slots from the other partitions while they
     * have some (see {@link EntryLender}); returns whether it now has a free slot ({@code slot}),
     * or is within its bound.
     */
    private boolean borrowed(boolean slot) {
        if (lender == null) {
            return false;
        }
        while (slot ? entries.get() >= entryHardLimit : entries.get() > maximumEntries) {
            if (!lender.lend(this)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Whether this partition, past its entry bound, borrowed slots enough to be within it: asked
     * by every pass that evicts for the bound (a routine pass, the executor's batch), not only by
     * the writer that went past it, since such a pass may run between that writer's insert and its
     * borrow. A partition borrows before it evicts, whichever thread evicts.
     */
    boolean borrowedRoom() {
        return lender != null && borrowed(false);
    }

    /** The lender this partition borrows entry slots through, or null for a cache of its own. */
    EntryLender lender() {
        return lender;
    }

    /** Makes this cache a partition whose entry bound moves through {@code lender}. */
    void lendEntriesThrough(EntryLender lender) {
        this.lender = lender;
        this.entryFloor = Math.max(1, maximumEntries / 2);
    }

    /**
     * Slots below the entry bound that a partition may lend: all of them until it first evicts;
     * after that, those beyond two eviction batches, which a full partition keeps free after each
     * batch (lending those would only make it evict again sooner); never below its floor.
     */
    long spareEntries() {
        long bound = maximumEntries;
        long kept = stats.evictions() > 0 ? 2L * Evictor.entryBatch(bound) : 0;
        return Math.min(bound - entries.get() - kept, bound - entryFloor);
    }

    /** Moves the entry bound by {@code delta} (under the lender's lock). */
    void moveEntryBound(long delta) {
        long bound = maximumEntries + delta;
        maximumEntries = bound;
        entryHardLimit = bound + entrySlack;
    }

    /**
     * How long {@link #awaitEntrySlot} spins before it blocks on the lock: about what a park and
     * its wake-up cost on a 2-core virtual machine. Spinning a few µs (256 spins) until
     * 2026-11-27, a writer behind a batch slowed by the other core's lines parked; two threads'
     * inserts at 10K entries ~10% faster with 50 µs, no change at 100K and 1M, four threads on
     * two cores no worse (docs/speed-work.md, thirty-first session).
     */
    private static final long ENTRY_SLOT_SPIN_NANOS = 50_000;

    /** Spins between two looks at the clock while {@link #awaitEntrySlot} spins (a power of two). */
    private static final int ENTRY_SLOT_CLOCK_EVERY = 256;

    /**
     * An insert found the entry count at the hard limit (the bound plus its slack): evicts if the
     * maintenance lock is free; if another thread holds it, that thread is evicting a batch, and
     * this one spins up to {@link #ENTRY_SLOT_SPIN_NANOS} for a slot before it blocks on the lock:
     * a park and its wake-up cost more than a batch (10-50 µs on a 2-core virtual machine, against
     * a few µs, more when the batch's lines are on the other core). It does not
     * yield: a holder with a longer job (the executor's thread freeing pages, one thread more than
     * the cores) lost its CPU to yielding writers.
     */
    private void awaitEntrySlot() {
        // Asked once: a ThreadLocal lookup per spin was 9% of two threads' insert profile.
        boolean mayNotWait = insideReader();
        long spinUntil = 0;
        for (int spins = 0; entries.get() >= entryHardLimit; spins++) {
            checkOpen();
            if (borrowed(true)) {
                return;
            }
            boolean done = mayNotWait || !maintenanceLock.isLocked();
            if (!done && (spins & (ENTRY_SLOT_CLOCK_EVERY - 1)) == 0) {
                long now = System.nanoTime();
                if (spins == 0) {
                    spinUntil = now + ENTRY_SLOT_SPIN_NANOS;
                } else {
                    done = now - spinUntil >= 0;
                }
            }
            if (done) {
                makeRoom(Evictor.Goal.ENTRY, 0); // insideReader: makeRoom says why it cannot
                return;
            }
            Thread.onSpinWait();
        }
    }

    /**
     * Releases the maintenance lock after a pass that may have evicted, however it ended: the
     * evictor's removals not yet subtracted from the entry count are subtracted first.
     */
    private void endMaintenancePass() {
        evictor.countRemovals();
        maintenanceLock.unlock();
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
            endMaintenancePass();
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
        if (ks.insideReader()) {
            return;
        }
        // Free pages only go when a writer takes one: look at the watermark then, not on every
        // write (large values use the budget too, and must not make every write evict).
        if (freshPage && store.lowOnPages(evictor.lowWatermarkPages())) {
            pagesWanted = true;
            if (census.spareCore() && !handOffTrials.handOff()) {
                runMaintenance(false); // eviction runs on the writers, found faster: so does this
            } else {
                scheduleMaintenance(); // memory is short: have pages freed off this thread
            }
        } else if (entries.get() > maximumEntries && !borrowed(false)) {
            census.saw(ks.threadIndex);
            if (census.spareCore()
                    && handOffTrials.handOff()
                    && (maintenanceScheduled.get() || handOffTrials.wakeAnyway() || handOffCosts.wakePays())) {
                scheduleMaintenance(); // the batch is evicted on the executor's thread; see maintain
            } else {
                evictPastTheBound();
            }
        } else if ((++ks.writes & (ROUTINE_EVERY - 1)) == 0) {
            runMaintenance(false); // the routine, amortized here: no thread to wake for it
        }
    }

    /**
     * A writer runs the routine maintenance itself (if the lock is free) once per this many of its
     * writes: waking the executor's thread for it cost more than the routine (~10 µs per wake-up
     * on a 2-core virtual machine, a put every 64 writes).
     */
    private static final int ROUTINE_EVERY = 128;
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
                long start = System.nanoTime();
                pool.execute(task);
                handOffCosts.woke(System.nanoTime() - start);
            } else {
                // A fork-join pool queues the task; another executor may run it on this thread,
                // where it must not linger (see maintain).
                schedulingThread = Thread.currentThread();
                long start = System.nanoTime();
                try {
                    executor.execute(maintenanceTask);
                    handOffCosts.woke(System.nanoTime() - start);
                } finally {
                    schedulingThread = null;
                }
            }
        } catch (RuntimeException rejected) {
            // A shut-down or saturated executor: writers evict on their own at the high watermark,
            // and past the entry bound until the census counts again (not a throw per insert).
            census.executorRefused();
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

    /** An overwrite appended the entry's new record to the window; its old one was at {@code old}. */
    private void movedToWindow(long old) {
        queues.left(store.recordLeft(old));
    }

    /**
     * The maintenance task: when pages are short, or the entry count is within its bound, the
     * whole routine: drain the access buffers, expire, evict down to the low watermark; then,
     * while writers keep the entry count past its bound, eviction batches, up to {@link
     * #BATCHES_PER_TASK} (the next writer past the bound schedules the task again).
     *
     * <p>While the executor's thread has a core of its own ({@link #census}), the task then
     * lingers for the next batch, up to {@link HandOffCosts#LINGER_NANOS} without one, and starts
     * it as the count comes within half a batch of the bound rather than past it ({@link
     * Evictor#evictHandedOff}). A task that ended as soon as the count was back below the bound
     * left its thread to park and be woken for the next batch (a wake-up is 10-50 µs on a 2-core
     * virtual machine, the slack a few µs of inserts), and one that started only past the bound
     * let the writer reach the hard limit and wait while the batch ran: a profile of one thread's
     * inserts at 10K entries had the writer waiting 15% of its time and the executor idle 19%
     * (docs/speed-work.md, forty-fourth session). It does not linger when the executor ran it on
     * the writer's own thread, nor while other tasks wait for a fork-join pool's threads. A task
     * woken for writers past the bound reports the batches it ran ({@link HandOffCosts}: whether
     * the next wake pays).
     */
    private void maintain() {
        maintenanceScheduled.set(false);
        boolean forWriters = entries.get() > maximumEntries; // woken by a writer past the bound
        if (pagesWanted || !forWriters) {
            runMaintenance(true);
        }
        // Only while the lock is free: its holder is maintaining or evicting already, and an
        // executor that runs tasks on the caller's thread must not make a writer wait (it goes on
        // into the slack, as it did evicting inline).
        boolean mayLinger = schedulingThread != Thread.currentThread();
        boolean lingering = false; // then this task stands for a scheduled one: writers past the bound leave it to it
        int batches = 0;
        try {
            long idleSince = 0;
            long lingerBase = 0; // the count when the task began to wait for the next batch
            int baseCleanUps = 0; // cleanUps when the task took lingerBase
            while (batches < BATCHES_PER_TASK && !closed && handOffTrials.handOff()) {
                if (lingering && pagesWanted) {
                    runMaintenance(false); // a writer asked for pages meanwhile, and left it to this task
                }
                int c = cleanUps; // before the count: a cleanUp after this is caught under the lock
                long n = entries.get();
                if (idleSince != 0 && c != baseCleanUps) {
                    lingerBase = n; // a cleanUp came: what was inserted before it is not a writer inserting now
                    baseCleanUps = c;
                }
                if (n > maximumEntries
                        || (idleSince != 0
                                && n > lingerBase // a writer inserts: a quiet cache is not evicted ahead
                                && n > maximumEntries - evictor.aheadMargin()
                                && mayEvictAhead())) {
                    if (!underMaintenanceLock(false, n > maximumEntries ? Pass.HANDED_OFF : Pass.AHEAD, baseCleanUps)) {
                        break;
                    }
                    batches++;
                    idleSince = 0;
                    continue;
                }
                if (!mayLinger || !census.spareCore() || otherTasksWaiting()) {
                    break;
                }
                if (!lingering) {
                    if (!maintenanceScheduled.compareAndSet(false, true)) {
                        break; // another task is scheduled: it takes over
                    }
                    lingering = true;
                }
                long now = System.nanoTime();
                if (idleSince == 0) {
                    idleSince = now;
                    lingerBase = n;
                    baseCleanUps = c;
                } else if (now - idleSince > HandOffCosts.LINGER_NANOS) {
                    break;
                }
                for (int i = 0; i < 64 && entries.get() == n; i++) {
                    Thread.onSpinWait(); // until the count moves
                }
            }
        } finally {
            if (lingering) {
                maintenanceScheduled.set(false); // a writer past the bound from now on schedules again
            }
            if (forWriters && handOffTrials.handOff()) { // a task a trial of the other way cut short tells nothing
                handOffCosts.taskEnded(batches);
            }
        }
    }

    /** What a wake of the executor's thread and a batch cost a writer: which of them it takes. */
    private final HandOffCosts handOffCosts = new HandOffCosts();

    /** Whether handing batches off makes the writers faster at all on this machine, now: tried. */
    private final HandOffTrials handOffTrials = new HandOffTrials();

    /** The thread in {@link #scheduleMaintenance}'s hand-off, if any: an executor may run the task on it. */
    private volatile Thread schedulingThread;

    /**
     * Whether the executor may evict before the count is past the bound: not while this partition
     * could borrow slots from another instead (see {@link EntryLender}), as a writer past the bound
     * does first.
     */
    private boolean mayEvictAhead() {
        return lender == null || !lender.mayLend();
    }

    /**
     * The executor's pass ahead of the bound, as a lingering task runs it after a look at the
     * count taken when {@link #cleanUps} was {@code cleanUpsSeen} (for tests).
     */
    void evictAheadOfTheBound(int cleanUpsSeen) {
        underMaintenanceLock(false, Pass.AHEAD, cleanUpsSeen);
    }

    /** How many times {@link #cleanUp} has run (for tests). */
    int cleanUps() {
        return cleanUps;
    }

    /** Whether other tasks wait for the threads of the executor (known only of a fork-join pool). */
    private boolean otherTasksWaiting() {
        return executor instanceof ForkJoinPool pool
                && (pool.hasQueuedSubmissions() || ForkJoinTask.getQueuedTaskCount() > 0);
    }

    /** The kinds of pass {@link #underMaintenanceLock} runs. */
    private enum Pass {
        /** The whole routine ({@link Evictor#routine}). */
        ROUTINE,
        /** A batch past the bound, by a writer ({@link #evictPastTheBound}). */
        PAST_BOUND,
        /** The executor's batch for writers that handed it off, past the bound ({@link Evictor#evictHandedOff}). */
        HANDED_OFF,
        /** The same, ahead of the bound (see {@link #maintain}). */
        AHEAD
    }

    /**
     * Whether a writer past the entry bound leaves the eviction batch to the executor and goes on
     * into the slack ({@link Evictor#entrySlack}), evicting itself only at the hard limit ({@link
     * #awaitEntrySlot}): while fewer threads use the cache than there are cores, so that the
     * executor's thread evicts on a core of its own while the writers insert. One thread's
     * inserts at 10K, 100K and 1M entries took ~0.8, ~0.63 and ~0.5 of the time; handed off
     * while as many threads wrote as cores, the executor took turns with them and two threads'
     * inserts at 1M took ~1.15 of it (docs/speed-work.md, forty-first and forty-second sessions).
     */
    private final ThreadCensus census = new ThreadCensus(Runtime.getRuntime().availableProcessors(), System.nanoTime());

    /** Eviction batches one maintenance task runs at most for writers past the entry bound. */
    private static final int BATCHES_PER_TASK = 64;

    /**
     * Drains the access buffers and runs the evictor's routine under the maintenance lock; if
     * {@code wait} is false, only if the lock is free (a writer amortizing the routine never waits).
     */
    private void runMaintenance(boolean wait) {
        underMaintenanceLock(wait, Pass.ROUTINE);
    }

    /** {@link #underMaintenanceLock(boolean, Pass, int)} on a look taken now. */
    private boolean underMaintenanceLock(boolean wait, Pass pass) {
        return underMaintenanceLock(wait, pass, cleanUps);
    }

    /**
     * Under the maintenance lock (if {@code wait} is false, only if it is free): drains the
     * access buffers, then runs the evictor's whole routine, or only evicts what is past the entry
     * bound; delivers the removals after the lock is released. Returns whether the pass ran
     * (not if the lock was held and {@code wait} false, or the cache is closed). A pass {@link
     * Pass#AHEAD} evicts only if no {@link #cleanUp} has run since {@code cleanUpsSeen}, when the
     * look that decided on it was taken.
     */
    private boolean underMaintenanceLock(boolean wait, Pass pass, int cleanUpsSeen) {
        if (closed) {
            return false;
        }
        if (wait) {
            maintenanceLock.lock();
        } else if (!maintenanceLock.tryLock()) {
            return false;
        }
        List<Evictor.Removal> removed;
        try {
            if (closed) {
                return false;
            }
            injectedFault();
            boolean batch = pass == Pass.PAST_BOUND || pass == Pass.HANDED_OFF; // a batch past the bound
            long start = batch ? System.nanoTime() : 0;
            drainAccesses();
            switch (pass) {
                case ROUTINE -> {
                    boolean freePages = pagesWanted;
                    if (freePages) {
                        pagesWanted = false; // written only when set: its line is one every operation reads
                    }
                    evictor.routine(freePages);
                }
                case PAST_BOUND -> evictor.evictPastTheBound();
                case HANDED_OFF -> evictor.evictHandedOff(false);
                case AHEAD -> {
                    // Not if a cleanUp came after the look: a task that judged the count before
                    // it (its thread descheduled in between) evicted a quiet cache below its
                    // bound after the fact (CI caught that, session 63).
                    if (cleanUps == cleanUpsSeen) {
                        evictor.evictHandedOff(true);
                    }
                }
            }
            long end = System.nanoTime();
            if (batch) {
                handOffCosts.batchRan(end - start);
            }
            if (pass != Pass.ROUTINE) {
                handOffTrials.passEnded(end, stats.evictions(), census.spareCore());
            }
            census.count(end);
        } catch (RuntimeException e) {
            // Whoever hosts the pass (a writer whose put is done, or the executor, which would
            // drop it unseen) is not the one to fail: the pass stops, the next one starts over.
            // (A pass that close() cut short is no failure.)
            if (!closed) {
                maintenanceFailures.failed("the pass stopped; the next one starts over", e);
            }
        } finally {
            removed = evictor.takeRemovals(); // those the pass made before any failure too
            endMaintenancePass();
        }
        deliver(removed);
        return true;
    }

    /** Maintenance passes that threw (see {@link #underMaintenanceLock}). */
    private final FailureLog maintenanceFailures = new FailureLog("a maintenance pass failed");

    /** How many maintenance passes hosted by writers, readers or the executor threw; zero unless there is a bug. */
    long maintenanceFailures() {
        return maintenanceFailures.count();
    }

    /** Run at the start of every routine pass and drain when set: only tests set it, to make passes fail. */
    volatile Runnable passFault;

    private void injectedFault() {
        Runnable fault = passFault;
        if (fault != null) {
            fault.run();
        }
    }

    /**
     * The time for maintenance (expiry of pages, a victim's deadline): the ticker's reading, or if
     * the user's ticker throws, its last good one, so that a failing ticker delays expiry but
     * never stops a pass midway. Under the maintenance lock.
     */
    long maintenanceNow() {
        try {
            return lastMaintenanceNow = ticker.read();
        } catch (RuntimeException e) {
            tickerFailures.failed("maintenance went on with its last reading, " + lastMaintenanceNow, e);
            return lastMaintenanceNow;
        }
    }

    private long lastMaintenanceNow; // under the maintenance lock

    /** Readings of the ticker that threw during maintenance. */
    private final FailureLog tickerFailures = new FailureLog("the ticker threw during maintenance");

    long tickerFailures() {
        return tickerFailures.count();
    }
    /**
     * Counts a put that appends a record (of a key not known to be present) and records it for
     * the ghost lists. Unlike a read, a write is not given up at the first full stripe: a writer
     * whose stripe is full drains it if the maintenance lock is free; it never waits for the lock
     * (parking allocated a queue node per contended write, and put a writer behind a whole
     * eviction batch). Under sustained contention an entry can still be lost, as a read's can.
     */
    private void countAppend(KeyScratch ks, long hash) {
        recordWrite(ks, hash, false, false, writes.count(ks.ordinal), false, true);
    }

    /**
     * {@link #countAppend} of a write already counted as a put, whose count was {@code counted}.
     * A write that {@code appends} a record to the log is not counted in the sketch here: the
     * evictor counts it when the window's cursor passes the record (with the candidate's own
     * estimate, on the line that estimate reads: one thread's inserts ~3% faster at 10K and 100K
     * entries, docs/speed-work.md, thirty-second session). Its buffer entry is then only for the
     * ghost lists, made for an absent key they track (one in 2^k, see GhostLists), never for a
     * present one (docs/speed-work.md, thirty-fourth session). A write that was to append
     * and then failed (its condition, under the lock) is not counted in the sketch at all.
     */
    private void recordWrite(
            KeyScratch ks,
            long hash,
            boolean saturated,
            boolean present,
            long counted,
            boolean sketchLoaded,
            boolean appends) {
        if (sampledOut(saturated, counted) || (appends && (present || !policy.ghostsTrack(hash)))) {
            // Counted as a put, not recorded. An appended record is counted in the sketch when
            // the evictor passes it, so an absent key's entry is only for the ghost lists, which
            // track a sample of keys: none for the others.
            return;
        }
        if (!sketchLoaded) {
            ks.sketchWord = policy.touchAhead(hash); // rewriteInPlace loads it under its lock
        }
        if (writes.isFull(ks.threadIndex) && !ks.insideReader()) {
            drainIfFree(); // a write's count and ghost look are what admission is judged by: keep them
        }
        writes.record(
                ks.threadIndex,
                hash,
                present ? WRITE_OF_PRESENT_KEY : appends ? APPENDED_ABSENT_KEY : AccessBuffer.NO_REF);
    }

    /**
     * The write buffer's reference for a write that found its key present: the drain skips the
     * ghost lists for it (a ghost look per overwrite was 3-4% of a one-thread overwrite). The
     * buffer is lossy, so a pair may carry another write's mark: a ghost hit missed or looked for
     * in vain, never anything but the climber's statistics.
     */
    private static final long WRITE_OF_PRESENT_KEY = -2L;

    /**
     * The write buffer's reference for a write of an absent key that appended a record: the drain
     * looks for its ghost, and does not count it in the sketch (the evictor does, see {@link
     * #recordWrite}). A pair carrying another write's mark (the buffer is lossy) costs that write
     * its count or counts it twice: one count, as a lost access costs.
     */
    private static final long APPENDED_ABSENT_KEY = -3L;

    /**
     * Counts a hit and records it in the lossy access buffer with {@code ref}, the record's
     * location and its page's generation ({@link #accessRef}) or {@link AccessBuffer#NO_REF}: an
     * atomic add on the reader's own stripe, and three plain stores. Maintenance later counts the
     * key in the frequency sketch and, given a reference, marks the record read (its ACCESS bits)
     * if it is still there. In a large sketch the reader first loads the line that count will
     * change ({@link WindowTinyLfu#touchAhead}), so that the miss is its own, overlapping its
     * other misses, and not the drain's, one after another.
     *
     * <p>Every {@link #DRAIN_EVERY} accesses of its stripe, the reader drains the buffers itself if
     * the maintenance lock is free, and never waits for it. It does not hand the drain to the
     * executor: waking the executor's thread is a system call that cost more than the drain
     * (measured on a 2-core virtual machine: ~10 µs per wake-up, ~5 µs to drain 256 accesses).
     */
    private void recordRead(KeyScratch ks, long hash, long ref, boolean saturated) {
        long counted = reads.count(ks.ordinal);
        census.read(ks.threadIndex, counted); // readers take cores too: see census
        if (sampledOut(saturated, counted)) {
            return; // counted as a hit, not recorded
        }
        ks.sketchWord = policy.touchAhead(hash);
        long tail = reads.record(ks.threadIndex, hash, ref);
        if ((tail & (DRAIN_EVERY - 1)) == 0 && !ks.insideReader()) {
            drainIfFree();
        }
    }

    /**
     * Of the hits on a record whose ACCESS bits are saturated (read or overwritten at least three
     * times since the evictor last looked at it), and of the overwrites of such a record, one in
     * this many is recorded for the policy; the others are only counted (as hits, or puts).
     *
     * <p>Such a record is already known to be hot: the evictor gives it a second chance before
     * any duel, and the sketch's counters stop at 15 and halve once per sample period, so a key
     * accessed more than 8 × 15 times in a period saturates them either way. What is saved is
     * most of the bookkeeping on hot keys: recording, and the drain's sketch increment, a fifth
     * of a GET and a tenth of an overwrite at 10K entries (docs/speed-work.md, sixteenth
     * session).
     *
     * <p>A power of two: the stripe's exact count of hits (or puts) picks the sample. {@code
     * -Dlarder.saturatedSample=N} (a power of two, 1 to 1,024; 1 records every access) is an
     * experiment knob for the simulator and the benchmarks; any other value leaves the default.
     */
    static final int SATURATED_HIT_SAMPLE = saturatedHitSample(System.getProperty("larder.saturatedSample"));

    /** Whether an access just counted as the stripe's {@code counted}-th goes unrecorded. */
    private static boolean sampledOut(boolean saturated, long counted) {
        return saturated && (counted & (SATURATED_HIT_SAMPLE - 1)) != 0;
    }

    static int saturatedHitSample(String property) {
        try {
            int n = property == null ? 8 : Integer.parseInt(property.trim());
            return n >= 1 && n <= 1024 && Integer.bitCount(n) == 1 ? n : 8;
        } catch (NumberFormatException e) {
            return 8;
        }
    }

    /** Bits of a page's generation kept in an access reference, above its 40-bit location. */
    private static final int REF_GENERATION_BITS = 64 - 40;

    private static final int REF_GENERATION_MASK = (1 << REF_GENERATION_BITS) - 1;

    private static long accessRef(long location, int generation) {
        return location | ((long) (generation & REF_GENERATION_MASK) << 40);
    }

    /**
     * Drained from the read buffer, under the maintenance lock: counts the key in the frequency
     * sketch and marks its record read, if the page is still in the generation the reader saw and
     * the record there is this key's. Pages are reused only under that lock, and records never
     * move within a page (a rewrite in place keeps the key), so a matching generation means the
     * location still starts the record that was read; the key check guards against the buffer's
     * mismatched or stale pairs, so no byte that is not a record's layout is ever changed.
     */
    private void applyAccess(long hash, long ref) {
        policy.record(hash);
        if (ref == AccessBuffer.NO_REF) {
            return;
        }
        long location = ref & IndexWord.LOCATION_MASK;
        int page = store.pageOf(location);
        if (page >= store.maxPages() || (store.generation(page) & REF_GENERATION_MASK) != (int) (ref >>> 40)) {
            return;
        }
        MemorySegment segment = store.pageById(page);
        long offset = store.offset(location);
        int layout = RecordLayout.layout(segment, offset);
        if (layout == 0 || RecordLayout.accessSaturated(layout)) {
            return; // not written, or already marked as often as it can be (most hits on hot keys)
        }
        // The buffer may pair a hash with another access's reference: mark the record only if it
        // is this hash's key (which also proves the location starts a record).
        RecordLayout.Header h = accessHeader;
        if (!h.tryParse(segment, offset, sizing.pageSize(), store.shapes())) {
            return;
        }
        if (KeyHash.hash(seed, segment, h.keyOffset, h.keyLength) == hash) {
            RecordLayout.recordAccess(segment, offset);
        }
    }

    /** The drain's header, reused (the drain runs under the maintenance lock, one at a time). */
    private final RecordLayout.Header accessHeader = new RecordLayout.Header();
    /** If the maintenance lock is free: drains the access buffers into the policy. Returns whether it got the lock. */
    private boolean drainIfFree() {
        if (!maintenanceLock.tryLock()) {
            return false;
        }
        try {
            if (!closed) {
                injectedFault();
                drainAccesses(true);
            }
        } catch (RuntimeException e) {
            if (!closed) { // not the reader's failure, nor one at all if close() cut it short
                maintenanceFailures.failed("the drain stopped; the next one starts over", e);
            }
        } finally {
            maintenanceLock.unlock();
        }
        return true;
    }

    /** Under the maintenance lock: counts the buffered accesses and lets the policy adapt. */
    private void drainAccesses() {
        drainAccesses(false);
    }

    /**
     * {@link #drainAccesses()}; a reader's or writer's {@code small} drain lets the policy adapt
     * only once {@link #ADAPT_EVERY} accesses have been drained since it last did.
     */
    private void drainAccesses(boolean small) {
        if (!policy.counting() && full()) {
            policy.startCounting();
        }
        long drained = evictor.drained(reads.drainTo(countRead) + writes.drainTo(countWrite));
        if (small && drained < ADAPT_EVERY) {
            return;
        }
        evictor.adapt(reads.counted(), stats.misses.sum());
        // Never past the entry bound: the count exceeds it by the eviction's slack, and a sketch
        // grown for that would be twice the size (8 bytes per entry) and age half as often.
        policy.ensureCapacity(Math.min(entries.get(), firstEntryBound));
    }

    /**
     * Whether the cache is full: it holds its entry bound, or has evicted for memory. Admission
     * starts then, and so does counting (see {@code WindowTinyLfu#counting}).
     */
    private boolean full() {
        return entries.get() >= maximumEntries || stats.evictions() > 0;
    }

    @Override
    public void cleanUp() {
        checkOpen();
        List<Evictor.Removal> removed;
        maintenanceLock.lock();
        try {
            checkOpen();
            cleanUps++; // first: a cleanUp that fails halfway has still run since a task's look
            drainAccesses();
            evictor.cleanUp();
            removed = evictor.takeRemovals();
        } finally {
            endMaintenancePass();
        }
        deliver(removed);
    }

    /**
     * How many times {@link #cleanUp} has run, counted under the maintenance lock: the executor's
     * lingering task evicts ahead of the bound only on a look at the count taken since the last
     * one (see {@link #maintain}).
     */
    private volatile int cleanUps;

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

    /** Reads recorded and not yet drained into the policy: a moment's estimate, for tests. */
    long pendingReads() {
        return reads.pending();
    }

    /** Reads recorded for the policy so far, drained or not (for tests). */
    long recordedReads() {
        return reads.recorded();
    }

    /** Writes recorded for the policy so far, drained or not (for tests). */
    long recordedWrites() {
        return writes.recorded();
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
        return ifValueEquals(key, expected, location -> removeInternal(key, location, null) != FAILED);
    }

    @Override
    public V getAndRemove(K key) {
        Object[] old = new Object[1];
        removeInternal(key, ANY, old);
        return castValue(old[0]);
    }

    /** The location of the key's live record if its value's bytes equal {@code expected}, else -1. */
    private long locateIfValueEquals(K key, byte[] expected) {
        KeyScratch ks = KeyScratch.encode(keyCodec, key, maxKeyLength);
        int token = epochs.enter(ks.threadIndex);
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
        KeyScratch ks = KeyScratch.encode(keyCodec, key, maxKeyLength);
        try {
            long hash = ks.hash(seed);
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
        int token = epochs.enter(ks.threadIndex);
        try {
            RecordLayout.Header h;
            shard.lock();
            try {
                checkOpen();
                int slot = shard.slotOf(hash, store, ks.bytes, ks.length, ks.header);
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
                if (lender != null) {
                    lender.entryRemoved(this);
                }
                queues.left(store.recordLeft(current));
                removed = current;
            } finally {
                shard.unlock();
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
        V present = getIfPresent(key, true); // a hit, as for Caffeine
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
        IndexShard shard = shardOfKey(key);
        shard.beginUpdate(); // installs by location: see rewriteInPlace
        try {
            return updateLoop(key, fn, whenAbsent, whenPresent);
        } finally {
            shard.endUpdate();
        }
    }

    private V updateLoop(K key, BiFunction<K, V, ? extends V> fn, boolean whenAbsent, boolean whenPresent) {
        Object[] current = new Object[1];
        for (; ; ) {
            long location;
            KeyScratch ks = KeyScratch.encode(keyCodec, key, maxKeyLength);
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

    /** The present value, recorded as an access (and so counted as a hit) if {@code access}. */
    private V getIfPresent(K key, boolean access) {
        KeyScratch ks = KeyScratch.encode(keyCodec, key, maxKeyLength);
        try {
            return lookup(ks, access);
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
            V present = getIfPresent(key, false); // loaded by another thread meanwhile: no new hit
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
            V old = getIfPresent(key, false);
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
                shard.lock();
                try {
                    checkOpen();
                    long[] locations = shard.locations(new long[0]);
                    int n = shard.count();
                    for (int i = 0; i < n; i++) {
                        long location = locations[i];
                        queues.left(store.recordLeft(location));
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
                    if (lender != null) {
                        lender.entryRemoved(this);
                    }
                } finally {
                    shard.unlock();
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
            shard.lock();
            try {
                checkOpen();
                n = shard.count();
                locations = shard.locations(new long[n]);
            } finally {
                shard.unlock();
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
            mapView = new CacheMapView<>(this, keyCodec, valueCodec);
        }
        return mapView;
    }

    /** Every put counted: those counted under a shard's lock and those counted on a stripe. */
    private long putsCounted() {
        long sum = writes.counted();
        for (IndexShard shard : shards) {
            sum += shard.puts();
        }
        return sum;
    }

    @Override
    public CacheStats stats() {
        checkOpen();
        return new CacheStats(
                reads.counted(),
                stats.misses.sum(),
                putsCounted(),
                stats.removals.sum(),
                stats.evictions(),
                stats.expirations.sum(),
                stats.rejectedPuts.sum(),
                maintenanceFailures.count() + tickerFailures.count() + unreadableRemovals.count(),
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
                shard.lock();
                try {
                    shard.free();
                } finally {
                    shard.unlock();
                }
            }
            for (NativeMemory.Block table : takeRetiredTables()) {
                table.free();
            }
            if (firstTables != null) {
                firstTables.free(); // after the shards' tables, slices of it
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
        try {
            if (wantValue || listener != null) {
                Object value = decodeValue(location, h);
                if (wantValue) {
                    previous[0] = value;
                }
                if (listener != null) {
                    removal = new Evictor.Removal(decodeKey(location, h), value, cause);
                }
            }
        } catch (RuntimeException unreadable) {
            if (wantValue) {
                throw unreadable; // the caller asked for the value: its codec's failure is theirs
            }
            // Only the listener wanted it: the removal stands, the listener is not told (it would
            // get no value), and whoever's put or maintenance pass removed the entry is not
            // handed the codec's exception.
            codecFailed(cause, unreadable);
        } finally {
            if (h.large()) {
                large.retire(store.page(location).get(EXTENT_ID, h.valueOffset));
            }
        }
        return removal;
    }

    /** Removals the listener was not told of because a codec could not read the entry. */
    private final FailureLog unreadableRemovals = new FailureLog("a codec could not read an entry being removed");

    private void codecFailed(RemovalCause cause, RuntimeException e) {
        unreadableRemovals.failed("removed (" + cause + ") all the same; the removal listener was not told", e);
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
        // Indexed, not for-each: every maintenance pass delivers a list, nearly always empty, and
        // the iterator was the insert path's one allocation where the JIT did not remove it.
        for (int i = 0; i < removed.size(); i++) {
            deliver(removed.get(i));
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
