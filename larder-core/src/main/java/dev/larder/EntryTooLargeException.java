package dev.larder;

/** Thrown when one entry cannot fit in the whole cache. Nothing already stored is affected. */
public final class EntryTooLargeException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    public EntryTooLargeException(String message) {
        super(message);
    }
}
