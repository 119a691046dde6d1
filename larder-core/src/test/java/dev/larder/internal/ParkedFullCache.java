package dev.larder.internal;

import dev.larder.Codecs;
import dev.larder.Larder;
import dev.larder.LarderCache;
import java.util.List;

/**
 * A cache of {@code Long} keys filled to its bound of 1,000 entries (one-byte values), whose
 * maintenance never runs on its own: its executor only parks the tasks in a list. Tests of what
 * the caller's own thread does (drains, recording) use it.
 */
final class ParkedFullCache {
    static final int ENTRIES = 1_000;

    private ParkedFullCache() {}

    /** Built, filled with keys 0 to 999, and cleaned up once (full: the sketch counts from here). */
    static LarderCache<Long, byte[]> open(List<Runnable> parked) {
        LarderCache<Long, byte[]> cache = Larder.newBuilder(Codecs.longs(), Codecs.bytes())
                .maximumBytes(16L << 20)
                .maximumEntries(ENTRIES)
                .executor(parked::add)
                .build();
        for (long k = 0; k < ENTRIES; k++) {
            cache.put(k, new byte[] {1});
        }
        cache.cleanUp();
        return cache;
    }
}
