package ach;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Validation of a request body against every rule of the service, without an
 * engine or a database: {@code ach_validate} / {@code ach_validate_bytes}, whose
 * verdict is exactly the line {@code achd validate} prints.
 *
 * <p>libach knows three kinds: {@code "transaction"}, {@code "customer"},
 * {@code "merchant"} (another kind throws {@link AchArgumentException}). A body
 * that breaks the rules, or is not JSON at all, is a verdict with
 * {@code valid == false}, never an exception. Dates are checked against today in
 * US Eastern time by the system clock, routing numbers against the library's
 * embedded routing directory. Safe from any number of threads at once.
 */
@SuppressWarnings("restricted")
public final class Validation {
    private Validation() {}

    /** The kinds libach validates. */
    public static final String TRANSACTION = "transaction", CUSTOMER = "customer", MERCHANT = "merchant";

    /** One problem of a verdict: the body's member ({@code "customer/routing_number"}), a code, a message. */
    public record Problem(String field, String code, String message) {}

    /**
     * A verdict: {@code valid}; the refusal's {@code message} (the spec's text, or
     * null when valid); the {@code errors}, in the library's order; and {@code json},
     * the verdict's own JSON text as libach wrote it (without its final newline).
     */
    public record Result(boolean valid, String message, List<Problem> errors, String json) {}

    /** The verdict line of a valid body, and its Result (the common answer, recognised without parsing). */
    private static final String VALID_LINE = "{\"valid\":true,\"message\":null,\"errors\":[]}\n";

    private static final Result VALID = new Result(true, null, List.of(), VALID_LINE.substring(0, VALID_LINE.length() - 1));

    private static final Arena KINDS = Arena.global();
    private static final MemorySegment VALID_C = KINDS.allocateFrom(VALID_LINE);
    private static final MemorySegment TRANSACTION_C = KINDS.allocateFrom(TRANSACTION);
    private static final MemorySegment CUSTOMER_C = KINDS.allocateFrom(CUSTOMER);
    private static final MemorySegment MERCHANT_C = KINDS.allocateFrom(MERCHANT);

    /** Validate a transaction body (JSON text). */
    public static Result validateTransaction(String json) {
        return validate(TRANSACTION, json);
    }

    /** Validate a transaction body given as a JSON value ({@link Json#write}). */
    public static Result validateTransaction(Map<String, ?> body) {
        return validate(TRANSACTION, Json.write(body));
    }

    /** Validate a customer body (JSON text). */
    public static Result validateCustomer(String json) {
        return validate(CUSTOMER, json);
    }

    /** Validate a customer body given as a JSON value. */
    public static Result validateCustomer(Map<String, ?> body) {
        return validate(CUSTOMER, Json.write(body));
    }

    /** Validate a merchant application (JSON text). */
    public static Result validateMerchant(String json) {
        return validate(MERCHANT, json);
    }

    /** Validate a merchant application given as a JSON value. */
    public static Result validateMerchant(Map<String, ?> body) {
        return validate(MERCHANT, Json.write(body));
    }

