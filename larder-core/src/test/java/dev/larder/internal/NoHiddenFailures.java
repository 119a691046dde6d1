package dev.larder.internal;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails every test during which the cache counted and logged a failure it survives (a maintenance
 * pass that threw, a ticker or codec that threw during one; {@link FailureLog}): such failures
 * reach no caller, so without this a test would pass over a bug they hide. Registered for every
 * test through {@code META-INF/services}; a test class that causes them on purpose says so with
 * {@link Expected}.
 */
public final class NoHiddenFailures implements BeforeEachCallback, AfterEachCallback {
    private static final ExtensionContext.Namespace NAMESPACE =
            ExtensionContext.Namespace.create(NoHiddenFailures.class);

    /** On a test class whose tests cause counted failures on purpose. */
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.TYPE)
    public @interface Expected {}

    @Override
    public void beforeEach(ExtensionContext context) {
        context.getStore(NAMESPACE).put("before", FailureLog.everywhere());
    }

    @Override
    public void afterEach(ExtensionContext context) {
        long before = context.getStore(NAMESPACE).get("before", Long.class);
        long failures = FailureLog.everywhere() - before;
        boolean expected = context.getRequiredTestClass().isAnnotationPresent(Expected.class);
        if (failures > 0 && !expected) {
            throw new AssertionError(failures + " failure(s) the cache survived but logged during this test (a"
                    + " maintenance pass, ticker or codec threw): see the log above");
        }
    }
}
