package dev.larder.internal.policy;

/**
 * Chooses the share of the cache given to W-TinyLFU's admission window by hill climbing on the
 * hit rate: once per sample period it compares the period's hit rate with the previous one's,
 * keeps stepping the same way if it did not get worse and turns back if it did.
 *
 * <p>The first step shrinks the window: frequency usually beats recency, and a window grown
 * for nothing costs a loop or scan workload its hits while the climber finds out (the flat hit
 * rate of a loop would otherwise walk the window up to its bound). Steps start at 6.25% of the cache and shrink by 2% per adjustment, so the window settles
 * near the best share instead of swinging around it forever. A hit rate that moved by more than
 * 5 points between periods means the workload changed, not the window: the step restarts at
 * 6.25% so the climber can travel to the new best share quickly.
 *
 * <p>Two departures from Caffeine's climber, both measured on the simulator's 62 rows
 * (docs/hit-rates.md): a change of the hit rate smaller than its sampling noise (one standard
 * error of a period's hit rate) moves nothing, so a plateau does not make the
 * window random-walk into a cliff (corda at 1,024 entries walked the window down from 25% to 2%
 * on a flat 33.3% and fell to 7% for a period, twice); and a climber pushing against the
 * smallest or largest share steps back from it once (until the workload changes), since
 * staying there tells it nothing (scarab at 25,000 entries sat at a zero window for the whole
 * trace: 57.7% hits, 59.5% with the step back). Stepping back every time it met the bound cost
 * frequency-heavy workloads a point (zipf-0.8 at 10,000 entries). Together they moved the mean
 * by about +0.4 points.
 *
 * <p>A third departure: a period whose hit rate jumped by more than 5 points says nothing about
 * the window (the workload moved), so on such a period the climber also asks the {@link
 * GhostLists}, whose counts come from the same period's requests: if the keys main evicted came
 * back significantly more often than the keys the window evicted (by more than √(w + m), the
 * noise of the difference of two Poisson counts), it steps towards a smaller window, whatever
 * the hit rate did. On the p2 disk trace at 32,768 entries every period's hit rate differs from
 * the last by 5-25 points, and the window random-walked between 0% and 55% where a window held
 * at 1-5% did best. Only that direction: every miss evicts a window candidate (most lose their
 * duel) while main evicts only when a candidate wins, so the window's count runs high whatever
 * the window's worth. Ghosts allowed to push the window up cost a loop (deciding every period:
 * loop@1000 from 98% hits to 85%) and a frequency-heavy trace (deciding on jumps: orm-night@5000
 * 0.7 points, its window walked to 55-68% where 10-20% does best). Measured on the simulator's 62
 * rows (docs/speed-work.md, fourteenth session).
 *
 * <p>Not thread-safe: the maintenance thread calls it, under the maintenance lock.
 */
public final class HillClimber {
    /** The window's share before any adjustment: small, as recency rarely beats frequency. */
    public static final double INITIAL_FRACTION = 0.01;
    /** Smallest share: no window at all, pure TinyLFU admission into the main space. */
    public static final double MIN_FRACTION = 0.0;
    /** Largest share: the main space keeps a fifth of the cache for frequently used entries. */
    public static final double MAX_FRACTION = 0.8;

    /** The first step, and the step after a workload change: a share of the cache. */
    public static final double INITIAL_STEP = 0.0625;

    static final double STEP_DECAY = 0.98;
    static final double RESTART_THRESHOLD = 0.05;
    /** Fewest requests per sample: below this the hit rate is noise (±1.5 points at 1,000). */
    static final long MIN_SAMPLE_PERIOD = 1_000;

    private final long samplePeriod;
    private double fraction = INITIAL_FRACTION;
    /** Signed: the direction of the last step and the size of the next. */
    private double step = -INITIAL_STEP;

    private double previousHitRate = Double.NaN;
    /**
     * Whether the climber has stepped back from a bound since the workload last changed: it does
     * so once; if the step back did not pay, it returns to the bound and stays there.
     */
    private boolean steppedBackFromBound;

    private long periodStartHits;
    private long periodStartMisses;
    private long periodStartWindowGhosts;
    private long periodStartMainGhosts;

    /**
     * A climber for a cache of {@code capacity} entries: it adjusts after every 10 × capacity
     * requests, and at least every {@value #MIN_SAMPLE_PERIOD}.
     */
    public HillClimber(long capacity) {
        if (capacity < 0) {
            throw new IllegalArgumentException("capacity must not be negative: " + capacity);
        }
        this.samplePeriod = Math.max(MIN_SAMPLE_PERIOD, 10 * Math.min(capacity, Long.MAX_VALUE / 10));
    }

