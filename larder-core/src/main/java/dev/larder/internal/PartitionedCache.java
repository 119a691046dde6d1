package dev.larder.internal;

import dev.larder.CacheLoader;
import dev.larder.CacheStats;
import dev.larder.Codec;
import dev.larder.LoadingLarderCache;
import dev.larder.ValueReader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * A cache split by key hash into partitions, each a whole {@link NativeCache} over its share of
 * the keys, the entry bound and the memory, with its own evictor, policy and maintenance lock:
 * writers whose keys fall in different partitions evict at the same time. Eviction is one
 * thread at a time within a cache, and two threads inserting into one cache spend most of their
 * time waiting for each other's evictions (docs/speed-work.md, seventeenth and twentieth
 * sessions).
 *
 * <p>A call encodes and hashes the key once, here: the partitions share one hash seed. The
 * hottest calls ({@code getIfPresent}, {@code read}, {@code put}) pass the encoded key to the
 * partition as an argument; the others leave it on the thread for the partition's next encode
 * ({@link KeyScratch#handOff}). The partition is chosen from a remix of the hash, so that within
 * a partition the bits the index uses (shard, slot, tag) stay uniform. The entry bound's shares
 * move between partitions through an {@link EntryLender}.
 */
final class PartitionedCache<K, V> implements LoadingLarderCache<K, V> {
    private final NativeCache<K, V>[] parts;
    private final Codec<K> keyCodec;
    private final Codec<V> valueCodec;
    private final long seed;
    private final int maxKeyLength;
    private final boolean loading;
    private volatile boolean closed;
    private CacheMapView<K, V> mapView;

    private PartitionedCache(NativeCache<K, V>[] parts, CacheConfig<K, V> config, long seed, boolean loading) {
        this.parts = parts;
        this.keyCodec = config.keyCodec();
        this.valueCodec = config.valueCodec();
        this.seed = seed;
        this.maxKeyLength = parts[0].maxKeyLength();
        this.loading = loading;
    }

    /** A cache of {@code n} partitions (n ≥ 2) of {@code config}'s bounds. */
    static <K, V> PartitionedCache<K, V> create(CacheConfig<K, V> config, CacheLoader<? super K, V> loader, int n) {
        long seed = ThreadLocalRandom.current().nextLong();
        @SuppressWarnings("unchecked")
        NativeCache<K, V>[] parts = new NativeCache[n];
        try {
            for (int i = 0; i < n; i++) {
                parts[i] = NativeCache.create(config.forPartition(i, n), loader, seed);
            }
            if (config.maximumEntries() > 0) {
                EntryLender lender = new EntryLender(parts);
                for (NativeCache<K, V> part : parts) {
                    part.lendEntriesThrough(lender);
                }
            }
        } catch (RuntimeException | Error e) {
            for (NativeCache<K, V> part : parts) {
                if (part != null) {
                    part.close();
                }
            }
            throw e;
        }
        return new PartitionedCache<>(parts, config, seed, loader != null);
    }

    /** The partition of a key's hash: the top bits of a remix, mapped onto [0, n) by multiplying. */
    static int partitionOf(long hash, int n) {
        long h = (hash ^ (hash >>> 32)) * 0xD6E8_FEB8_6659_FD93L;
        h = (h ^ (h >>> 32)) * 0xD6E8_FEB8_6659_FD93L;
        return (int) (((h >>> 32) * n) >>> 32);
    }

    /**
     * The key encoded, for the partition's method that takes it (the hottest calls: one lookup of
     * the thread's scratch, as in a cache of one partition); that method releases it.
     */
    private KeyScratch encode(K key) {
        checkOpen();
        Objects.requireNonNull(key, "key");
        return KeyScratch.encode(keyCodec, key, maxKeyLength);
    }

    private NativeCache<K, V> partitionOf(KeyScratch ks) {
        return parts[partitionOf(ks.hash(seed), parts.length)];
    }

    /**
     * The partition of {@code key}, with the key encoded and hashed and left for that partition's
     * next call on this thread; the caller must {@link #done} after the call, however it ends.
     */
    private NativeCache<K, V> route(K key) {
        KeyScratch ks = encode(key);
        NativeCache<K, V> part = partitionOf(ks);
        ks.handOff(key, keyCodec);
        return part;
    }

    /** After a routed call: forgets the encoding if the partition did not take it. */
    private static void done() {
        KeyScratch.current().dropHandOff();
    }

    /** The partition that holds {@code key} (for tests and diagnostics). */
    NativeCache<K, V> partition(K key) {
        try {
            return route(key);
        } finally {
            done();
        }
    }

    int partitionCount() {
        return parts.length;
    }

    NativeCache<K, V> partitionAt(int i) {
        return parts[i];
    }

    // ---------------------------------------------------------------------------------------
    // Calls on one key: routed

    @Override
    public V getIfPresent(K key) {
        KeyScratch ks = encode(key);
        return partitionOf(ks).getIfPresent(ks);
    }

    @Override
    public V get(K key, Function<? super K, ? extends V> loader) {
        try {
            return route(key).get(key, loader);
        } finally {
            done();
        }
    }

    @Override
    public V get(K key) {
        try {
            return route(key).get(key);
        } finally {
            done();
        }
    }

    @Override
    public <R> R read(K key, ValueReader<R> reader) {
        Objects.requireNonNull(reader, "reader");
        KeyScratch ks = encode(key);
        return partitionOf(ks).read(ks, reader);
    }

    @Override
    public boolean containsKey(K key) {
        try {
            return route(key).containsKey(key);
        } finally {
            done();
        }
    }

    @Override
    public void put(K key, V value) {
        KeyScratch ks = encode(key);
        partitionOf(ks).put(ks, value);
    }

    @Override
    public void put(K key, V value, Duration timeToLive) {
        try {
            route(key).put(key, value, timeToLive);
        } finally {
            done();
        }
    }

    @Override
    public V getAndPut(K key, V value) {
        try {
            return route(key).getAndPut(key, value);
        } finally {
            done();
        }
    }

    @Override
    public boolean putIfAbsent(K key, V value) {
        try {
            return route(key).putIfAbsent(key, value);
        } finally {
            done();
        }
    }

    @Override
    public boolean replace(K key, V value) {
        try {
            return route(key).replace(key, value);
        } finally {
            done();
        }
    }

    @Override
    public boolean replace(K key, V expected, V value) {
        try {
            return route(key).replace(key, expected, value);
        } finally {
            done();
        }
    }

    @Override
    public boolean remove(K key) {
        try {
            return route(key).remove(key);
        } finally {
            done();
        }
    }

    @Override
    public boolean remove(K key, V expected) {
        try {
            return route(key).remove(key, expected);
        } finally {
            done();
        }
    }

    @Override
    public V getAndRemove(K key) {
        try {
            return route(key).getAndRemove(key);
        } finally {
            done();
        }
    }

    @Override
    public V compute(K key, BiFunction<? super K, ? super V, ? extends V> remapping) {
        try {
            return route(key).compute(key, remapping);
        } finally {
            done();
        }
    }

    @Override
    public V computeIfAbsent(K key, Function<? super K, ? extends V> mapping) {
        try {
            return route(key).computeIfAbsent(key, mapping);
        } finally {
            done();
        }
    }

    @Override
    public V computeIfPresent(K key, BiFunction<? super K, ? super V, ? extends V> remapping) {
        try {
            return route(key).computeIfPresent(key, remapping);
        } finally {
            done();
        }
    }

    @Override
    public V merge(K key, V value, BiFunction<? super V, ? super V, ? extends V> remapping) {
        try {
            return route(key).merge(key, value, remapping);
        } finally {
            done();
        }
    }

    @Override
    public CompletableFuture<V> refresh(K key) {
        try {
            return route(key).refresh(key);
        } finally {
            done();
        }
    }

    // ---------------------------------------------------------------------------------------
    // Calls on many keys, and on the whole cache

    @Override
    public Map<K, V> getAll(Iterable<? extends K> keys) {
        checkOpen();
        Objects.requireNonNull(keys, "keys");
        Map<K, V> result = new LinkedHashMap<>();
        for (K key : keys) {
            V value = loading ? get(key) : getIfPresent(key);
            if (value != null) {
                result.put(key, value);
            }
        }
        return result;
    }

    @Override
    public void putAll(Map<? extends K, ? extends V> map) {
        Objects.requireNonNull(map, "map");
        for (Map.Entry<? extends K, ? extends V> e : map.entrySet()) {
            put(e.getKey(), e.getValue());
        }
    }

    @Override
    public void clear() {
        checkOpen();
        for (NativeCache<K, V> part : parts) {
            part.clear();
        }
    }

    @Override
    public long size() {
        checkOpen();
        long n = 0;
        for (NativeCache<K, V> part : parts) {
            n += part.size();
        }
        return n;
    }

    @Override
    public Iterator<K> keys() {
        checkOpen();
        return new Concatenation<>(this, NativeCache::keys);
    }

    @Override
    public Iterator<Map.Entry<K, V>> entries() {
        checkOpen();
        return new Concatenation<>(this, NativeCache::entries);
    }

    @Override
    public synchronized ConcurrentMap<K, V> asMap() {
        checkOpen();
        if (mapView == null) {
            mapView = new CacheMapView<>(this, keyCodec, valueCodec);
        }
        return mapView;
    }

    @Override
    public CacheStats stats() {
        checkOpen();
        List<CacheStats> all = new ArrayList<>(parts.length);
        for (NativeCache<K, V> part : parts) {
            all.add(part.stats());
        }
        return sum(all);
    }

    /** Counts added up, partition by partition. */
    static CacheStats sum(List<CacheStats> all) {
        long[] t = new long[14];
        for (CacheStats s : all) {
            t[0] += s.hitCount();
            t[1] += s.missCount();
            t[2] += s.putCount();
            t[3] += s.removalCount();
            t[4] += s.evictionCount();
            t[5] += s.expirationCount();
            t[6] += s.rejectedPutCount();
            t[7] += s.survivedFailureCount();
            t[8] += s.loadSuccessCount();
            t[9] += s.loadFailureCount();
            t[10] += s.totalLoadTimeNanos();
            t[11] += s.size();
            t[12] += s.memoryUsedBytes();
            t[13] += s.memoryMaxBytes();
        }
        return new CacheStats(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], t[9], t[10], t[11], t[12], t[13]);
    }

    @Override
    public void cleanUp() {
        checkOpen();
        for (NativeCache<K, V> part : parts) {
            part.cleanUp();
        }
    }

    @Override
    public long memoryUsed() {
        checkOpen();
        long n = 0;
        for (NativeCache<K, V> part : parts) {
            n += part.memoryUsed();
        }
        return n;
    }

    @Override
    public long memoryMax() {
        checkOpen();
        long n = 0;
        for (NativeCache<K, V> part : parts) {
            n += part.memoryMax();
        }
        return n;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        RuntimeException first = null;
        for (NativeCache<K, V> part : parts) {
            try {
                part.close();
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("cache is closed");
        }
    }

    @Override
    public String toString() {
        if (closed) {
            return "LarderCache[" + parts.length + " partitions, closed]";
        }
        return "LarderCache[size=" + size() + ", memoryUsed=" + memoryUsed() + ", memoryMax=" + memoryMax() + ", "
                + parts.length + " partitions]";
    }

    /** The partitions' weakly consistent iterators, one after another. */
    private static final class Concatenation<K, V, T> implements Iterator<T> {
        private final PartitionedCache<K, V> cache;
        private final Function<NativeCache<K, V>, Iterator<T>> iteratorOf;
        private int next;
        private Iterator<T> current;
        private Iterator<T> last;

        Concatenation(PartitionedCache<K, V> cache, Function<NativeCache<K, V>, Iterator<T>> iteratorOf) {
            this.cache = cache;
            this.iteratorOf = iteratorOf;
        }

        @Override
        public boolean hasNext() {
            while (current == null || !current.hasNext()) {
                if (next >= cache.parts.length) {
                    return false;
                }
                cache.checkOpen();
                current = iteratorOf.apply(cache.parts[next++]);
            }
            return true;
        }

        @Override
        public T next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            last = current;
            return current.next();
        }

        @Override
        public void remove() {
            if (last == null) {
                throw new IllegalStateException("next() was not called, or remove() was already called");
            }
            last.remove();
            last = null;
        }
    }
}
