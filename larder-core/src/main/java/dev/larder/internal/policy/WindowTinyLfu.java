package dev.larder.internal.policy;

import dev.larder.internal.concurrent.OwnLineLongs;
import dev.larder.internal.memory.MemoryBudget;

/**
 * The decisions of Larder's W-TinyLFU policy, apart from where records live: how large the
 * admission window is, and whether a candidate leaving the window may take the place of the
 * main queue's victim.
 *
 * <p>The frequency sketch lives in native memory taken from the cache's budget. It is sized
 * for the entries the cache holds and grows (doubling, counts reset) while the cache fills, as
 * long as the budget allows. Used only under the cache's maintenance lock.
 */
public final class WindowTinyLfu {
    /**
     * A candidate at least this warm that does not beat the victim is still admitted now and
     * then (1 in {@value #WARM_ODDS}), so that an attacker who makes one victim look hot cannot freeze the main
     * queue.
     */
    static final int WARM = 6;

    /** A warm candidate that does not lead is admitted one time in this many. */
    static final int WARM_ODDS = 128;

    /**
     * A candidate only one count ahead of the victim is admitted one time in this many. Measured
     * on the simulator's rows (20 seeds, 2026-11-24): always admitting it (Caffeine's rule) left
     * the LIRS sweeps 1 to 2.5 points below Caffeine (backf@100 -2.5, zigzag@1000 -1.5); never
     * admitting it lifted them 2 to 5 points but froze the cache on a phase change
     * (corda-loop-corda@512 +1.5 -> -3.0); 1 in 4, 8, 16, 32, 64 moved steadily from the first to
     * the second without the freeze; 32 was taken.
     */
    static final int NARROW_LEAD_ODDS = 32;

    /**
     * Share of main the protected queue may hold, as in Caffeine's segmented LRU. Measured on the
     * LIRS and corda traces (docs/hit-rates.md): 0.5 and 0.6 lost 0.4 points of mean hit rate, 0.9
     * lost 0.05.
     */
    static final double PROTECTED_SHARE = 0.8;

    /**
     * An experiment knob, not an API: the system property {@code larder.sketchScale} (read once,
     * when this class loads; default 1.0) multiplies every sketch's size, in whole 64-byte blocks,
     * at least one block and at most {@link FrequencySketch#MAX_BYTES}. It exists to measure what
     * a table smaller than {@link FrequencySketch#BYTES_PER_ENTRY} bytes per entry costs in hit
     * rate: at a billion entries the 1 GiB ceiling leaves 1.07 bytes per entry, which {@code
     * -Dlarder.sketchScale=0.36} reproduces at any size of 1,366 entries or more (see
     * docs/sketch-ceiling.md). A value that is not a positive finite number is ignored.
     */
    static final double SKETCH_SCALE = parseScale(System.getProperty("larder.sketchScale"));

    private final MemoryBudget budget;
    private final boolean adviseHugePages;
    private FrequencySketch sketch;
    /**
     * The sketch that threads recording an access load ahead of the drain ({@link #touchAhead}):
     * {@link #sketch} while the policy counts and the sketch is at least {@link
     * #TOUCH_AHEAD_MIN_BYTES}, else null.
     */
    private volatile FrequencySketch aheadSketch;

    private long sketchCapacity;
    /** The sketch's size, for threads outside the maintenance lock. */
    private volatile long sketchBytes;
    /** The ghost lists' size (fixed once built; 0 when freed). */
    private volatile long ghostBytes;

    private HillClimber climber;
    /** What the climber consults when the workload jumps; null if the budget could not spare it. */
    private GhostLists ghosts;

    /**
     * The admission's random state (xorshift), written at every duel: on a line of its own, off
     * this object's fields that every insert and GET reads ({@link #aheadSketch}, {@link #ghosts}).
     */
    private final OwnLineLongs random = new OwnLineLongs(1);

    /**
     * @param capacity entries the cache is expected to hold
     * @param seed the cache's hash seed: makes the random admissions deterministic per cache
     */
    public WindowTinyLfu(long capacity, long seed, MemoryBudget budget) {
        this(capacity, seed, budget, false);
    }