    /**
     * Validate a routing number: its format, its check digit, and its presence in
     * the embedded routing directory.
     *
     * <p>libach has no {@code routing} kind, so this validates a fixed, otherwise
     * valid customer body carrying {@code routingNumber}: the verdict is that
     * customer's, and speaks only of {@code routing_number} (a problem of any other
     * member throws {@link IllegalStateException}: the fixed body no longer
     * passes the library's rules).
     */
    public static Result validateRouting(String routingNumber) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("partner_id", "par_0123456789abcdefghijKL");
        body.put("merchant_id", "global");
        body.put("name", "Routing Check");
        body.put("routing_number", routingNumber);
        body.put("account_number", "000123456");
        body.put("account_type", "checking");
        Result r = validate(CUSTOMER, Json.write(body));
        for (Problem p : r.errors()) {
            if (!"routing_number".equals(p.field())) {
                throw new IllegalStateException("validateRouting's fixed customer body is refused for "
                        + p.field() + ": " + r.json());
            }
        }
        return r;
    }

    /**
     * Validate a body of {@code kind} given as text. The text is passed as UTF-8,
     * through {@code ach_validate}, or through {@code ach_validate_bytes} when it
     * holds a NUL or a lone surrogate (which has no UTF-8 form: it is passed as
     * its three-byte surrogate encoding, which is not UTF-8, and judged as such).
     */
    public static Result validate(String kind, String json) {
        if (json == null) throw new NullPointerException("json");
        byte[] utf8 = json.getBytes(StandardCharsets.UTF_8);
        // getBytes writes '?' for a lone surrogate: the text is UTF-8 exactly when it decodes back to itself.
        boolean lossless = new String(utf8, StandardCharsets.UTF_8).equals(json);
        if (lossless && json.indexOf('\0') < 0) return result(call(kind, utf8, true));
        return result(call(kind, lossless ? utf8 : wtf8(json), false));
    }

    /** Validate a body of {@code kind} given as a JSON value ({@link Json#write}). */
    public static Result validate(String kind, Map<String, ?> body) {
        return validate(kind, Json.write(body));
    }

    /**
     * Validate a body given as bytes ({@code ach_validate_bytes}): NUL bytes and
     * invalid UTF-8 are allowed, and judged as {@code achd validate} judges a file
     * holding them (a verdict with code {@code invalid_json}).
     */
    public static Result validateBytes(String kind, byte[] body) {
        if (body == null) throw new NullPointerException("body");
        return result(call(kind, body, false));
    }

    /** The verdict line libach wrote for a text body, as is (with its final newline). */
    public static String verdictLine(String kind, String json) {
        return validate(kind, json).json() + "\n";
    }

    private static MemorySegment knownKind(String kind) {
        return switch (kind) {
            case TRANSACTION -> TRANSACTION_C;
            case CUSTOMER -> CUSTOMER_C;
            case MERCHANT -> MERCHANT_C;
            default -> null;
        };
    }

    /** One call: the body and the out-buffer in one allocation of a confined arena; the buffer always freed. */
    private static String call(String kind, byte[] body, boolean cString) {
        if (kind == null) throw new NullPointerException("kind");
        Native.check();
        MemorySegment k = knownKind(kind);
        try (Arena arena = Arena.ofConfined()) {
            if (k == null) {
                if (kind.indexOf('\0') >= 0) throw new IllegalArgumentException("a validation kind holds a NUL");
                k = arena.allocateFrom(kind);
            }
            long size = Native.BUFFER_SIZE + body.length + 1;
            MemorySegment block = arena.allocate(size, 8);
            MemorySegment out = block.asSlice(0, Native.BUFFER_SIZE);
            out.fill((byte) 0);
            Native.putCString(block, Native.BUFFER_SIZE, body);
            MemorySegment data = block.asSlice(Native.BUFFER_SIZE);
            try {
                int r = cString
                        ? (int) Native.VALIDATE.invokeExact(k, data, out)
                        : (int) Native.VALIDATE_BYTES.invokeExact(k, data, (long) body.length, out);
                if (r != 0) throw Native.failure(r);
                return isValidLine(out) ? VALID_LINE : Native.text(out);
            } finally {
                Native.free(out);
            }
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** Whether the AchBuffer at {@code out} holds the valid verdict's line. */
    private static boolean isValidLine(MemorySegment out) {
        long len = out.get(java.lang.foreign.ValueLayout.JAVA_LONG, 8);
        long n = VALID_LINE.length();
        if (len != n) return false;
        MemorySegment data = out.get(java.lang.foreign.ValueLayout.ADDRESS, 0);
        return !data.equals(MemorySegment.NULL) && MemorySegment.mismatch(data.reinterpret(n), 0, n, VALID_C, 0, n) < 0;
    }

    private static Result result(String line) {
        if (line == VALID_LINE) return VALID;
        String json = line.endsWith("\n") ? line.substring(0, line.length() - 1) : line;
        if (!(Json.parse(json) instanceof Map<?, ?> v) || !(v.get("valid") instanceof Boolean valid)
                || !(v.get("errors") instanceof List<?> list)) {
            throw new IllegalStateException("libach answered a verdict of an unknown shape: " + json);
        }
        List<Problem> errors = new ArrayList<>(list.size());
        for (Object o : list) {
            Map<?, ?> p = (Map<?, ?>) o;
            errors.add(new Problem((String) p.get("field"), (String) p.get("code"), (String) p.get("message")));
        }
        return new Result(valid, (String) v.get("message"), Collections.unmodifiableList(errors), json);
    }

    /** UTF-8, except that a lone surrogate is written as its three bytes (not UTF-8: judged as such). */
    static byte[] wtf8(String s) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(s.length() + 16);
        for (int k = 0; k < s.length(); k++) {
            char c = s.charAt(k);
            int cp = c;
            if (Character.isHighSurrogate(c) && k + 1 < s.length() && Character.isLowSurrogate(s.charAt(k + 1))) {
                cp = Character.toCodePoint(c, s.charAt(++k));
            }
            if (cp < 0x80) {
                out.write(cp);
            } else if (cp < 0x800) {
                out.write(0xC0 | cp >> 6);
                out.write(0x80 | cp & 0x3F);
            } else if (cp < 0x10000) {
                out.write(0xE0 | cp >> 12);
                out.write(0x80 | cp >> 6 & 0x3F);
                out.write(0x80 | cp & 0x3F);
            } else {
                out.write(0xF0 | cp >> 18);
                out.write(0x80 | cp >> 12 & 0x3F);
                out.write(0x80 | cp >> 6 & 0x3F);
                out.write(0x80 | cp & 0x3F);
            }
        }
        return out.toByteArray();
    }
}
