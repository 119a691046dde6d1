package dev.larder.internal;

import dev.larder.internal.index.IndexShard;

/** For tests: where a cache's entries are, counted from the index, to hold the evictor's queue counts against. */
final class QueueRecount {
    private QueueRecount() {}

    /** Entries whose record is in the window, probation and protected queues (indexed by queue). */
    static long[] byQueue(NativeCache<?, ?> nc) {
        long[] byQueue = new long[3];
        for (IndexShard shard : nc.shards) {
            shard.lock();
            try {
                long[] locations = shard.locations(new long[0]);
                for (int i = 0; i < shard.count(); i++) {
                    byQueue[nc.store.queueOf(locations[i])]++;
                }
            } finally {
                shard.unlock();
            }
        }
        return byQueue;
    }
}
