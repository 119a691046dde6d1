package dev.larder.bench;

import java.util.concurrent.atomic.AtomicInteger;
import org.cache2k.Cache;
import org.cache2k.Cache2kBuilder;

/**
 * cache2k bounded by entry count (on-heap). cache2k refuses array value types (arrays compare by
 * identity), so the cache is typed with {@code Object} values and the adapter casts.
 */
final class Cache2kAdapter implements BenchCache {
    private static final AtomicInteger IDS = new AtomicInteger();

    private final Cache<Object, Object> cache;

    Cache2kAdapter(long entries) {
        this.cache = Cache2kBuilder.forUnknownTypes()
                .name("bench-" + IDS.incrementAndGet())
                .entryCapacity(entries)
                .eternal(true)
                .build();
    }

    @Override
    public byte[] get(String key) {
        return (byte[]) cache.peek(key);
    }

    @Override
    public void put(String key, byte[] value) {
        cache.put(key, value);
    }

    @Override
    public String name() {
        return Peer.CACHE2K.id();
    }

    @Override
    public void close() {
        cache.close();
    }
}
