package dev.larder.internal.concurrent;

/**
 * A superclass that puts 128 bytes of unused fields in front of a subclass's own, so the
 * subclass's hot fields never share a cache line (nor an adjacent-line prefetch pair) with the
 * object allocated before it. HotSpot lays a superclass's fields out before its subclasses',
 * and the int fills the 4 bytes after a compressed header, where a subclass's int would go.
 *
 * <p>For heap objects that different cores write: an index shard's lock and sequence, the entry
 * count. Allocated next to each other (the shards, in a loop) their fields shared lines, and a
 * writer of one shard took the line from a reader of the next.
 */
@SuppressWarnings("unused") // padding only
public abstract class LinePadded {
    private int p00;
    private long p01, p02, p03, p04, p05, p06, p07, p08;
    private long p09, p10, p11, p12, p13, p14, p15, p16;
}
