package ach;

/** An internal error of the library (a Rust panic) caught at the boundary ({@code ACH_PANIC}); nothing was done. Please report it. */
public class AchPanicException extends AchException {
    private static final long serialVersionUID = 1L;

    AchPanicException(int code, String resultName, String detail) {
        super(code, resultName, detail);
    }
}
