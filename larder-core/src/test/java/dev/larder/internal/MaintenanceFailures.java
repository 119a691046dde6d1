package dev.larder.internal;

import dev.larder.LarderCache;

/** For tests that must fail when maintenance throws: the cache counts such passes instead of throwing. */
final class MaintenanceFailures {
    private MaintenanceFailures() {}

    /** Maintenance passes of {@code cache} (all its partitions) that threw. */
    static long of(LarderCache<?, ?> cache) {
        if (cache instanceof PartitionedCache<?, ?> partitioned) {
            long n = 0;
            for (int i = 0; i < partitioned.partitionCount(); i++) {
                n += partitioned.partitionAt(i).maintenanceFailures();
            }
            return n;
        }
        return ((NativeCache<?, ?>) cache).maintenanceFailures();
    }
}
