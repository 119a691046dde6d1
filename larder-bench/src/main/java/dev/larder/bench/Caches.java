package dev.larder.bench;

/** Builds the adapter for a cache name, sized to hold {@code entries} entries of the given size. */
public final class Caches {
    private Caches() {}

    /**
     * A cache that holds {@code entries} entries of {@link Keys#KEY_BYTES}-byte keys and
     * {@code valueBytes}-byte values: an entry bound for the caches that take one, a byte budget
     * computed for that many entries for the ones that take bytes.
     *
     * @throws PeerUnavailableException if the library cannot run here (names the cause)
     */
    public static BenchCache create(String name, long entries, int valueBytes) {
        Peer peer = Peer.of(name);
        if (entries <= 0 || entries > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("entries out of range: " + entries);
        }
        try {
            return switch (peer) {
                case LARDER -> new LarderAdapter(entries, valueBytes);
                case CAFFEINE -> new CaffeineAdapter(entries);
                case OHC -> new OhcAdapter(entries, valueBytes);
                case CHRONICLE -> new ChronicleAdapter(entries, valueBytes);
                case EHCACHE -> new EhcacheAdapter(entries, valueBytes);
                case MAPDB -> new MapDbAdapter(entries);
                case CACHE2K -> new Cache2kAdapter(entries);
            };
        } catch (Throwable t) {
            throw new PeerUnavailableException(peer, t);
        }
    }

    /** Builds the cache, round-trips one entry and closes it; throws if that fails. */
    public static void check(String name) {
        Peer peer = Peer.of(name);
        try (BenchCache cache = create(name, 1000, 256)) {
            byte[] value = Keys.value(1, 256);
            cache.put(Keys.key(1), value);
            byte[] back = cache.get(Keys.key(1));
            if (!java.util.Arrays.equals(value, back)) {
                throw new IllegalStateException("put/get round trip returned a different value");
            }
        } catch (PeerUnavailableException e) {
            throw e;
        } catch (Throwable t) {
            throw new PeerUnavailableException(peer, t);
        }
    }
}
