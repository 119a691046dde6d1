package dev.larder.internal;

/**
 * Whether handing eviction batches to the executor's thread makes the cache's writers faster at
 * all, found by trying: while the executor has a core of its own ({@link ThreadCensus}), the cache
 * evicts in epochs of {@link #EPOCH_EVICTIONS} evictions, handed off or on the writers, and now
 * and then an epoch tries the other way ({@link #TRIAL_EVERY}, {@link #MAX_TRIAL_EVERY}). A trial
 * that evicts faster than the faster of the epochs either side of it by {@link #MARGIN_PERCENT},
 * twice in a row, makes its way the one used; one that is not ahead of the epoch before it by that
 * margin after {@link #EARLY_EVICTIONS} ends there, lost.
 *
 * <p>Why: a hand-off pays in lines that cross between the two cores (the records the evictor
 * reads, the index lines and shard locks it writes, the pages it frees), and what a line costs to
 * cross depends on where the two cores are. On the 2-core virtual machine this was measured on,
 * the host moved its two vCPUs between nearby cores (a line crossed in ~25 ns) and distant ones
 * (~200-250 ns) from minute to minute: one thread's inserts at 10K entries took ~135 ns handed off
 * in the first case and ~340 in the second, against ~195 either way with every batch on the
 * writer (docs/speed-work.md, fifty-fifth session). The same holds on a server whose threads land
 * on different chiplets or sockets. No cost model read ahead of time knows which it is; the
 * eviction rate does.
 *
 * <p>The rate is the cache's evictions per nanosecond while writers keep it at its bound: then
 * each insert evicts one entry, so the rate is the writers' insert rate, whatever thread evicts. An
 * epoch that takes longer than {@link #MAX_EPOCH_NANOS} means the writers are not inserting flat
 * out, so what the placement costs them does not show in the rate: it compares nothing, and a
 * trial in progress ends. The first {@link #SETTLE_EVICTIONS} of each epoch are not timed, so that
 * a batch of the way before does not count for the way after.
 *
 * <p>Every method but {@link #handOff}, {@link #wakeAnyway} and {@link #usesHandOff} is called by
 * the maintenance pass, under its lock.
 */
final class HandOffTrials {
    /** The evictions timed in one epoch: ~1-3 ms of one thread's inserts at the sizes measured. */
    static final long EPOCH_EVICTIONS = 8192;

    /**
     * Timed evictions after which a trial not yet {@link #MARGIN_PERCENT} faster than the epoch
     * before it ends, lost: a trial of the slower way costs an eighth of an epoch, not a whole one.
     */
    static final long EARLY_EVICTIONS = EPOCH_EVICTIONS / 8;

    /** Evictions at the start of each epoch that are not timed. */
    static final long SETTLE_EVICTIONS = 512;

    /**
     * Epochs the way in use runs between two trials of the other, at first and after a win: a
     * trial of the slower way costs a little (~1/17 of the time at most).
     */
    static final int TRIAL_EVERY = 16;

    /**
     * The most epochs between two trials: each trial lost doubles the interval up to this. A trial
     * of a way that stays the slower ends after {@link #EARLY_EVICTIONS}, so one in 65 epochs costs
     * little, and a change of the machine is found within ~0.1-0.2 s. On the 2-core guest the
     * hand-off slowed in spells of a second or two, and with 256 (and trials run whole) the switch
     * away and the switch back each took 0.5-2.6 s, the spell's own length (docs/speed-work.md,
     * fifty-sixth session).
     */
    static final int MAX_TRIAL_EVERY = 64;

    /** By how much a trial's time per eviction must be below its neighbours' to count as a win. */
    static final int MARGIN_PERCENT = 15;

    /** Wins in a row after which the way tried becomes the way used. */
    static final int WINS_TO_SWITCH = 2;

    /** An epoch that takes longer than this compares nothing (the writers are not inserting flat out). */
    static final long MAX_EPOCH_NANOS = 200_000_000;

    private static final int ON_WRITERS = 0;
    private static final int HANDED_OFF = 1;
    /** Handed off in a trial: a writer wakes the executor whatever a wake cost before (see {@link #wakeAnyway}). */
    private static final int HANDED_OFF_TRIED = 2;

    /** The way in force now: what writers past the bound and the executor's task read. */
    private volatile int way = HANDED_OFF;

    /** The way used outside trials (volatile for {@link #usesHandOff} only: written on a switch). */
    private volatile boolean used = true;