    /** The window's share of the cache, in [{@value #MIN_FRACTION}, {@value #MAX_FRACTION}]. */
    public double windowFraction() {
        return fraction;
    }

    /** Requests (hits plus misses) per sample period. */
    public long samplePeriod() {
        return samplePeriod;
    }

    /**
     * Takes the cache's CUMULATIVE hit and miss counts and the ghost lists' cumulative hit counts
     * ({@link GhostLists#windowHits()}, {@link GhostLists#mainHits()}); once a sample period of
     * requests has passed since the last adjustment, adjusts the window share from this period's
     * counts. Returns true if the share changed. Counts that went backwards (statistics reset)
     * start a new period and are not judged.
     */
    public boolean record(long hits, long misses, long windowGhostHits, long mainGhostHits) {
        long periodHits = hits - periodStartHits;
        long periodMisses = misses - periodStartMisses;
        long windowGhosts = windowGhostHits - periodStartWindowGhosts;
        long mainGhosts = mainGhostHits - periodStartMainGhosts;
        if (periodHits < 0 || periodMisses < 0 || windowGhosts < 0 || mainGhosts < 0) {
            startPeriod(hits, misses, windowGhostHits, mainGhostHits);
            return false;
        }
        long requests = periodHits + periodMisses;
        if (requests < samplePeriod) {
            return false;
        }
        startPeriod(hits, misses, windowGhostHits, mainGhostHits);
        return adjust((double) periodHits / requests, requests, windowGhosts, mainGhosts);
    }

    /** {@link #record(long, long, long, long)} without ghost lists: the hit rate alone decides. */
    public boolean record(long hits, long misses) {
        return record(hits, misses, periodStartWindowGhosts, periodStartMainGhosts);
    }

    private void startPeriod(long hits, long misses, long windowGhostHits, long mainGhostHits) {
        periodStartHits = hits;
        periodStartMisses = misses;
        periodStartWindowGhosts = windowGhostHits;
        periodStartMainGhosts = mainGhostHits;
    }

    /**
     * Whether main's ghost hits lead the window's by more than their noise: each count is about
     * Poisson, so their difference has a standard deviation of √(w + m).
     */
    static boolean mainGhostsLead(long windowGhosts, long mainGhosts) {
        double lead = mainGhosts - windowGhosts;
        return lead > 0 && lead * lead > (double) windowGhosts + mainGhosts;
    }

    /**
     * The standard error of a period's hit rate over {@code requests} requests: a change smaller
     * than it is as likely noise as the window's doing. (The binomial variance, floored at 0.01
     * so that a hit rate near 0 or 1 still needs a real change; one standard error, not two, was
     * the better of the two measured.)
     */
    static double samplingNoise(double hitRate, double previous, long requests) {
        double p = (hitRate + previous) / 2;
        double variance = Math.max(p * (1 - p), 0.01);
        return Math.sqrt(variance / requests);
    }

    private boolean adjust(double hitRate, long requests, long windowGhosts, long mainGhosts) {
        double previous = previousHitRate;
        previousHitRate = hitRate;
        if (!Double.isNaN(previous)) { // the first period has nothing to compare: step down
            if (Math.abs(hitRate - previous) < samplingNoise(hitRate, previous, requests)) {
                step *= STEP_DECAY;
                return false;
            }
            if (hitRate < previous) {
                step = -step;
            }
            if (Math.abs(hitRate - previous) > RESTART_THRESHOLD) {
                step = Math.copySign(INITIAL_STEP, step);
                steppedBackFromBound = false;
                if (mainGhostsLead(windowGhosts, mainGhosts)) {
                    return moveBy(-INITIAL_STEP); // the workload moved: the ghosts decide
                }
            }
        }
        boolean pushingAgainstBound = fraction == MIN_FRACTION && step < 0 || fraction == MAX_FRACTION && step > 0;
        if (pushingAgainstBound && !steppedBackFromBound) {
            step = -step;
            steppedBackFromBound = true;
        }
        return moveBy(step);
    }

    /** Moves the share by {@code amount} within its bounds; the next step is 2% shorter. */
    private boolean moveBy(double amount) {
        step = amount * STEP_DECAY;
        double next = Math.clamp(fraction + amount, MIN_FRACTION, MAX_FRACTION);
        boolean changed = next != fraction;
        fraction = next;
        return changed;
    }
}
