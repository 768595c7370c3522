package ach;

import java.math.BigInteger;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The engine's answer to a {@link Request}: what the HTTPS API answers, byte for
 * byte. A refusal (422, 403, 401, 404...) is an answer like any other: data, not
 * an exception.
 *
 * @param status the HTTP status
 * @param body the body as JSON values ({@link Json#parse}: numbers are
 *     {@code BigInteger}/{@code BigDecimal}), or null when there is none
 * @param bodyText the body's JSON text exactly as libach wrote it (null when none)
 * @param headers the response headers libach reports ({@code Idempotent-Replayed}
 *     on the answer to an idempotent request made again); empty when none
 * @param raw the whole answer {@code {"body":...,"status":...}} as libach wrote it
 */
public record Response(int status, Object body, String bodyText, Map<String, String> headers, String raw) {
    /** Whether this is the stored answer to an idempotent request made again. */
    public boolean replayed() {
        return "true".equals(headers.get("Idempotent-Replayed"));
    }

    /** The body's value at a path of member names and array indexes ({@link Json#at}), or null. */
    public Object at(Object... path) {
        return Json.at(body, path);
    }

    /** The body's string at a path, or null when it is absent or not a string. */
    public String string(Object... path) {
        return at(path) instanceof String s ? s : null;
    }

    /** Parse libach's answer {@code {"body": ..., "headers": {...}, "status": N}}. */
    static Response parse(String answer) {
        Json.Parser p = new Json.Parser(answer, false);
        Integer status = null;
        Object body = null;
        String bodyText = null;
        Map<String, String> headers = Map.of();
        if (!p.consume('{')) throw p.error("an answer is a JSON object");
        if (!p.consume('}')) {
            do {
                String key = p.key();
                p.skipWs();
                int start = p.i;
                Object v = p.value();
                switch (key) {
                    case "status" -> {
                        if (!(v instanceof BigInteger n)) throw p.error("status is not an integer");
                        status = n.intValueExact();
                    }
                    case "body" -> {
                        body = v;
                        bodyText = answer.substring(start, p.i);
                    }
                    case "headers" -> {
                        Map<String, String> h = new LinkedHashMap<>();
                        if (v instanceof Map<?, ?> m) {
                            for (Map.Entry<?, ?> e : m.entrySet()) h.put((String) e.getKey(), String.valueOf(e.getValue()));
                        }
                        headers = Collections.unmodifiableMap(h);
                    }
                    default -> { /* a member a later libach adds: ignored */ }
                }
            } while (p.consume(','));
            if (!p.consume('}')) throw p.error("expected ',' or '}'");
        }
        p.skipWs();
        if (p.i != answer.length()) throw p.error("trailing characters after the answer");
        if (status == null) throw new IllegalStateException("libach answered without a status: " + answer);
        return new Response(status, body, bodyText, headers, answer);
    }
}