    /**
     * @param adviseHugePages whether a sketch of a huge page or more is mapped and advised for
     *     huge pages (its counters are read at random, as the records are)
     */
    public WindowTinyLfu(long capacity, long seed, MemoryBudget budget, boolean adviseHugePages) {
        this.budget = budget;
        this.adviseHugePages = adviseHugePages;
        this.random.set(0, seed | 1);
        long wanted = Math.max(16, capacity);
        FrequencySketch allocated = allocateSketch(wanted);
        // A budget too small for the sketch it wants gets a smaller one.
        for (long smaller = wanted / 2; allocated == null && smaller >= 16; smaller /= 2) {
            allocated = allocateSketch(smaller);
        }
        if (allocated == null) {
            throw new IllegalArgumentException("maximumBytes (" + budget.maximum()
                    + ") leaves no room for the frequency sketch of " + sketchBytesFor(16, SKETCH_SCALE)
                    + " bytes");
        }
        this.sketch = allocated;
        this.sketchBytes = allocated.byteSize();
        this.sketchCapacity = wanted;
        this.climber = new HillClimber(wanted);
        this.ghosts = allocateGhosts(ghostHorizon(wanted));
        this.ghostBytes = ghosts == null ? 0 : ghosts.byteSize();
    }

    /**
     * The ghost lists' horizon for a cache of {@code capacity} entries: the climber's first step,
     * in entries (at least one).
     */
    static long ghostHorizon(long capacity) {
        return Math.max(1, (long) Math.ceil(HillClimber.INITIAL_STEP * capacity));
    }

    /** Ghost lists taken from the budget; null if it cannot spare them (the hit rate alone then steers). */
    private GhostLists allocateGhosts(long horizon) {
        long bytes = GhostLists.bytesFor(horizon);
        if (!budget.tryReserve(bytes)) {
            return null;
        }
        try {
            return new GhostLists(horizon);
        } catch (RuntimeException | Error e) {
            budget.release(bytes);
            throw e;
        }
    }

    private FrequencySketch allocateSketch(long capacity) {
        long bytes = sketchBytesFor(capacity, SKETCH_SCALE);
        if (!budget.tryReserve(bytes)) {
            return null;
        }
        try {
            return new FrequencySketch(capacity, bytes, adviseHugePages);
        } catch (RuntimeException | Error e) {
            budget.release(bytes);
            throw e;
        }
    }

    /**
     * Whether accesses are counted yet. Not while the cache fills: those entries are admitted
     * unopposed, and counts earned then let the first fill defend its place against every later
     * key with the same history (ties keep the victim), so the cache froze on its first contents.
     * Counting starts when the cache is full (it holds its entry bound, or has evicted). Measured
     * on the simulator's 62 rows (5 seeds, 2026-11-24) against counting from half full, as
     * Caffeine does: mean +0.75 -> +0.84 points over Caffeine, p2@32768 -1.50 -> +0.46,
     * scarab@100000 -0.57 -> +0.55, ps@200 +1.32 -> +2.73, backf@300 +3.34 -> +1.87.
     */
    private boolean counting;

    /** Counts one access to the key with this hash, once the cache is full. */
    public void record(long hash) {
        if (counting) {
            sketch.increment(hash);
        }
    }

    /** The cache is full (it holds its entry bound, or has evicted): accesses count from now on. */
    public void startCounting() {
        counting = true;
        aheadSketch = worthTouching(sketch);
    }

    /**
     * The smallest sketch worth loading ahead: a smaller one (caches of fewer than ~350K entries)
     * mostly stays in a core's cache between two drains, and the load would be work for nothing.
     */
    static final long TOUCH_AHEAD_MIN_BYTES = 1L << 20;

    private FrequencySketch worthTouching(FrequencySketch s) {
        return counting && s != null && s.byteSize() >= TOUCH_AHEAD_MIN_BYTES ? s : null;
    }

