package ach;

/** The engine was closed ({@code ACH_CLOSED}), or its handle is not one this process issued ({@code ACH_UNKNOWN_HANDLE}). */
public class AchClosedException extends AchException {
    private static final long serialVersionUID = 1L;

    AchClosedException(int code, String resultName, String detail) {
        super(code, resultName, detail);
    }
}
