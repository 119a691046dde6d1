package dev.larder.bench;

import org.mapdb.DB;
import org.mapdb.DBMaker;
import org.mapdb.HTreeMap;
import org.mapdb.Serializer;

/**
 * MapDB 3's HTreeMap in direct memory, bounded by entry count. Entries sit in the create, update
 * and get expiration queues, so the oldest-accessed go first when the size bound is reached
 * (MapDB's way of being an LRU cache); eviction runs on the writing thread.
 */
final class MapDbAdapter implements BenchCache {
    private final DB db;
    private final HTreeMap<String, byte[]> map;

    MapDbAdapter(long entries) {
        this.db = DBMaker.memoryDirectDB().make();
        this.map = db.hashMap("bench", Serializer.STRING, Serializer.BYTE_ARRAY)
                .expireMaxSize(entries)
                .expireAfterCreate()
                .expireAfterUpdate()
                .expireAfterGet()
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
        return Peer.MAPDB.id();
    }

    @Override
    public void close() {
        db.close();
    }
}