    /**
     * Loads the sketch line the key with this hash counts in, for a thread (any, no lock) that is
     * about to record an access to it: the access waits in a buffer until a drain counts it, and
     * in a large sketch that count was a miss the drain waited for, one access after another.
     * Loaded while the thread still waits for its own misses, it costs next to nothing. Returns a
     * word of the line (0 when nothing was loaded) for the caller to keep, so that the compiler
     * cannot drop the load. A sketch freed meanwhile (grown, or the cache closed) throws inside;
     * nothing is loaded then.
     */
    public long touchAhead(long hash) {
        FrequencySketch s = aheadSketch;
        if (s == null) {
            return 0;
        }
        try {
            return s.touch(hash);
        } catch (IllegalStateException freed) {
            return 0;
        }
    }

    public boolean counting() {
        return counting;
    }

    /**
     * Whether the window's candidate should replace the main queue's victim: if the sketch has
     * seen it at least two more times. A lead of one is what the candidate's own insertion gives
     * it whenever the victim's next access is still to come (in a loop or a sweep, every victim's
     * is), so one count is as likely the order of the accesses as popularity: such a candidate gets
     * in at random, one time in {@value #NARROW_LEAD_ODDS}, which is still enough for a new
     * working set to take over. A candidate at least {@link #WARM} that does not lead gets in one
     * time in {@value #WARM_ODDS}.
     */
    public boolean admit(long candidateHash, long victimHash) {
        return admitByFrequency(sketch.frequency(candidateHash), sketch.frequency(victimHash));
    }

    /** The sketch's estimate of a key's frequency, for {@link #admitByFrequency}. */
    public int frequency(long hash) {
        return sketch.frequency(hash);
    }

    /** {@link #record} and then {@link #frequency}, reading the key's counters once. */
    public int recordAndFrequency(long hash) {
        return counting ? sketch.incrementAndEstimate(hash) : sketch.frequency(hash);
    }

    /** {@link #admit} on estimates the caller already has (a victim that stays through many duels). */
    public boolean admitByFrequency(int candidate, int victim) {
        if (candidate > victim + 1) {
            return true;
        }
        if (candidate == victim + 1) {
            return randomOneIn(NARROW_LEAD_ODDS);
        }
        return candidate >= WARM && randomOneIn(WARM_ODDS);
    }

    /** True one time in {@code odds} (a power of two), from the cache's seeded xorshift. */
    private boolean randomOneIn(int odds) {
        long r = random.get(0);
        r ^= r << 13;
        r ^= r >>> 7;
        r ^= r << 17;
        random.set(0, r);
        return (r & (odds - 1)) == 0;
    }

    /**
     * Entries the window should hold in a cache of {@code capacity} entries: at least one, the
     * rest of the hill climber's share.
     */
    public long windowTarget(long capacity) {
        long main = (long) ((1.0 - climber.windowFraction()) * capacity);
        return Math.max(1, capacity - main);
    }

    /**
     * Entries main's protected queue should hold at most: {@link #PROTECTED_SHARE} of main (the
     * cache less the window), as in a segmented LRU; the rest of main is probation, where newly
     * admitted records must prove themselves.
     */
    public long protectedTarget(long capacity, long windowTarget) {
        return (long) (PROTECTED_SHARE * Math.max(0, capacity - windowTarget));
    }

    public double windowFraction() {
        return climber.windowFraction();
    }

    /** Feeds the cache's cumulative hits and misses, and the ghost lists' hits, to the hill climber. */
    public void adapt(long hits, long misses) {
        if (ghosts != null) {
            climber.record(hits, misses, ghosts.windowHits(), ghosts.mainHits());
        } else {
            climber.record(hits, misses);
        }
    }

    /** A record left the window for main (a duel's winner or the window's overflow). */
    public void leftWindow(long hash) {
        if (ghosts != null) {
            ghosts.windowDeparture(hash, false);
        }
    }

    /** {@code n} records moved from the window to main at once, unopposed (a page moved whole). */
    public void leftWindowTogether(long n) {
        if (ghosts != null) {
            ghosts.windowDepartures(n);
        }
    }

