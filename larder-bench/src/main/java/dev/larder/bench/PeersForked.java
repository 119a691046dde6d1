package dev.larder.bench;

import org.openjdk.jmh.annotations.Fork;

/**
 * The forked JVM of the benchmarks that run every peer: a 4 GB heap touched up front (so that no
 * cache's run pays for the heap's first use), and the union of the peers' flags (Chronicle Map's
 * module openings, Unsafe memory access, native access). JMH takes a benchmark class's
 * annotations from its superclasses; {@code bench.sh} starts each cache's forks with only that
 * cache's flags, and this union is for running the jar by hand.
 */
@Fork(
        value = 1,
        jvmArgsAppend = {
            "-Xms4g",
            "-Xmx4g",
            "-XX:+AlwaysPreTouch",
            Peer.Flags.NATIVE_ACCESS,
            Peer.Flags.UNSAFE,
            Peer.Flags.NO_ANALYTICS,
            Peer.Flags.CH_1,
            Peer.Flags.CH_2,
            Peer.Flags.CH_3,
            Peer.Flags.CH_4,
            Peer.Flags.CH_5,
            Peer.Flags.CH_6,
            Peer.Flags.CH_7,
            Peer.Flags.CH_8,
            Peer.Flags.CH_9
        })
public abstract class PeersForked {}
