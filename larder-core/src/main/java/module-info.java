/**
 * Larder's engine: an off-heap cache whose keys, values and index live in native memory.
 * Exports the API package only; everything under {@code dev.larder.internal} is private.
 */
module dev.larder {
    exports dev.larder;
}
