package ach;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small, strict JSON (RFC 8259) reader and writer for the binding: no
 * third-party library.
 *
 * <p>Values are plain Java objects: objects are {@code Map<String, Object>}
 * (a {@link LinkedHashMap}, members in document order; a repeated name keeps
 * the last value, as serde_json does), arrays {@code List<Object>}, strings
 * {@link String}, {@code true}/{@code false} {@link Boolean}, {@code null}
 * {@code null}. Numbers never pass through a {@code double}: {@link #parse}
 * answers a {@link BigInteger} for an integer literal and a {@link BigDecimal}
 * (its scale kept: {@code 88.20} stays {@code 88.20}) for one with a fraction or
 * an exponent; {@link #parseExact} keeps every number as its literal text
 * ({@link NumberText}).
 *
 * <p>{@link #write} accepts those types, plus {@link Collection}s, arrays of
 * objects, {@link CharSequence}s, {@link Integer}/{@link Long}/{@link Short}/
 * {@link Byte}, {@link BigInteger}, {@link BigDecimal} and {@link NumberText}
 * (written verbatim). {@link Double} and {@link Float} are refused: money must
 * never pass through binary floating point; use {@code new BigDecimal("85.5")}.
 *
 * <p>The reader is iterative: any depth of nesting is read without a stack
 * overflow. The writer refuses values nested deeper than {@value #MAX_WRITE_DEPTH}
 * levels (a cycle, most likely; the engine itself refuses JSON nested deeper
 * than 128).
 */
public final class Json {
    private Json() {}

    /** How deep {@link #write} goes before refusing the value (a cycle?). */
    public static final int MAX_WRITE_DEPTH = 1000;

    /** A JSON text that is not well-formed; {@link #offset()} is where reading stopped. */
    public static final class ParseException extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;
        private final int offset;

        ParseException(String message, int offset) {
            super(message + " at offset " + offset);
            this.offset = offset;
        }

        /** The character offset where the text went wrong. */
        public int offset() {
            return offset;
        }
    }

    /**
     * A JSON number kept as the literal text it was written with ({@code -0},
     * {@code 1E2}, {@code 1200.000}): what {@link #parseExact} answers for numbers,
     * and what {@link #write} writes verbatim.
     */
    public record NumberText(String text) {
        /** Checks {@code text} is a JSON number literal. */
        public NumberText {
            if (text == null || numberEnd(text, 0) != text.length()) {
                throw new IllegalArgumentException("not a JSON number: " + text);
            }
        }

        /** The exact value (throws {@link NumberFormatException} for an exponent beyond an int). */
        public BigDecimal toBigDecimal() {
            return new BigDecimal(text);
        }

        @Override
        public String toString() {
            return text;
        }
    }

    // ------------------------------------------------------------------
    // Reading

    /** Parse a JSON text; numbers become {@link BigInteger} or {@link BigDecimal}. */
    public static Object parse(String text) {
        return new Parser(text, false).document();
    }

    /** Parse a JSON text; numbers stay their literal text ({@link NumberText}). */
    public static Object parseExact(String text) {
        return new Parser(text, true).document();
    }

    /** The value at a path of member names (String) and array indexes (Integer), or null. */
    public static Object at(Object root, Object... path) {
        Object at = root;
        for (Object step : path) {
            if (at instanceof Map<?, ?> m && step instanceof String k) {
                at = m.get(k);
            } else if (at instanceof List<?> l && step instanceof Integer i) {
                at = i >= 0 && i < l.size() ? l.get(i) : null;
            } else {
                return null;
            }
        }
        return at;
    }

    static final class Parser {
        private final String s;
        private final boolean exact;
        int i;

        Parser(String s, boolean exact) {
            if (s == null) throw new NullPointerException("JSON text is null");
            this.s = s;
            this.exact = exact;
        }

        Object document() {
            skipWs();
            Object v = value();
            skipWs();
            if (i != s.length()) throw error("trailing characters after the JSON value");
            return v;
        }

        /** Skip white space; if the next character is {@code c}, step over it and answer true. */
        boolean consume(char c) {
            skipWs();
            if (i < s.length() && s.charAt(i) == c) {
                i++;
                return true;
            }
            return false;
        }

        ParseException error(String what) {
            return new ParseException(what, i);
        }

        void skipWs() {
            int n = s.length();
            while (i < n) {
                char c = s.charAt(i);
                if (c == ' ' || c == '\n' || c == '\r' || c == '\t') i++;
                else break;
            }
        }

        /** Read one value (any depth, without recursion). */
        @SuppressWarnings("unchecked")
        Object value() {
            ArrayDeque<Object> containers = new ArrayDeque<>();
            ArrayDeque<String> keys = new ArrayDeque<>();
            for (;;) {
                skipWs();
                if (i >= s.length()) throw error("unexpected end of JSON");
                char c = s.charAt(i);
                Object v;
                if (c == '{') {
                    i++;
                    skipWs();
                    if (i < s.length() && s.charAt(i) == '}') {
                        i++;
                        v = new LinkedHashMap<String, Object>();
                    } else {
                        containers.push(new LinkedHashMap<String, Object>());
                        keys.push(key());
                        continue;
                    }
                } else if (c == '[') {
                    i++;
                    skipWs();
                    if (i < s.length() && s.charAt(i) == ']') {
                        i++;
                        v = new ArrayList<Object>();
                    } else {
                        containers.push(new ArrayList<Object>());
                        continue;
                    }
                } else {
                    v = scalar(c);
                }
                // Attach v to its container; close every container that ends here.
                for (;;) {
                    if (containers.isEmpty()) return v;
                    Object top = containers.peek();
                    boolean object = top instanceof Map;
                    if (object) ((Map<String, Object>) top).put(keys.pop(), v);
                    else ((List<Object>) top).add(v);
                    skipWs();
                    if (i >= s.length()) throw error("unexpected end of JSON");
                    char d = s.charAt(i++);
                    if (d == ',') {
                        if (object) keys.push(key());
                        break;
                    }
                    if (d == (object ? '}' : ']')) {
                        v = containers.pop();
                        continue;
                    }
                    i--;
                    throw error(object ? "expected ',' or '}'" : "expected ',' or ']'");
                }
            }
        }

        String key() {
            skipWs();
            if (i >= s.length() || s.charAt(i) != '"') throw error("expected a member name");
            String k = string();
            skipWs();
            if (i >= s.length() || s.charAt(i) != ':') throw error("expected ':'");
            i++;
            return k;
        }

        private Object scalar(char c) {
            switch (c) {
                case '"':
                    return string();
                case 't':
                    return literal("true", Boolean.TRUE);
                case 'f':
                    return literal("false", Boolean.FALSE);
                case 'n':
                    return literal("null", null);
                default:
                    if (c == '-' || (c >= '0' && c <= '9')) return number();
                    throw error("unexpected character '" + c + "'");
            }
        }

        private Object literal(String word, Object v) {
            if (!s.startsWith(word, i)) throw error("expected " + word);
            i += word.length();
            return v;
        }

        private Object number() {
            int start = i;
            int end = numberEnd(s, start);
            if (end < 0) {
                i = ~end;
                throw error("malformed number");
            }
            i = end;
            String text = s.substring(start, end);
            if (exact) return new NumberText(text);
            boolean integer = true;
            for (int k = 0; k < text.length(); k++) {
                char d = text.charAt(k);
                if (d == '.' || d == 'e' || d == 'E') {
                    integer = false;
                    break;
                }
            }
            try {
                if (integer) {
                    return text.length() <= 18 ? BigInteger.valueOf(Long.parseLong(text)) : new BigInteger(text);
                }
                return new BigDecimal(text);
            } catch (NumberFormatException | ArithmeticException e) {
                i = start;
                throw error("number out of range (use parseExact): " + abbreviate(text));
            }
        }

        private String string() {
            int start = ++i; // past the opening quote
            int n = s.length();
            // Fast path: no escape, no control character.
            for (int k = start; k < n; k++) {
                char c = s.charAt(k);
                if (c == '"') {
                    i = k + 1;
                    return s.substring(start, k);
                }
                if (c == '\\' || c < 0x20) break;
            }
            StringBuilder b = new StringBuilder();
            while (true) {
                if (i >= n) throw error("unterminated string");
                char c = s.charAt(i++);
                if (c == '"') return b.toString();
                if (c < 0x20) {
                    i--;
                    throw error("control character in a string");
                }
                if (c != '\\') {
                    b.append(c);
                    continue;
                }
                if (i >= n) throw error("unterminated string");
                char e = s.charAt(i++);
                switch (e) {
                    case '"' -> b.append('"');
                    case '\\' -> b.append('\\');
                    case '/' -> b.append('/');
                    case 'b' -> b.append('\b');
                    case 'f' -> b.append('\f');
                    case 'n' -> b.append('\n');
                    case 'r' -> b.append('\r');
                    case 't' -> b.append('\t');
                    case 'u' -> {
                        if (i + 4 > n) throw error("short \\u escape");
                        int v = 0;
                        for (int k = 0; k < 4; k++) {
                            int h = Character.digit(s.charAt(i + k), 16);
                            if (h < 0) throw error("bad \\u escape");
                            v = v * 16 + h;
                        }
                        i += 4;
                        b.append((char) v);
                    }
                    default -> {
                        i--;
                        throw error("bad escape '\\" + e + "'");
                    }
                }
            }
        }
    }

    /**
     * The end of the JSON number starting at {@code start} in {@code s}, or {@code ~offset}
     * (always negative) of the first character that does not fit.
     */
    static int numberEnd(CharSequence s, int start) {
        int n = s.length(), i = start;
        if (i < n && s.charAt(i) == '-') i++;
        if (i >= n) return ~i;
        char c = s.charAt(i);
        if (c == '0') {
            i++;
        } else if (c >= '1' && c <= '9') {
            while (i < n && isDigit(s.charAt(i))) i++;
        } else {
            return ~i;
        }
        if (i < n && s.charAt(i) == '.') {
            i++;
            if (i >= n || !isDigit(s.charAt(i))) return ~i;
            while (i < n && isDigit(s.charAt(i))) i++;
        }
        if (i < n && (s.charAt(i) == 'e' || s.charAt(i) == 'E')) {
            i++;
            if (i < n && (s.charAt(i) == '+' || s.charAt(i) == '-')) i++;
            if (i >= n || !isDigit(s.charAt(i))) return ~i;
            while (i < n && isDigit(s.charAt(i))) i++;
        }
        return i;
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    private static String abbreviate(String text) {
        return text.length() <= 40 ? text : text.substring(0, 37) + "...";
    }

    // ------------------------------------------------------------------
    // Writing

    /** The compact JSON text of a value (see the class comment for the types accepted). */
    public static String write(Object value) {
        StringBuilder b = new StringBuilder();
        write(b, value, 0);
        return b.toString();
    }

    /** Append the compact JSON text of a value to {@code b}. */
    public static void write(StringBuilder b, Object value) {
        write(b, value, 0);
    }

    private static void write(StringBuilder b, Object v, int depth) {
        if (depth > MAX_WRITE_DEPTH) {
            throw new IllegalArgumentException("a value nested deeper than " + MAX_WRITE_DEPTH + " levels (a cycle?)");
        }
        if (v == null) {
            b.append("null");
        } else if (v instanceof CharSequence cs) {
            writeString(b, cs);
        } else if (v instanceof Boolean bool) {
            b.append(bool.booleanValue() ? "true" : "false");
        } else if (v instanceof Map<?, ?> m) {
            b.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : m.entrySet()) {
                if (!(e.getKey() instanceof String k)) {
                    throw new IllegalArgumentException("a JSON object's member names are strings, not " + describe(e.getKey()));
                }
                if (!first) b.append(',');
                first = false;
                writeString(b, k);
                b.append(':');
                write(b, e.getValue(), depth + 1);
            }
            b.append('}');
        } else if (v instanceof Collection<?> c) {
            b.append('[');
            boolean first = true;
            for (Object x : c) {
                if (!first) b.append(',');
                first = false;
                write(b, x, depth + 1);
            }
            b.append(']');
        } else if (v instanceof Object[] a) {
            write(b, java.util.Arrays.asList(a), depth);
        } else if (v instanceof NumberText n) {
            b.append(n.text());
        } else if (v instanceof BigDecimal d) {
            b.append(d.toString()); // e.g. 125.50, 1E+3: JSON number grammar either way
        } else if (v instanceof BigInteger || v instanceof Integer || v instanceof Long || v instanceof Short
                || v instanceof Byte) {
            b.append(v.toString());
        } else if (v instanceof Character ch) {
            writeString(b, String.valueOf(ch));
        } else if (v instanceof Double || v instanceof Float) {
            throw new IllegalArgumentException(
                    "refusing to write the binary floating-point number " + v + ": use a BigDecimal (money never passes through a double)");
        } else {
            throw new IllegalArgumentException("cannot write " + describe(v) + " as JSON");
        }
    }

    private static String describe(Object o) {
        return o == null ? "null" : o.getClass().getName();
    }

    /**
     * A JSON string: {@code "} and {@code \} escaped, control characters as
     * {@code \n}-style or {@code \}{@code u00XX} escapes, a lone surrogate as its
     * {@code \}{@code uXXXX} escape (it has no UTF-8 form), everything else as is.
     */
    static void writeString(StringBuilder b, CharSequence s) {
        int n = s.length();
        int k = 0;
        for (; k < n; k++) { // fast path: nothing to escape
            char c = s.charAt(k);
            if (c == '"' || c == '\\' || c < 0x20 || Character.isSurrogate(c)) break;
        }
        b.append('"');
        if (k == n) {
            b.append(s);
            b.append('"');
            return;
        }
        b.append(s, 0, k);
        for (; k < n; k++) {
            char c = s.charAt(k);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                case '\b' -> b.append("\\b");
                case '\f' -> b.append("\\f");
                default -> {
                    if (c < 0x20) {
                        unicodeEscape(b, c);
                    } else if (Character.isHighSurrogate(c) && k + 1 < n && Character.isLowSurrogate(s.charAt(k + 1))) {
                        b.append(c).append(s.charAt(++k));
                    } else if (Character.isSurrogate(c)) {
                        unicodeEscape(b, c);
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        b.append('"');
    }

    private static void unicodeEscape(StringBuilder b, char c) {
        b.append("\\u");
        String hex = Integer.toHexString(c);
        for (int p = hex.length(); p < 4; p++) b.append('0');
        b.append(hex);
    }
}
