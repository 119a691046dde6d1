package dev.larder;

import java.time.Duration;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentMap;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * An off-heap cache: keys, values and the index live in native memory, encoded by the cache's
 * {@link Codec codecs}. Built by {@link Larder#newBuilder}.
 *
 * <p>All methods are thread-safe. Reads never block each other and never see a torn value.
 * Per-key updates ({@code compute}, {@code merge}, {@code putIfAbsent}, the {@code replace}
 * family) are atomic. Values are compared by their encoded bytes. Null keys and values are
 * rejected with {@link NullPointerException}; any method called after {@link #close()} throws
 * {@link IllegalStateException}.
 *
 * <p>An entry that does not fit in the cache at all is rejected with {@link
 * EntryTooLargeException}. Otherwise a full cache evicts other entries to make room. Keys are 1
 * to 65,535 bytes once encoded, and at most a quarter of a page (pages are the budget / 2048,
 * between 4 KiB and 8 MiB: so 1 KiB for budgets under 16 MiB, the full 64 KiB from 512 MiB); a
 * longer or empty key is rejected with {@link IllegalArgumentException} naming its size.
 *
 * @param <K> the key type
 * @param <V> the value type
 */
public interface LarderCache<K, V> extends AutoCloseable {

    /** Returns the value for {@code key}, or null if absent or expired. */
    V getIfPresent(K key);

    /**
     * Returns the value for {@code key}, loading it with {@code loader} if absent. At most one
     * load per key runs at a time; other callers wait for its result. If the loader throws, the
     * exception reaches the caller (unchecked ones as they are, checked ones wrapped in {@link
     * java.util.concurrent.CompletionException}) and nothing is cached; if it returns null,
     * nothing is cached and null is returned.
     */
    V get(K key, Function<? super K, ? extends V> loader);

    /**
     * Reads the value for {@code key} without copying it to the heap: {@code reader} gets a
     * read-only view of the value's bytes, valid while it runs. Returns the reader's result, or
     * null if the key is absent (the reader is then not called).
     */
    <R> R read(K key, ValueReader<R> reader);

    /** Returns the live values for those of {@code keys} that are present. */
    Map<K, V> getAll(Iterable<? extends K> keys);

    /** Returns whether a live entry exists for {@code key}. Not counted as a hit or a miss. */
    boolean containsKey(K key);

    /** Stores {@code value} for {@code key}, replacing any value, with the cache's expiry. */
    void put(K key, V value);

    /**
     * Stores {@code value} for {@code key} with its own time to live, which overrides the
     * cache's expiry for this entry.
     *
     * @throws IllegalArgumentException if {@code timeToLive} is zero or negative
     */
    void put(K key, V value, Duration timeToLive);

    /** Stores every entry of {@code entries}. */
    void putAll(Map<? extends K, ? extends V> entries);

    /** Stores {@code value} and returns the value it replaced, or null. */
    V getAndPut(K key, V value);

    /**
     * Stores {@code value} only if {@code key} has no live value. Returns true if it stored it.
     */
    boolean putIfAbsent(K key, V value);

    /** Replaces the value of {@code key} only if it has one. Returns true if it replaced it. */
    boolean replace(K key, V value);

    /**
     * Replaces the value of {@code key} only if its current value's bytes equal {@code
     * expected}'s. Returns true if it replaced it.
     */
    boolean replace(K key, V expected, V value);

    /** Removes {@code key}. Returns true if a live entry was removed. */
    boolean remove(K key);

    /** Removes {@code key} only if its value's bytes equal {@code expected}'s. */
    boolean remove(K key, V expected);

    /** Removes {@code key} and returns the value it had, or null. */
    V getAndRemove(K key);

    /**
     * Atomically computes a new value from the current one (null if absent). A null result
     * removes the entry. The function may be called more than once if another thread changes
     * the same key meanwhile; only the last call's result is stored. It must not update the
     * cache itself.
     */
    V compute(K key, BiFunction<? super K, ? super V, ? extends V> remapping);

    /** Like {@link #compute}, only when absent; a null result stores nothing. */
    V computeIfAbsent(K key, Function<? super K, ? extends V> mapping);

    /** Like {@link #compute}, only when present. */
    V computeIfPresent(K key, BiFunction<? super K, ? super V, ? extends V> remapping);

    /**
     * Stores {@code value} if absent, else the result of {@code remapping(old, value)}; a null
     * result removes the entry.
     */
    V merge(K key, V value, BiFunction<? super V, ? super V, ? extends V> remapping);

    /** Removes every entry (cause {@link RemovalCause#EXPLICIT}). */
    void clear();

    /** Live entries; exact when no operation is in flight. */
    long size();

    /**
     * Iterates over the keys, weakly consistently: never throws {@link
     * java.util.ConcurrentModificationException}, sees each entry present for the whole
     * iteration once, and may or may not see changes made during it.
     */
    Iterator<K> keys();

    /** Iterates over decoded entries, weakly consistently (see {@link #keys()}). */
    Iterator<Map.Entry<K, V>> entries();

    /**
     * A {@link ConcurrentMap} view backed by the cache: changes through either are visible in
     * the other. Its {@code remove}/{@code replace} compare values by their encoded bytes.
     */
    ConcurrentMap<K, V> asMap();

    /** A snapshot of the counters; costs no lock on the hot path. */
    CacheStats stats();

    /** Runs pending maintenance (eviction, expiry, reclamation) on the calling thread now. */
    void cleanUp();

    /** Native memory held now: records, large values, the index and metadata. */
    long memoryUsed();

    /** The native memory budget. */
    long memoryMax();

    /**
     * Releases all native memory. Idempotent. Calls made after it, or racing with it, throw
     * {@link IllegalStateException}; none can crash the JVM.
     */
    @Override
    void close();

    /** Returns whether {@link #close()} was called. */
    boolean isClosed();
}
