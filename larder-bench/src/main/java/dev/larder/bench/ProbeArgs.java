package dev.larder.bench;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/** The command lines of the plain-program probes: {@code --name value} pairs and bare flags. */
final class ProbeArgs {
    private ProbeArgs() {}

    /** Options by name (without the dashes); each of {@code flags} takes no value and maps to "true". */
    static Map<String, String> parse(String[] args, Set<String> flags) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument: " + a);
            }
            String key = a.substring(2);
            if (flags.contains(key)) {
                m.put(key, "true");
            } else if (i + 1 < args.length) {
                m.put(key, args[++i]);
            } else {
                throw new IllegalArgumentException("missing value for " + a);
            }
        }
        return m;
    }
}
