package ach;

/**
 * What a libach function answers ({@code enum AchResult} of {@code ach.h}). The
 * numbers are fixed by the library: never renumbered, new ones only added at the
 * end; a number this binding does not know is {@link #UNKNOWN}.
 */
public enum AchResult {
    /** Success. */
    OK(0),
    /** An argument the function does not accept (an unknown option member, a bad value...). */
    INVALID_ARGUMENT(1),
    /** A pointer argument was NULL. */
    NULL_POINTER(2),
    /** A string argument is not valid UTF-8. */
    INVALID_UTF8(3),
    /** A JSON argument (the options, the request envelope) is not well-formed JSON. */
    INVALID_JSON(4),
    /** The database could not be opened or read. */
    STORAGE(5),
    /** The engine was closed. */
    CLOSED(6),
    /** An internal error (a Rust panic) was caught at the boundary. */
    PANIC(7),
    /** The encryption key is not the database's. */
    WRONG_KEY(8),
    /** The engine handle was never issued in this process. */
    UNKNOWN_HANDLE(9),
    /** The key file ({@code <database>.key}) could not be read or created, or holds no key. */
    KEY_FILE(10),
    /** A number this binding does not know (a newer library). */
    UNKNOWN(-1);

    private final int code;

    AchResult(int code) {
        this.code = code;
    }

    /** The number libach answers for it (-1 for {@link #UNKNOWN}). */
    public int code() {
        return code;
    }

    /** The C name: {@code "ACH_OK"}, {@code "ACH_CLOSED"}... ({@code "ACH_UNKNOWN_RESULT"} for {@link #UNKNOWN}). */
    public String cName() {
        return this == UNKNOWN ? "ACH_UNKNOWN_RESULT" : "ACH_" + name();
    }

    private static final AchResult[] BY_CODE = {
        OK, INVALID_ARGUMENT, NULL_POINTER, INVALID_UTF8, INVALID_JSON, STORAGE, CLOSED, PANIC, WRONG_KEY,
        UNKNOWN_HANDLE, KEY_FILE
    };

    /** The result for a number libach answered (a {@code uint32_t}). */
    public static AchResult of(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : UNKNOWN;
    }
}
