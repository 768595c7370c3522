package ach;

/**
 * Misuse or failure of libach, as opposed to an answer: a closed engine, bad
 * options, a request envelope the library refuses, a database that cannot be
 * opened. (A refused transaction is not one: it is a {@link Response} with its
 * status, 422 or 403, and the refusal in its body.)
 *
 * <p>Carries the {@link AchResult}, the C name of the code as libach's
 * {@code ach_result_name} gives it, and the detail {@code ach_last_error}
 * recorded for the failed call. Subclasses group the codes:
 * {@link AchClosedException}, {@link AchArgumentException},
 * {@link AchStorageException}, {@link AchPanicException}.
 */
public class AchException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final AchResult result;
    private final int code;
    private final String resultName;
    private final String detail;

    protected AchException(int code, String resultName, String detail) {
        super(resultName + (detail == null || detail.isEmpty() ? "" : ": " + detail));
        this.result = AchResult.of(code);
        this.code = code;
        this.resultName = resultName;
        this.detail = detail == null ? "" : detail;
    }

    /** The result as an enum ({@link AchResult#UNKNOWN} for a number this binding does not know). */
    public AchResult result() {
        return result;
    }

    /** The number libach answered. */
    public int code() {
        return code;
    }

    /** The C name of the result, from {@code ach_result_name}: {@code "ACH_CLOSED"}... */
    public String resultName() {
        return resultName;
    }

    /** The detail {@code ach_last_error} gave for the failed call (may be empty). */
    public String detail() {
        return detail;
    }

    /** The exception for a failure code: the subclass that groups it. */
    static AchException of(int code, String resultName, String detail) {
        return switch (AchResult.of(code)) {
            case CLOSED, UNKNOWN_HANDLE -> new AchClosedException(code, resultName, detail);
            case INVALID_ARGUMENT, NULL_POINTER, INVALID_UTF8, INVALID_JSON ->
                    new AchArgumentException(code, resultName, detail);
            case STORAGE, WRONG_KEY, KEY_FILE -> new AchStorageException(code, resultName, detail);
            case PANIC -> new AchPanicException(code, resultName, detail);
            default -> new AchException(code, resultName, detail);
        };
    }
}
