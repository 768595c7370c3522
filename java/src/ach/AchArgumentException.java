package ach;

/** An argument libach refuses: {@code ACH_INVALID_ARGUMENT} (an unknown option or envelope member, a bad value, an unknown validation kind), {@code ACH_INVALID_JSON}, {@code ACH_INVALID_UTF8}, {@code ACH_NULL_POINTER}. */
public class AchArgumentException extends AchException {
    private static final long serialVersionUID = 1L;

    AchArgumentException(int code, String resultName, String detail) {
        super(code, resultName, detail);
    }
}
