package ach;

import static java.lang.foreign.ValueLayout.ADDRESS;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * An open engine ({@code AchEngine} of libach): a database, in a file or in
 * memory, with the service's rules, as one HTTPS server would hold it.
 *
 * <pre>{@code
 * try (Engine engine = Engine.open(Engine.Options.inMemory().sandbox(true).operatorKey("ok_..."))) {
 *     Response r = engine.request("POST", "/admin/partners", "ok_...", Map.of("name", "Acme Payments"));
 *     String key = r.string("payload", "api_key");
 * }
 * }</pre>
 *
 * <p>Answers, refusals included, are {@link Response}s. Misuse and failures
 * throw {@link AchException}s: {@link AchArgumentException} for bad options or
 * an envelope libach refuses, {@link AchStorageException} when the database
 * cannot be opened, {@link AchClosedException} for a request after
 * {@link #close()}.
 *
 * <p>Threads: any number of threads may share one engine and call
 * {@link #request} at once (libach serialises writes inside the engine and runs
 * reads concurrently); there is no lock on the Java side. {@link #close()} is
 * idempotent; calls in flight on other threads when it runs finish normally, and
 * later ones throw {@link AchClosedException}. An engine that becomes
 * unreachable without being closed is closed by a {@link Cleaner} (close it
 * yourself: a file database stays locked until then).
 */
public final class Engine implements AutoCloseable {
    private static final Cleaner CLEANER = Cleaner.create();

    private final MemorySegment handle;
    private final Cleaner.Cleanable cleanable;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final String where;

    private Engine(MemorySegment handle, String where) {
        this.handle = handle;
        this.where = where;
        this.cleanable = CLEANER.register(this, new CloseHandle(handle));
    }

    /** Closes a handle once: the Cleaner's action (it must not refer to the Engine). */
    private record CloseHandle(MemorySegment handle) implements Runnable {
        @Override
        public void run() {
            try {
                Native.CLOSE.invokeExact(handle);
            } catch (Throwable t) {
                throw Native.rethrow(t);
            }
        }
    }

    // ------------------------------------------------------------------
    // Opening

    /**
     * The options of {@code ach_engine_open}, as a builder: every one optional.
     * {@code Engine.Options.file(path).sandbox(true).start("2026-11-23T09:00:00-05:00").operatorKey(key)}.
     */
    public static final class Options {
        private Path path;
        private Boolean sandbox;
        private Object start;
        private String operatorKey;
        private String encryptionKey;

        private Options() {}

        /** A database in memory that disappears with the engine. */
        public static Options inMemory() {
            return new Options();
        }

        /** The database file, created if missing (with its key file {@code <path>.key} unless an encryption key is given). */
        public static Options file(Path path) {
            Options o = new Options();
            o.path = Objects.requireNonNull(path, "path");
            return o;
        }

        /** A sandbox ({@code true}): its clock moves only when the operator sets it ({@code POST /admin/clock}). */
        public Options sandbox(boolean sandbox) {
            this.sandbox = sandbox;
            return this;
        }

        /** A sandbox's first instant, RFC 3339 with an offset ({@code "2026-11-23T09:00:00-05:00"}). */
        public Options start(String rfc3339) {
            this.start = Objects.requireNonNull(rfc3339, "start");
            return this;
        }

        /** A sandbox's first instant, with its offset. */
        public Options start(OffsetDateTime start) {
            this.start = DateTimeFormatter.ISO_OFFSET_DATE_TIME.format(start);
            return this;
        }

        /** A sandbox's first instant (sent as milliseconds since 1970). */
        public Options start(Instant start) {
            this.start = BigInteger.valueOf(start.toEpochMilli());
            return this;
        }

        /** The operator's API key (partners, approvals, limits, returns, the routing directory, the sandbox clock). */
        public Options operatorKey(String operatorKey) {
            this.operatorKey = operatorKey;
            return this;
        }

        /** The key that seals account numbers at rest: 64 hex digits. */
        public Options encryptionKey(String encryptionKey) {
            this.encryptionKey = encryptionKey;
            return this;
        }

        /** The options as the JSON object {@code ach_engine_open} takes (members only for what was set). */
        public Map<String, Object> toMap() {
            Map<String, Object> m = new LinkedHashMap<>();
            if (path != null) m.put("path", path.toString());
            if (operatorKey != null) m.put("operator_key", operatorKey);
            if (sandbox != null) m.put("sandbox", sandbox);
            if (encryptionKey != null) m.put("encryption_key", encryptionKey);
            if (start != null) m.put("start", start);
            return m;
        }

        @Override
        public String toString() {
            Map<String, Object> m = toMap();
            if (m.containsKey("operator_key")) m.put("operator_key", "(set)");
            if (m.containsKey("encryption_key")) m.put("encryption_key", "(set)");
            return Json.write(m);
        }
    }

    /** Open an engine with these options. */
    public static Engine open(Options options) {
        Map<String, Object> m = options.toMap();
        return openJson(Json.write(m), options.path == null ? "in memory" : options.path.toString());
    }

    /**
     * Open an engine with options given as a JSON object ({@code path},
     * {@code operator_key}, {@code sandbox}, {@code encryption_key}, {@code start});
     * an unknown member or a bad value throws {@link AchArgumentException}.
     */
    public static Engine open(Map<String, ?> options) {
        Object path = options.get("path");
        return openJson(Json.write(options), path == null ? "in memory" : String.valueOf(path));
    }

    /** Open an engine with options given as JSON text. */
    public static Engine openJson(String optionsJson) {
        return openJson(optionsJson, "engine");
    }

    private static Engine openJson(String optionsJson, String where) {
        Objects.requireNonNull(optionsJson, "options");
        Native.check();
        byte[] options = optionsJson.getBytes(StandardCharsets.UTF_8);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(ADDRESS);
            MemorySegment text = arena.allocate(options.length + 1L);
            Native.putCString(text, 0, options);
            int r = (int) Native.OPEN.invokeExact(text, out);
            if (r != 0) throw Native.failure(r);
            return new Engine(out.get(ADDRESS, 0), where);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    // ------------------------------------------------------------------
    // Requests

    /**
     * Send a request ({@code body}: null, a JSON value, or a String of raw text;
     * see {@link Request}).
     */
    public Response request(String method, String path, String apiKey, Object body) {
        return request(new Request(method, path, null, apiKey, null, body));
    }

    /** Send a request. */
    public Response request(Request request) {
        return requestEnvelope(request.envelope().getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Send an envelope given as bytes, as a C host sends it: libach reads them up
     * to the first NUL byte, if any. For hosts that hold envelopes already, and for
     * tests: bytes that are not UTF-8 throw {@link AchArgumentException}
     * ({@code ACH_INVALID_UTF8}), bytes that are not JSON too ({@code ACH_INVALID_JSON}).
     */
    public Response requestEnvelope(byte[] envelope) {
        Objects.requireNonNull(envelope, "envelope");
        String answer;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment block = arena.allocate(Native.BUFFER_SIZE + envelope.length + 1, 8);
            MemorySegment out = block.asSlice(0, Native.BUFFER_SIZE);
            out.fill((byte) 0);
            Native.putCString(block, Native.BUFFER_SIZE, envelope);
            MemorySegment text = block.asSlice(Native.BUFFER_SIZE);
            try {
                int r = (int) Native.REQUEST.invokeExact(handle, text, out);
                if (r != 0) throw Native.failure(r);
                answer = Native.text(out);
            } finally {
                Native.free(out);
            }
        } catch (Throwable t) {
            throw Native.rethrow(t);
        } finally {
            // The Cleaner must not close the handle while a call is using it.
            Reference.reachabilityFence(this);
        }
        return Response.parse(answer);
    }

    // ------------------------------------------------------------------
    // Closing and the library

    /**
     * Close the engine: later requests throw {@link AchClosedException}; calls in
     * flight on other threads finish first, then the database closes (a file is
     * flushed and unlocked). Closing again does nothing.
     */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) cleanable.clean();
    }

    /** Whether {@link #close()} was called. */
    public boolean isClosed() {
        return closed.get();
    }

    @Override
    public String toString() {
        return "Engine[" + where + (closed.get() ? ", closed]" : "]");
    }

    /** The version of libach loaded ({@code ach_version}: {@code "0.1.0"}). */
    public static String libraryVersion() {
        return Native.version();
    }

    /** The file libach was loaded from. */
    public static Path libraryPath() {
        Native.check();
        return Native.LOADED_FROM;
    }
}
