package dev.larder.simulator.policy;

import java.util.LinkedHashMap;
import java.util.Map;

/** Least recently used: the reference point every other policy is compared with. */
public final class LruPolicy implements Policy {
    private final Map<Long, Boolean> map;

    public LruPolicy(int capacity) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity must be positive, was " + capacity);
        }
        this.map = new LinkedHashMap<>(capacity * 4 / 3 + 1, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Long, Boolean> eldest) {
                return size() > capacity;
            }
        };
    }

    @Override
    public boolean access(long key) {
        if (map.get(key) != null) {
            return true;
        }
        map.put(key, Boolean.TRUE);
        return false;
    }

    @Override
    public String name() {
        return "lru";
    }
}
