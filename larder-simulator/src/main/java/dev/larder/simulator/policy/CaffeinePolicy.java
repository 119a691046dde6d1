package dev.larder.simulator.policy;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;

/**
 * Caffeine (W-TinyLFU) bounded by entry count. Maintenance runs on the calling thread ({@code
 * executor(Runnable::run)}), so a run is deterministic and the bound is honoured as requests
 * arrive.
 */
public final class CaffeinePolicy implements Policy {
    private final Cache<Long, Boolean> cache;

    public CaffeinePolicy(int capacity) {
        this.cache = Caffeine.newBuilder()
                .maximumSize(capacity)
                .executor(Runnable::run)
                .build();
    }

    @Override
    public boolean access(long key) {
        if (cache.getIfPresent(key) != null) {
            return true;
        }
        cache.put(key, Boolean.TRUE);
        return false;
    }

    @Override
    public String name() {
        return "caffeine";
    }

    @Override
    public void close() {
        cache.invalidateAll();
        cache.cleanUp();
    }
}
