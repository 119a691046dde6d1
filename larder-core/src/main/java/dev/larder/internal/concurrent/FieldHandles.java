package dev.larder.internal.concurrent;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/** Variable handles on a class's own fields, for its static initializer. */
public final class FieldHandles {
    private FieldHandles() {}

    /**
     * The handle on the field {@code name} of type {@code type} declared by {@code lookup}'s class
     * (pass {@code MethodHandles.lookup()}); a missing field is a bug, thrown as an initializer
     * error.
     */
    public static VarHandle of(MethodHandles.Lookup lookup, String name, Class<?> type) {
        try {
            return lookup.findVarHandle(lookup.lookupClass(), name, type);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
}
