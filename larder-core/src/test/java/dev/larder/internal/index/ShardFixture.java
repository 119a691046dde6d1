package dev.larder.internal.index;

import dev.larder.internal.hash.KeyHash;
import dev.larder.internal.memory.MemoryBudget;
import dev.larder.internal.memory.PageStore;
import dev.larder.internal.memory.RecordLayout;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A real page store with records written by {@link RecordLayout}, so an {@link IndexShard} can
 * compare keys and rehash them from their records, and a universe of keys that includes groups
 * sharing a tag (so a tag match must still compare the key bytes).
 */
final class ShardFixture implements AutoCloseable {
    static final int PAGE_SIZE = 64 * 1024;

    final long seed;
    final MemoryBudget budget;
    final PageStore store;
    final byte[][] keys;
    final MemorySegment[] keySegments;
    final long[] hashes;

    /**
     * @param plainKeys keys with no particular relation
     * @param tagGroups groups of keys that share their 16-bit tag
     */
    ShardFixture(long seed, int plainKeys, int tagGroups, long recordBytes) {
        this(seed, universe(seed, plainKeys, tagGroups), recordBytes);
    }

    /** A fixture for the given keys; their hashes are KeyHash's with {@code seed}. */
    ShardFixture(long seed, byte[][] keys, long recordBytes) {
        this.seed = seed;
        this.budget = new MemoryBudget(recordBytes + (64L << 20));
        this.store = new PageStore(PAGE_SIZE, recordBytes, 1, budget);
        this.keys = keys;
        keySegments = new MemorySegment[keys.length];
        hashes = new long[keys.length];
        for (int i = 0; i < keys.length; i++) {
            keySegments[i] = MemorySegment.ofArray(keys[i]);
            hashes[i] = hash(keys[i]);
        }
    }

    private static byte[][] universe(long seed, int plainKeys, int tagGroups) {
        List<byte[]> chosen = new ArrayList<>();
        int candidate = 0;
        for (; chosen.size() < plainKeys; candidate++) {
            chosen.add(keyBytes(candidate));
        }
        if (tagGroups > 0) {
            Map<Long, List<byte[]>> byTag = new HashMap<>();
            int groups = 0;
            for (; groups < tagGroups; candidate++) {
                byte[] k = keyBytes(candidate);
                long h = KeyHash.hash(seed, MemorySegment.ofArray(k), 0, k.length);
                List<byte[]> group = byTag.computeIfAbsent(IndexWord.tagOf(h), t -> new ArrayList<>());
                group.add(k);
                if (group.size() == 2) {
                    chosen.addAll(group);
                    groups++;
                } else if (group.size() > 2) {
                    chosen.add(k);
                }
            }
        }
        return chosen.toArray(byte[][]::new);
    }

    /** Distinct keys of varied lengths: 1 to 158 bytes, so some lengths take a 2-byte varint. */
    static byte[] keyBytes(int n) {
        StringBuilder sb = new StringBuilder(Integer.toString(n, 36));
        int pad = (n % 7 == 3) ? 150 : n % 5;
        sb.append("~".repeat(pad));
        return sb.toString().getBytes(StandardCharsets.US_ASCII);
    }

    long hash(byte[] key) {
        return KeyHash.hash(seed, MemorySegment.ofArray(key), 0, key.length);
    }

    int size() {
        return keys.length;
    }

    /** Bytes of the record {@link #write} writes at {@code location}. */
    int recordBytes(long location, int key, int valueLength, boolean expires) {
        int format = store.shapes().formatFor(keys[key].length, valueLength, false);
        return RecordLayout.recordSize(store.offset(location), format, keys[key].length, valueLength, expires, false);
    }

    /** Appends a decided record of key {@code key}; returns its location. */
    long write(int key, int valueLength, boolean expires) {
        byte[] k = keys[key];
        int format = store.shapes().formatFor(k.length, valueLength, false); // as the cache does
        long location = store.reserve(0, format, k.length, valueLength, expires, false);
        if (location == PageStore.NO_PAGE) {
            throw new IllegalStateException("test page store is full");
        }
        MemorySegment page = store.page(location);
        long offset = store.offset(location);
        long keyAt =
                RecordLayout.writeHeader(page, offset, format, k.length, valueLength, false, expires, false, 12345L);
        MemorySegment.copy(keySegments[key], 0, page, keyAt, k.length);
        page.asSlice(keyAt + k.length, valueLength).fill((byte) key);
        RecordLayout.markDecided(page, offset);
        return location;
    }

    @Override
    public void close() {
        store.freeAll();
    }
}
