package ach;

/** The database cannot be opened or read: {@code ACH_STORAGE} (missing directory, already open, unreadable), {@code ACH_WRONG_KEY}, {@code ACH_KEY_FILE}. */
public class AchStorageException extends AchException {
    private static final long serialVersionUID = 1L;

    AchStorageException(int code, String resultName, String detail) {
        super(code, resultName, detail);
    }
}
