package dev.larder.bench;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;

/** Caffeine bounded by entry count, the on-heap reference. */
final class CaffeineAdapter implements BenchCache {
    private final Cache<String, byte[]> cache;

    CaffeineAdapter(long entries) {
        this.cache = Caffeine.newBuilder()
                .maximumSize(entries)
                .initialCapacity((int) Math.min(entries, 1 << 30))
                .build();
    }

    @Override
    public byte[] get(String key) {
        return cache.getIfPresent(key);
    }

    @Override
    public void put(String key, byte[] value) {
        cache.put(key, value);
    }

    @Override
    public String name() {
        return Peer.CAFFEINE.id();
    }

    @Override
    public void close() {
        cache.invalidateAll();
        cache.cleanUp();
    }
}
