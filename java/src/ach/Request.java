package ach;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * One request to an {@link Engine}, as the HTTPS API would receive it: the
 * envelope {@code {"method","path","query","api_key","idempotency_key","body"}}
 * of {@code ach_engine_request}. Immutable; the {@code with}-style methods
 * ({@link #query(Object)}, {@link #apiKey(String)}...) answer a copy.
 *
 * <ul>
 *   <li>{@code path}: {@code "/transactions"}, possibly with its {@code ?query};
 *   <li>{@code query}: null, a query string ({@code "partner_id=par_..."}) or a
 *       {@code Map<String, String>};
 *   <li>{@code apiKey}: the Basic-auth user name (a partner's, a merchant's or
 *       the operator's key), or null;
 *   <li>{@code idempotencyKey}: the {@code Idempotency-Key} header, or null;
 *   <li>{@code body}: null (none); a {@code Map}, {@code List} or other JSON value
 *       ({@link Json#write}) sent as JSON; or a {@code String}, sent as the raw
 *       text of the body (the engine parses it, exactly as the HTTPS server would).
 * </ul>
 */
public record Request(String method, String path, Object query, String apiKey, String idempotencyKey, Object body) {
    /** Checks the method, the path and the query's type. */
    public Request {
        Objects.requireNonNull(method, "method");
        Objects.requireNonNull(path, "path");
        if (query != null && !(query instanceof String) && !(query instanceof Map)) {
            throw new IllegalArgumentException("a query is a String or a Map<String, String>, not " + query.getClass().getName());
        }
    }

    /** A request with a method and a path, nothing else. */
    public static Request of(String method, String path) {
        return new Request(method, path, null, null, null, null);
    }

    /** {@code GET path}. */
    public static Request get(String path) {
        return of("GET", path);
    }

    /** {@code POST path}. */
    public static Request post(String path) {
        return of("POST", path);
    }

    /** {@code PUT path}. */
    public static Request put(String path) {
        return of("PUT", path);
    }

    /** {@code DELETE path}. */
    public static Request delete(String path) {
        return of("DELETE", path);
    }

    /** This request with a query (a String or a {@code Map<String, String>}). */
    public Request query(Object query) {
        return new Request(method, path, query, apiKey, idempotencyKey, body);
    }

    /** This request with an API key. */
    public Request apiKey(String apiKey) {
        return new Request(method, path, query, apiKey, idempotencyKey, body);
    }

    /** This request with an {@code Idempotency-Key}. */
    public Request idempotencyKey(String idempotencyKey) {
        return new Request(method, path, query, apiKey, idempotencyKey, body);
    }

    /** This request with a body: a JSON value, or a String of raw text. */
    public Request body(Object body) {
        return new Request(method, path, query, apiKey, idempotencyKey, body);
    }

    /** The envelope's JSON text. */
    public String envelope() {
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("method", method);
        e.put("path", path);
        if (query != null) e.put("query", query);
        if (apiKey != null) e.put("api_key", apiKey);
        if (idempotencyKey != null) e.put("idempotency_key", idempotencyKey);
        if (body != null) e.put("body", body);
        return Json.write(e);
    }
}
