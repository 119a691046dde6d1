package dev.larder.bench;

import java.util.concurrent.atomic.AtomicInteger;
import org.ehcache.Cache;
import org.ehcache.CacheManager;
import org.ehcache.config.builders.CacheConfigurationBuilder;
import org.ehcache.config.builders.CacheManagerBuilder;
import org.ehcache.config.builders.ResourcePoolsBuilder;
import org.ehcache.config.units.MemoryUnit;

/** Ehcache 3 with a single off-heap tier (no heap tier), sized in bytes for the entries. */
final class EhcacheAdapter implements BenchCache {
    /** Ehcache's off-heap store cost per entry besides the serialized key and value. */
    static final int ENTRY_OVERHEAD = 64;

    /** Ehcache refuses an off-heap tier below 1 MiB; smaller caches hold more than asked. */
    static final long MIN_BYTES = 1 << 20;

    private static final AtomicInteger IDS = new AtomicInteger();

    private final CacheManager manager;
    private final Cache<String, byte[]> cache;

    EhcacheAdapter(long entries, int valueBytes) {
        // Serialized String keys carry a small header; values are stored as their bytes.
        long bytes = (long) (entries * (double) (Keys.KEY_BYTES + 8 + valueBytes + ENTRY_OVERHEAD) * 1.10);
        String alias = "bench-" + IDS.incrementAndGet();
        this.manager = CacheManagerBuilder.newCacheManagerBuilder().build(true);
        this.cache = manager.createCache(
                alias,
                CacheConfigurationBuilder.newCacheConfigurationBuilder(
                        String.class,
                        byte[].class,
                        ResourcePoolsBuilder.newResourcePoolsBuilder()
                                .offheap(Math.max(bytes, MIN_BYTES), MemoryUnit.B)));
    }

    @Override
    public byte[] get(String key) {
        return cache.get(key);
    }

    @Override
    public void put(String key, byte[] value) {
        cache.put(key, value);
    }

    @Override
    public String name() {
        return Peer.EHCACHE.id();
    }

    @Override
    public void close() {
        manager.close();
    }
}
