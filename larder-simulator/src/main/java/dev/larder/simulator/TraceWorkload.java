package dev.larder.simulator;

import dev.larder.simulator.trace.TraceCatalog.TraceFile;
import java.io.IOException;
import java.util.List;

/** A trace file as a workload: the same requests at every cache size. */
public record TraceWorkload(TraceFile trace) implements Workload {
    @Override
    public String name() {
        return trace.name();
    }

    @Override
    public String description() {
        return trace.path().getFileName() + " (" + trace.format().name().toLowerCase(java.util.Locale.ROOT)
                + " format)";
    }

    @Override
    public List<Integer> sizes() {
        return trace.sizes();
    }

    @Override
    public boolean sizeDependent() {
        return false;
    }

    @Override
    public boolean phaseChange() {
        return false;
    }

    @Override
    public Requests requests(int cacheSize, long limit) throws IOException {
        return Requests.single(trace.load(limit));
    }
}