    /** A record was evicted to make room: from the window ({@code fromWindow}) or from main. */
    public void evicted(long hash, boolean fromWindow) {
        if (ghosts == null) {
            return;
        }
        if (fromWindow) {
            ghosts.windowDeparture(hash, true);
        } else {
            ghosts.mainEviction(hash);
        }
    }

    /** Ghost hits of both sides so far (for tests and diagnostics); 0 without ghost lists. */
    public long ghostHits() {
        return ghosts == null ? 0 : ghosts.windowHits() + ghosts.mainHits();
    }

    /**
     * Whether the ghost lists track the key with this hash (see {@link GhostLists#tracks}), for a
     * writer (any thread, no lock) deciding whether an insert is worth recording for {@link
     * #written}: one key in two in a cache (or partition) of 50K entries, one in 16 at 500K.
     */
    public boolean ghostsTrack(long hash) {
        GhostLists g = ghosts; // racy: once built it only goes at close, and tracks reads only finals
        return g != null && g.tracks(hash);
    }

    /** A key was written: if it was evicted lately, the ghost lists count it for its side. */
    public void written(long hash) {
        if (ghosts != null) {
            ghosts.inserted(hash);
        }
    }

    /**
     * Grows the sketch when the cache holds more entries than
     * it was sized for, budget permitting. The new sketch starts empty, as after a reset.
     */
    public void ensureCapacity(long entries) {
        if (entries <= sketchCapacity) {
            return;
        }
        long wanted = Math.max(sketchCapacity * 2, entries);
        if (sketchBytesFor(wanted, SKETCH_SCALE) == sketch.byteSize()) {
            sketchCapacity = wanted; // the ceiling: same table, longer sample period would do
            return;
        }
        FrequencySketch grown = allocateSketch(wanted);
        if (grown == null) {
            sketchCapacity = wanted; // the budget holds records instead; do not try again soon
            return;
        }
        aheadSketch = null;
        release();
        sketch = grown;
        aheadSketch = worthTouching(grown);
        sketchBytes = grown.byteSize();
        sketchCapacity = wanted;
    }

    /**
     * The sketch's size for {@code capacity} entries: {@link FrequencySketch#bytesFor(long)} times
     * {@code scale}, rounded down to whole 64-byte blocks, at least one block and at most the 1 GiB
     * ceiling. Exactly {@code bytesFor(capacity)} at scale 1.
     */
    static long sketchBytesFor(long capacity, double scale) {
        long bytes = FrequencySketch.bytesFor(capacity);
        if (scale == 1.0) {
            return bytes;
        }
        double scaled = Math.min(bytes * scale, (double) FrequencySketch.MAX_BYTES);
        long blocks = (long) (scaled / FrequencySketch.BLOCK_BYTES);
        return Math.max(1, blocks) * FrequencySketch.BLOCK_BYTES;
    }

    /** {@code larder.sketchScale} as a positive finite number, else 1.0. */
    static double parseScale(String property) {
        if (property == null) {
            return 1.0;
        }
        try {
            double scale = Double.parseDouble(property.trim());
            return scale > 0 && Double.isFinite(scale) ? scale : 1.0;
        } catch (NumberFormatException e) {
            return 1.0;
        }
    }

    /** The sketch block a hash counts in (for tests that aim collisions at it). */
    public long sketchBlock(long hash) {
        return sketch.blockOf(hash);
    }

    /** Bytes of the budget the sketch holds (any thread). */
    public long sketchBytes() {
        return sketchBytes;
    }

    /** Bytes of the budget the policy holds: the sketch and the ghost lists (any thread). */
    public long bytes() {
        return sketchBytes + ghostBytes;
    }

    private void release() {
        long bytes = sketch.byteSize();
        sketch.free();
        budget.release(bytes);
    }

    /** Frees the sketch and the ghost lists; the cache is closing. */
    public void free() {
        if (sketch != null) {
            aheadSketch = null;
            release();
            sketch = null;
            sketchBytes = 0;
        }
        if (ghosts != null) {
            ghosts.free();
            budget.release(ghostBytes);
            ghosts = null;
            ghostBytes = 0;
        }
    }
}
