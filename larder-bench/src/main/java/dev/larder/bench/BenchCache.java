package dev.larder.bench;

/**
 * The one operation set every benchmarked cache offers: {@code String} keys, {@code byte[]}
 * values. Adapters do what a careful user of each library would do and nothing more.
 */
public interface BenchCache extends AutoCloseable {
    /** The value, or {@code null} on a miss. */
    byte[] get(String key);

    /** Stores or replaces the value. */
    void put(String key, byte[] value);

    /** The cache's name as used by the {@code cache} benchmark parameter. */
    String name();

    /** Whether the cache evicts on its own when full; a plain map does not. */
    default boolean evicts() {
        return true;
    }

    /** Native or heap bytes the cache reports using itself, or -1 if it reports none. */
    default long reportedBytes() {
        return -1;
    }

    @Override
    void close();
}
