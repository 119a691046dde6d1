package dev.larder.simulator;

import java.io.IOException;
import java.util.List;

/**
 * A request sequence to measure hit rates on, with the cache sizes to measure it at: a trace
 * file, or a synthetic sequence generated from a fixed seed.
 */
public interface Workload {
    /** The name rows and the command line use, e.g. {@code p2} or {@code zipf-0.99}. */
    String name();

    /** One line on what it is. */
    String description();

    /** The cache sizes (entries) to evaluate it at. */
    List<Integer> sizes();

    /**
     * True if the sequence depends on the cache size (synthetic workloads scale their key space
     * with it); a trace's requests are loaded once for all its sizes.
     */
    boolean sizeDependent();

    /** True for workloads whose character changes part-way: their hit rate is also reported per window. */
    boolean phaseChange();

    /** The requests for a cache of {@code cacheSize} entries, at most {@code limit} of them. */
    Requests requests(int cacheSize, long limit) throws IOException;

    /**
     * A request sequence as primitive keys, and the positions where its phases start (just
     * {@code [0]} for a single-phase workload).
     */
    record Requests(long[] keys, long[] phaseStarts) {
        public static Requests single(long[] keys) {
            return new Requests(keys, new long[] {0});
        }
    }
}
