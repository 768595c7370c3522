package ach;

/**
 * libach cannot be used: it was not found (the message names where it was
 * looked for and how to point the binding at it), could not be loaded, lacks a
 * function, or is a version this binding does not speak. Not an
 * {@link AchException}: no libach call was made.
 */
public class AchLibraryException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    AchLibraryException(String message) {
        super(message);
    }

    AchLibraryException(String message, Throwable cause) {
        super(message, cause);
    }
}
