package dev.larder.internal;

import dev.larder.Codec;
import dev.larder.internal.hash.KeyHash;
import dev.larder.internal.memory.RecordLayout;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A per-thread heap buffer that a key is encoded into before it is hashed and compared, so a
 * lookup allocates nothing, together with the rest of a thread's per-operation scratch state. A
 * nested use on the same thread (a compute function or listener that calls the cache) gets a
 * fresh buffer instead of overwriting the outer one.
 */
final class KeyScratch {
    private static final ThreadLocal<KeyScratch> LOCAL = ThreadLocal.withInitial(() -> new KeyScratch(64, null));

    /** The encoded key is {@code bytes[0, length)}; {@link #segment} views the same array. */
    byte[] bytes;

    MemorySegment segment;
    int length;
    /**
     * A header to parse records into on this thread's hot paths: a header allocated there would
     * escape into the (large, not always inlined) parse method and cost an allocation per call.
     */
    final RecordLayout.Header header = new RecordLayout.Header();

    /**
     * This thread's number among the threads that used a cache, in the order they first did: it
     * picks the thread's stripe of the access buffers and of the log ({@link #stripe}). Numbers
     * handed out in turn put the first N threads on N different stripes; the thread id, hashed,
     * put two threads on one stripe one time in four with four stripes, and two threads' GETs at
     * 10K then took ~1.7 times as long (the stripe's count and ring lines went from core to core
     * on every access; docs/speed-work.md, thirty-third session).
     */
    final int threadIndex;

    /**
     * This thread's number among the threads that used a cache, not wrapped: {@link
     * #threadIndex} is its low 32 bits. A number below a buffer's stripe count is the only one on
     * its stripe for good, which lets the thread count there without an atomic (see {@code
     * AccessBuffer#count}); the numbers after it wrap only past 2^63 threads.
     */
    final long ordinal;

    private static final AtomicLong THREADS = new AtomicLong();

    /** How many thread numbers ({@link #ordinal}) have been handed out: every thread's is below it. */
    static long threadsNumbered() {
        return THREADS.get();
    }

    /** Writes by this thread, to run the routine maintenance every so many (deterministically). */
    int writes;

    /**
     * The last word {@link dev.larder.internal.policy.WindowTinyLfu#touchAhead} loaded: kept so
     * that the load, whose point is only to bring a line into the core's cache, is not dropped.
     */
    long sketchWord;

    /**
     * Whether the last insert under its look's lock began a page (set by {@code
     * NativeCache.insertUnderLock}): the write then looks at the free pages' watermark.
     */
    boolean insertedOnFreshPage;

    /**
     * A key that {@link PartitionedCache} encoded into this buffer to route it, with the codec it
     * used: the partition it calls next finds the key here and encodes nothing. Set only between
     * the route and that call (see {@link #handOff}); taken once.
     */
    private Object handedOffKey;

    private Codec<?> handedOffCodec;

    /** {@link #hash}'s last answer and its seed, valid while {@link #hashed}; cleared on each encode. */
    private long hashValue;

    private long hashSeed;
    private boolean hashed;

    /** How deep this thread is in {@code ValueReader} callbacks (kept on the thread's own scratch). */
    private int readerDepth;

    /** The thread's own scratch; a nested one points to it for the thread's state. */
    private final KeyScratch owner;

    private boolean inUse;

    private KeyScratch(int capacity, KeyScratch owner) {
        this.bytes = new byte[capacity];
        this.segment = MemorySegment.ofArray(bytes);
        this.owner = owner == null ? this : owner;
        this.ordinal = owner == null ? THREADS.getAndIncrement() : owner.ordinal;
        this.threadIndex = (int) ordinal;
    }

    /** This thread's stripe among {@code stripes} (a power of two). */
    int stripe(int stripes) {
        return threadIndex & (stripes - 1);
    }

    /** Encodes {@code key}; the caller must {@link #release()} it. */
    @SuppressWarnings("unchecked")
    static <K> KeyScratch encode(Codec<K> codec, K key, int maxKeyLength) {
        KeyScratch s = LOCAL.get();
        if (s.inUse) {
            s = new KeyScratch(64, s);
        } else if (s.handedOffKey != null) {
            boolean mine = s.handedOffKey == key && s.handedOffCodec == codec && s.length <= maxKeyLength;
            s.handedOffKey = null;
            s.handedOffCodec = null;
            if (mine) {
                s.inUse = true;
                return s; // encoded (and hashed) by the partitioned cache that routed it here
            }
        }
        s.hashed = false;
        int len;
        if (codec instanceof TrustedCodec<?> trusted) {
            // One pass into a buffer big enough for any encoding of the key.
            TrustedCodec<K> t = (TrustedCodec<K>) trusted;
            long max = t.maxEncodedSize(key);
            if (max > maxKeyLength * 3L + 3) {
                len = codec.size(key); // absurdly long: measure first, and reject below
                checkLength(len, maxKeyLength);
            }
            if (s.bytes.length < max) {
                s.grow((int) Math.min(max, maxKeyLength * 3L + 3));
            }
            len = t.encodeKey(key, s.bytes);
        } else {
            len = codec.size(key);
            checkLength(len, maxKeyLength);
            if (s.bytes.length < len) {
                s.grow(len);
            }
            codec.write(key, s.segment.asSlice(0, len), 0);
        }
        checkLength(len, maxKeyLength);
        s.length = len;
        s.inUse = true;
        return s;
    }

    /** The calling thread's own scratch, for its state (not for encoding: see {@link #encode}). */
    static KeyScratch current() {
        return LOCAL.get();
    }

    private static void checkLength(int len, int maxKeyLength) {
        if (len <= 0 || len > maxKeyLength) {
            throw new IllegalArgumentException(
                    "key of " + len + " bytes: keys must be 1 to " + maxKeyLength + " bytes when encoded");
        }
    }

    private void grow(int bytes) {
        this.bytes = new byte[Math.max(bytes, this.bytes.length * 2)];
        this.segment = MemorySegment.ofArray(this.bytes);
    }

    /** The key's hash under {@code seed}. */
    long hash(long seed) {
        if (hashed && hashSeed == seed) {
            return hashValue;
        }
        long h = KeyHash.hash(seed, bytes, length);
        hashValue = h;
        hashSeed = seed;
        hashed = true;
        return h;
    }

    /**
     * Releases this buffer and leaves its encoding of {@code key} (by {@code codec}) for the next
     * {@link #encode} of the same key object with the same codec on this thread, which takes it
     * instead of encoding again. The caller must {@link #dropHandOff} once that call returns, in
     * case it never encoded.
     */
    void handOff(Object key, Codec<?> codec) {
        handedOffKey = key;
        handedOffCodec = codec;
        inUse = false;
    }

    /** Forgets a hand-off nobody took (see {@link #handOff}). */
    void dropHandOff() {
        handedOffKey = null;
        handedOffCodec = null;
    }

    /** Whether the thread is inside a {@code ValueReader} callback of some cache. */
    boolean insideReader() {
        return owner.readerDepth > 0;
    }

    void enterReader() {
        owner.readerDepth++;
    }

    void exitReader() {
        owner.readerDepth--;
    }

    void release() {
        inUse = false;
    }
}
