package ach;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.io.File;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * libach through the Foreign Function & Memory API: finding and loading the
 * library, one downcall handle per C function, and the two disciplines every
 * call follows: an {@code AchBuffer} the library wrote is released with
 * {@code ach_buffer_free} exactly once (in a {@code finally}, so on every path;
 * a zeroed buffer is harmless to free, and libach writes its out-buffer only on
 * success), and a failure's detail is read with {@code ach_last_error} right
 * after the failed call, on the same thread, with no blocking in between.
 *
 * <p>Where libach is found, in order: the system property {@code ach.library.path}
 * (the path of the file), the environment variable {@code ACH_LIBRARY} (the
 * same), else {@code libach.so} ({@link System#mapLibraryName}) in a directory
 * of {@code java.library.path}. When none works, every use of the binding
 * throws an {@link AchLibraryException} saying what is missing.
 */
@SuppressWarnings("restricted")
final class Native {
    private Native() {}

    /** The version this binding was written against: {@code ACH_VERSION_MAJOR}.{@code ACH_VERSION_MINOR} of ach.h. */
    static final int MAJOR = 0, MINOR = 1;

    /** {@code struct AchBuffer { uint8_t *data; size_t len; }} on an LP64 platform. */
    static final StructLayout BUFFER = MemoryLayout.structLayout(ADDRESS.withName("data"), JAVA_LONG.withName("len"));

    static final long BUFFER_SIZE = BUFFER.byteSize();

    static final MethodHandle FREE, OPEN, REQUEST, CLOSE, LAST_ERROR, RESULT_NAME, TEST_PANIC, VALIDATE,
            VALIDATE_BYTES, VERSION;

    /** Where the library was loaded from (null when it was not). */
    static final Path LOADED_FROM;

    /** Why the library cannot be used, or null. */
    private static final AchLibraryException FAILURE;

    static {
        MethodHandle[] h = new MethodHandle[10];
        Path from = null;
        AchLibraryException failure = null;
        try {
            Linker linker = Linker.nativeLinker();
            if (ADDRESS.byteSize() != 8 || linker.canonicalLayouts().get("size_t").byteSize() != 8) {
                throw new AchLibraryException("the ach binding supports 64-bit platforms only");
            }
            from = locate();
            Arena global = Arena.global();
            java.lang.foreign.SymbolLookup lookup;
            try {
                lookup = java.lang.foreign.SymbolLookup.libraryLookup(from, global);
            } catch (IllegalArgumentException e) {
                throw new AchLibraryException("cannot load libach from " + from + ": " + e.getMessage(), e);
            }
            Path lib = from;
            class Downcall {
                MethodHandle of(String name, FunctionDescriptor d) {
                    MemorySegment symbol = lookup.find(name).orElseThrow(() -> new AchLibraryException(
                            lib + " has no function " + name + ": not libach, or an older one"));
                    return linker.downcallHandle(symbol, d);
                }
            }
            Downcall dc = new Downcall();
            h[0] = dc.of("ach_buffer_free", FunctionDescriptor.ofVoid(BUFFER));
            h[1] = dc.of("ach_engine_open", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
            h[2] = dc.of("ach_engine_request", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
            h[3] = dc.of("ach_engine_close", FunctionDescriptor.ofVoid(ADDRESS));
            h[4] = dc.of("ach_last_error", FunctionDescriptor.of(JAVA_INT, ADDRESS));
            h[5] = dc.of("ach_result_name", FunctionDescriptor.of(ADDRESS, JAVA_INT));
            h[6] = dc.of("ach_test_panic", FunctionDescriptor.of(JAVA_INT));
            h[7] = dc.of("ach_validate", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
            h[8] = dc.of("ach_validate_bytes", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS));
            h[9] = dc.of("ach_version", FunctionDescriptor.of(ADDRESS));
            String version = cString((MemorySegment) h[9].invokeExact());
            String[] parts = version.split("\\.");
            boolean speaks;
            try {
                speaks = parts.length >= 2 && Integer.parseInt(parts[0]) == MAJOR && Integer.parseInt(parts[1]) >= MINOR;
            } catch (NumberFormatException e) {
                speaks = false;
            }
            if (!speaks) {
                throw new AchLibraryException(from + " is libach " + version + "; this binding needs " + MAJOR + "."
                        + MINOR + " or a later " + MAJOR + ".x");
            }
        } catch (AchLibraryException e) {
            failure = e;
        } catch (IllegalCallerException e) {
            failure = new AchLibraryException("native access is not enabled for the ach binding: run java with "
                    + "--enable-native-access=ALL-UNNAMED (or the binding's module)", e);
        } catch (Throwable e) {
            failure = new AchLibraryException("cannot load libach" + (from == null ? "" : " from " + from) + ": " + e, e);
        }
        FREE = h[0];
        OPEN = h[1];
        REQUEST = h[2];
        CLOSE = h[3];
        LAST_ERROR = h[4];
        RESULT_NAME = h[5];
        TEST_PANIC = h[6];
        VALIDATE = h[7];
        VALIDATE_BYTES = h[8];
        VERSION = h[9];
        LOADED_FROM = failure == null ? from : null;
        FAILURE = failure;
    }

    /** Where libach is: the property, the variable, or java.library.path (see the class comment). */
    private static Path locate() {
        String name = System.mapLibraryName("ach");
        String property = System.getProperty("ach.library.path");
        if (property != null && !property.isBlank()) {
            return existing(Path.of(property), "the system property ach.library.path");
        }
        String variable = System.getenv("ACH_LIBRARY");
        if (variable != null && !variable.isBlank()) {
            return existing(Path.of(variable), "the environment variable ACH_LIBRARY");
        }
        List<String> searched = new ArrayList<>();
        for (String dir : System.getProperty("java.library.path", "").split(File.pathSeparator)) {
            if (dir.isEmpty()) continue;
            searched.add(dir);
            Path candidate = Path.of(dir, name);
            if (Files.isRegularFile(candidate)) return candidate.toAbsolutePath();
        }
        throw new AchLibraryException("libach not found: no " + name + " in java.library.path " + searched
                + ", and neither the system property ach.library.path nor the environment variable ACH_LIBRARY "
                + "names it. Build it with `cargo build -p ach-ffi` (target/debug/" + name + ") and pass "
                + "-Dach.library.path=/path/to/" + name + ", set ACH_LIBRARY, or add its directory to "
                + "-Djava.library.path");
    }

    private static Path existing(Path p, String source) {
        if (!Files.isRegularFile(p)) {
            throw new AchLibraryException("libach not found: " + source + " names " + p + ", which is not a file "
                    + "(build it with `cargo build -p ach-ffi`)");
        }
        return p.toAbsolutePath();
    }

    /** Throw the library's failure (a fresh exception, its cause the original) unless it loaded. */
    static void check() {
        if (FAILURE != null) throw new AchLibraryException(FAILURE.getMessage(), FAILURE);
    }

    // ------------------------------------------------------------------
    // Calls

    /** A NUL-terminated static string libach answered (never freed). */
    static String cString(MemorySegment p) {
        return p.equals(MemorySegment.NULL) ? "" : p.reinterpret(Long.MAX_VALUE).getString(0);
    }

    /** The text of an AchBuffer struct at {@code buffer} (UTF-8, without the final NUL). */
    static String text(MemorySegment buffer) {
        MemorySegment data = buffer.get(ADDRESS, 0);
        long len = buffer.get(JAVA_LONG, 8);
        if (data.equals(MemorySegment.NULL)) return "";
        if (len < 0 || len > Integer.MAX_VALUE - 16) throw new IllegalStateException("a libach buffer of " + len + " bytes");
        byte[] bytes = new byte[(int) len];
        MemorySegment.copy(data.reinterpret(len), JAVA_BYTE, 0, bytes, 0, (int) len);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /** ach_buffer_free of the AchBuffer struct at {@code buffer} (zeroed: nothing happens). */
    static void free(MemorySegment buffer) {
        try {
            FREE.invokeExact(buffer);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** The calling thread's last failure detail (ach_last_error; its buffer freed). */
    static String lastError() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(BUFFER);
            try {
                int r = (int) LAST_ERROR.invokeExact(out);
                return r == 0 ? text(out) : "(ach_last_error answered " + r + ")";
            } finally {
                free(out);
            }
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** ach_result_name. */
    static String resultName(int code) {
        try {
            return cString((MemorySegment) RESULT_NAME.invokeExact(code));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /**
     * The exception for a failed call: to be called right after it, on its thread
     * (the detail is the thread's last error, read first).
     */
    static AchException failure(int code) {
        String detail = lastError();
        return AchException.of(code, resultName(code), detail);
    }

    /** ach_version. */
    static String version() {
        check();
        try {
            return cString((MemorySegment) VERSION.invokeExact());
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** ach_test_panic: throws the {@link AchPanicException} it answers. */
    static void testPanic() {
        check();
        int r;
        try {
            r = (int) TEST_PANIC.invokeExact();
        } catch (Throwable t) {
            throw rethrow(t);
        }
        if (r != 0) throw failure(r);
    }

    static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) throw r;
        if (t instanceof Error e) throw e;
        throw new IllegalStateException(t);
    }

    /** A copy of {@code bytes} followed by a NUL, at {@code offset} of {@code segment}. */
    static void putCString(MemorySegment segment, long offset, byte[] bytes) {
        MemorySegment.copy(bytes, 0, segment, JAVA_BYTE, offset, bytes.length);
        segment.set(JAVA_BYTE, offset + bytes.length, (byte) 0);
    }
}
