package dev.larder.bench;

/** The memory probe's arithmetic, apart so it can be tested. */
public final class ProbeMath {
    private ProbeMath() {}

    /** Bytes per held entry: heap retained after GC plus native (RSS) growth, over the entries held. */
    public static double bytesPerEntry(long heapRetainedBytes, long nativeGrowthBytes, long entriesHeld) {
        if (entriesHeld <= 0) {
            return Double.NaN;
        }
        return (double) (Math.max(0, heapRetainedBytes) + Math.max(0, nativeGrowthBytes)) / entriesHeld;
    }

    /** What an entry costs beyond its key and value bytes. */
    public static double overheadPerEntry(double bytesPerEntry, int keyBytes, int valueBytes) {
        return bytesPerEntry - keyBytes - valueBytes;
    }

    /** Bytes needed for {@code entries} entries at {@code bytesPerEntry}. */
    public static double projectBytes(double bytesPerEntry, long entries) {
        return bytesPerEntry * entries;
    }

    /** Resident set size in bytes from the text of {@code /proc/self/status}, or -1. */
    public static long rssBytes(String procStatus) {
        for (String line : procStatus.split("\n")) {
            if (line.startsWith("VmRSS:")) {
                String[] parts = line.substring(6).trim().split("\\s+");
                long value = Long.parseLong(parts[0]);
                String unit = parts.length > 1 ? parts[1] : "kB";
                return switch (unit) {
                    case "kB" -> value * 1024;
                    case "mB", "MB" -> value * 1024 * 1024;
                    default -> value;
                };
            }
        }
        return -1;
    }

    /** The heap to give a probe child: room for an on-heap cache's entries, pre-touched. */
    public static long childHeapBytes(boolean onHeap, long entries, int valueBytes) {
        long base = 512L << 20;
        long perEntry = onHeap ? (long) ((valueBytes + Keys.KEY_BYTES + 200) * 1.6) : 64;
        long bytes = base + entries * perEntry;
        return (bytes + (1 << 20) - 1) & -(1L << 20); // whole MiB
    }

    /**
     * Time spent beyond the rate of the last chunk: the sum over chunks of (the chunk's time less
     * its count at the last chunk's time per operation), never below zero per chunk. What a phase
     * at the start of a run cost in all.
     */
    public static double extraSeconds(long[] nanos, int[] counts) {
        int last = nanos.length - 1;
        double steady = (double) nanos[last] / counts[last];
        double extra = 0;
        for (int c = 0; c < nanos.length; c++) {
            extra += Math.max(0, nanos[c] - counts[c] * steady);
        }
        return extra / 1e9;
    }
}
