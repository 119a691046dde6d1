package dev.larder.bench;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.caffinitas.ohc.CacheSerializer;
import org.caffinitas.ohc.Eviction;
import org.caffinitas.ohc.OHCache;
import org.caffinitas.ohc.OHCacheBuilder;

/**
 * OHC (linked implementation, LRU) with a byte capacity for the entries and a hash table presized
 * for them, as Larder gets {@code expectedEntries}.
 */
final class OhcAdapter implements BenchCache {
    /** OHC's per-entry header in its linked implementation, besides key and value bytes. */
    static final int ENTRY_OVERHEAD = 64;

    private final OHCache<String, byte[]> cache;

    OhcAdapter(long entries, int valueBytes) {
        int segments = Integer.highestOneBit(Math.max(1, Runtime.getRuntime().availableProcessors()) * 2);
        long perSegment = Math.max(64, (long) Math.ceil(entries / (double) segments / 0.75));
        int tableSize = (int) Math.min(1 << 30, Long.highestOneBit(perSegment - 1) << 1);
        // A little headroom: segments fill unevenly and each evicts on its own share.
        long capacity = (long) (entries * (double) (Keys.KEY_BYTES + valueBytes + ENTRY_OVERHEAD) * 1.10);
        this.cache = OHCacheBuilder.<String, byte[]>newBuilder()
                .keySerializer(StringSerializer.INSTANCE)
                .valueSerializer(BytesSerializer.INSTANCE)
                .capacity(capacity)
                .segmentCount(segments)
                .hashTableSize(tableSize)
                .eviction(Eviction.LRU)
                .build();
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
        return Peer.OHC.id();
    }

    @Override
    public long reportedBytes() {
        return cache.memUsed();
    }

    @Override
    public void close() {
        try {
            cache.close();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** UTF-8 without a temporary array for ASCII strings. */
    enum StringSerializer implements CacheSerializer<String> {
        INSTANCE;

        @Override
        public void serialize(String s, ByteBuffer buf) {
            if (isAscii(s)) {
                for (int i = 0, n = s.length(); i < n; i++) {
                    buf.put((byte) s.charAt(i));
                }
            } else {
                buf.put(s.getBytes(StandardCharsets.UTF_8));
            }
        }

        @Override
        public String deserialize(ByteBuffer buf) {
            byte[] bytes = new byte[buf.remaining()];
            buf.get(bytes);
            return new String(bytes, StandardCharsets.UTF_8);
        }

        @Override
        public int serializedSize(String s) {
            return isAscii(s) ? s.length() : s.getBytes(StandardCharsets.UTF_8).length;
        }

        private static boolean isAscii(String s) {
            for (int i = 0, n = s.length(); i < n; i++) {
                if (s.charAt(i) >= 0x80) {
                    return false;
                }
            }
            return true;
        }
    }

    /** The value's bytes as they are; OHC keeps the length. */
    enum BytesSerializer implements CacheSerializer<byte[]> {
        INSTANCE;

        @Override
        public void serialize(byte[] value, ByteBuffer buf) {
            buf.put(value);
        }

        @Override
        public byte[] deserialize(ByteBuffer buf) {
            byte[] value = new byte[buf.remaining()];
            buf.get(value);
            return value;
        }

        @Override
        public int serializedSize(byte[] value) {
            return value.length;
        }
    }
}
