package dev.larder.bench;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Starts one cache, round-trips an entry and prints one JSON object: whether it works on this JVM
 * and, if not, why. bench.sh runs it for every cache with that cache's flags and the report lists
 * the result, so a peer that cannot run is reported, not silently dropped.
 */
public final class PeerCheck {
    private PeerCheck() {}

    public static void main(String[] args) {
        if (args.length != 1) {
            System.err.println("usage: PeerCheck <cache>");
            System.exit(2);
        }
        Peer peer = Peer.of(args[0]);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("cache", peer.id());
        out.put("title", peer.title());
        out.put("version", peer.version());
        out.put("storage", peer.storage());
        out.put("flags", peer.jvmFlags());
        out.put("java", Runtime.version().toString());
        try {
            Caches.check(peer.id());
            out.put("ok", true);
        } catch (PeerUnavailableException e) {
            out.put("ok", false);
            out.put("reason", e.reason());
            e.printStackTrace();
        }
        System.out.println(Json.write(out));
        // Some peers leave non-daemon threads behind.
        System.exit(0);
    }
}
