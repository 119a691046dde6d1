package dev.larder.bench;

/** Helpers shared by the benchmarks and the probe. */
final class Fill {
    private Fill() {}

    /** How many of the keys the cache holds. */
    static int countPresent(BenchCache cache, String[] keys) {
        int present = 0;
        for (String key : keys) {
            if (cache.get(key) != null) {
                present++;
            }
        }
        return present;
    }
}
