package dev.larder.bench;

import net.openhft.chronicle.map.ChronicleMap;

/**
 * Chronicle Map, in memory (not persisted), sized for the entries. It is a map, not a cache: it
 * never evicts, so scenarios that insert past the capacity don't apply to it.
 */
final class ChronicleAdapter implements BenchCache {
    private final ChronicleMap<String, byte[]> map;

    ChronicleAdapter(long entries, int valueBytes) {
        this.map = ChronicleMap.of(String.class, byte[].class)
                .name("larder-bench")
                .entries(entries)
                .averageKey(Keys.key(0))
                .averageValueSize(valueBytes)
                .create();
    }

    @Override
    public byte[] get(String key) {
        return map.get(key);
    }

    @Override
    public void put(String key, byte[] value) {
        map.put(key, value);
    }

    @Override
    public String name() {
        return Peer.CHRONICLE.id();
    }

    @Override
    public boolean evicts() {
        return false;
    }

    @Override
    public long reportedBytes() {
        return map.offHeapMemoryUsed();
    }

    @Override
    public void close() {
        map.close();
    }
}
