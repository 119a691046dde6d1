package dev.larder.bench;

/** A peer library that cannot start or work on this JVM; the message says why. */
public final class PeerUnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final Peer peer;

    public PeerUnavailableException(Peer peer, Throwable cause) {
        super(message(peer, cause), cause);
        this.peer = peer;
    }

    public Peer peer() {
        return peer;
    }

    /** The innermost cause, one line: what to put in a report. */
    public String reason() {
        Throwable root = getCause();
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String msg = root.getMessage();
        return root.getClass().getName()
                + (msg == null ? "" : ": " + msg.lines().findFirst().orElse(""));
    }

    private static String message(Peer peer, Throwable cause) {
        Throwable root = cause;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return peer.title() + " " + peer.version() + " cannot run on Java "
                + Runtime.version().feature() + " with flags " + peer.jvmFlags() + ": " + root;
    }
}