    private boolean settled;
    private long epochStart;
    private long epochEvictions;
    /** Regular epochs since the last trial. */
    private int regularEpochs;

    /** Regular epochs between two trials now: from {@link #TRIAL_EVERY} to {@link #MAX_TRIAL_EVERY}. */
    private int trialEvery = TRIAL_EVERY;
    /** Time per eviction (ns, scaled by {@link #SCALE}) of the last regular epoch, or -1. */
    private long lastRegular = -1;
    /** The last trial's, until the regular epoch after it is timed; or -1. */
    private long trial = -1;

    private int wins;

    private static final int SCALE = 16;

    /** Whether eviction batches go to the executor now (read by writers; racy by design). */
    boolean handOff() {
        return way != ON_WRITERS;
    }

    /** Whether the way used outside trials is the hand-off (for tests and diagnostics). */
    boolean usesHandOff() {
        return used;
    }

    /**
     * Whether a writer past the bound wakes the executor even if {@link HandOffCosts} says a wake
     * costs more than it buys: in a trial of the hand-off, whose figures for the wake date from
     * before, when a task cut short by a trial of the other way had run one or two batches.
     */
    boolean wakeAnyway() {
        return way == HANDED_OFF_TRIED;
    }

    /**
     * A maintenance pass ended at {@code now} ({@link System#nanoTime}) with the cache's {@code
     * evictions} so far. {@code measurable}: whether the executor has a core of its own, without
     * which nothing is handed off and there is nothing to try.
     */
    void passEnded(long now, long evictions, boolean measurable) {
        if (!measurable) {
            abandon();
            startEpoch(evictions);
            return;
        }
        if (!settled) {
            if (evictions - epochEvictions >= SETTLE_EVICTIONS) {
                settled = true;
                epochStart = now;
                epochEvictions = evictions;
            }
            return;
        }
        long elapsed = now - epochStart;
        if (elapsed > MAX_EPOCH_NANOS) {
            abandon();
            startEpoch(evictions);
            return;
        }
        long evicted = evictions - epochEvictions;
        if (evicted < EPOCH_EVICTIONS && !trialLosing(elapsed, evicted)) {
            return;
        }
        epochEnded(elapsed * SCALE / evicted);
        startEpoch(evictions);
    }

    /**
     * Whether a trial in force has timed {@link #EARLY_EVICTIONS} and is not ahead of the epoch
     * before it: already short of a win, it ends (lost) without the rest of its epoch.
     */
    private boolean trialLosing(long elapsed, long evicted) {
        return handOff() != used
                && lastRegular >= 0
                && evicted >= EARLY_EVICTIONS
                && !ahead(elapsed * SCALE / evicted, lastRegular);
    }

    /** Whether a time per eviction beats {@code reference} by {@link #MARGIN_PERCENT}. */
    private static boolean ahead(long perEviction, long reference) {
        return perEviction * 100 < reference * (100 - MARGIN_PERCENT);
    }

    private void epochEnded(long perEviction) {
        if (handOff() != used) { // a trial
            trial = perEviction;
            setHandOff(used);
            return;
        }
        if (trial >= 0 && lastRegular >= 0) {
            // Against the faster neighbour: a slow spell of the machine on one side is no win.
            long neighbour = Math.min(lastRegular, perEviction);
            boolean won = ahead(trial, neighbour);
            wins = won ? wins + 1 : 0;
            trialEvery = won ? TRIAL_EVERY : Math.min(MAX_TRIAL_EVERY, 2 * trialEvery);
            if (wins >= WINS_TO_SWITCH) {
                used = !used;
                wins = 0;
                abandon(); // the new way in force; what was timed the old way compares nothing
                return;
            }
        }
        trial = -1;
        lastRegular = perEviction;
        if (++regularEpochs >= trialEvery) {
            regularEpochs = 0;
            setWay(used ? ON_WRITERS : HANDED_OFF_TRIED);
        }
    }

    /** Nothing timed so far compares: a trial in progress ends; the wins in a row are kept. */
    private void abandon() {
        setHandOff(used);
        trial = -1;
        lastRegular = -1;
        regularEpochs = 0;
    }

    private void startEpoch(long evictions) {
        settled = false;
        epochEvictions = evictions;
    }

    private void setHandOff(boolean handOff) {
        setWay(handOff ? HANDED_OFF : ON_WRITERS);
    }

    private void setWay(int value) {
        if (way != value) {
            way = value; // written when it changes only: every writer past the bound reads it
        }
    }
}
