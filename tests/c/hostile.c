/*
 * Hostile input through the C ABI itself: the router-level table of
 * tests/tests/hostile.rs, as a C host sends it (NUL-terminated envelopes into
 * ach_engine_request, AchBuffers out and freed), plus what only C can do: NULL
 * for every pointer argument; forged, closed, zero and maximal handles; invalid
 * UTF-8 bytes; envelopes cut short by an embedded NUL; envelopes nested 100,000
 * levels deep; and threads misusing one handle (closing it, twice, while others
 * send hostile requests).
 *
 * Each row is answered with its result code (then *out is left untouched and
 * ach_last_error names the argument), or ACH_OK and the router's refusal: the
 * status and the JSON envelope with a catalogue message (exactly
 * "Authentication failed." for a 401), never a reflection of a large input.
 * After every row nothing was stored: neither partner's status-changes feed nor
 * either merchant's events feed moved (read through the same handle, which so
 * also shows the handle still answers normal requests). At the end the database
 * file is reopened: the feeds still have not moved, and the usage counters are
 * where the set-up left them (each partner has room for exactly one more debit,
 * then its merchant's daily count refuses, message 22, then the partner's overall
 * daily count, message 24).
 *
 * Built twice by tests/c/run.sh (libach.a and libach.so) and run under valgrind.
 * Usage: hostile [TMPDIR]   (default /tmp), from the repository root (it reads
 * the corpus's catalogue). Exit 0 when every check passes.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"

#define OPERATOR_KEY "ok_c_hostile_operator_key_0123456789abcdef"
#define START "2026-11-23T10:00:00-05:00"
#define MB (1024u * 1024u)

/* ------------------------------------------------------------------------ */
/* Growing strings (the envelopes reach 10 MB)                                */

struct text {
    char *p;
    size_t len, cap;
};

static void t_reserve(struct text *t, size_t more) {
    if (t->len + more + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 256;
        char *p;
        while (t->len + more + 1 > cap) cap *= 2;
        p = realloc(t->p, cap);
        if (p == NULL) {
            fprintf(stderr, "out of memory\n");
            exit(2);
        }
        t->p = p;
        t->cap = cap;
    }
}

static void t_addn(struct text *t, const char *s, size_t n) {
    t_reserve(t, n);
    memcpy(t->p + t->len, s, n);
    t->len += n;
    t->p[t->len] = '\0';
}

static void t_add(struct text *t, const char *s) { t_addn(t, s, strlen(s)); }

static void t_addf(struct text *t, const char *fmt, ...) {
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    t_reserve(t, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(t->p + t->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
}

static void t_repeat(struct text *t, const char *s, size_t times) {
    size_t n = strlen(s), i;
    t_reserve(t, n * times);
    for (i = 0; i < times; i++) {
        memcpy(t->p + t->len, s, n);
        t->len += n;
    }
    t->p[t->len] = '\0';
}

/* The string built so far (owned by the caller; free it). */
static char *t_take(struct text *t) {
    char *p;
    if (t->p == NULL) t_add(t, "");
    p = t->p;
    t->p = NULL;
    t->len = t->cap = 0;
    return p;
}

static char *repeat(const char *s, size_t times) {
    struct text t = {0};
    t_repeat(&t, s, times);
    return t_take(&t);
}

static char *format(const char *fmt, ...) {
    struct text t = {0};
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    t_reserve(&t, n < 0 ? 0 : (size_t)n);
    va_start(ap, fmt);
    vsnprintf(t.p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    t.len = (size_t)n;
    return t_take(&t);
}

/* `s` with every `from` replaced by `to` (new string). */
static char *replace_all(const char *s, const char *from, const char *to) {
    struct text t = {0};
    size_t n = strlen(from);
    const char *at;
    while ((at = strstr(s, from)) != NULL) {
        t_addn(&t, s, (size_t)(at - s));
        t_add(&t, to);
        s = at + n;
    }
    t_add(&t, s);
    return t_take(&t);
}

/* ------------------------------------------------------------------------ */
/* Envelopes                                                                  */

/* A request as the envelope carries it. Every member is inserted verbatim (so it
 * is already JSON text inside the quotes: `\u0000` is a NUL); NULL leaves it out.
 * `body` is a JSON value; `text` a body of raw text (inserted as a JSON string). */
struct req {
    const char *method, *path, *query, *key, *idem, *body, *text;
};

static char *envelope(struct req r) {
    struct text t = {0};
    t_add(&t, "{\"method\":\"");
    t_add(&t, r.method ? r.method : "GET");
    t_add(&t, "\",\"path\":\"");
    t_add(&t, r.path);
    t_add(&t, "\"");
    if (r.query) t_addf(&t, ",\"query\":\"%s\"", r.query);
    if (r.key) {
        t_add(&t, ",\"api_key\":\"");
        t_add(&t, r.key);
        t_add(&t, "\"");
    }
    if (r.idem) {
        t_add(&t, ",\"idempotency_key\":\"");
        t_add(&t, r.idem);
        t_add(&t, "\"");
    }
    if (r.body) {
        t_add(&t, ",\"body\":");
        t_add(&t, r.body);
    } else if (r.text) {
        t_add(&t, ",\"body\":\"");
        t_add(&t, r.text);
        t_add(&t, "\"");
    }
    t_add(&t, "}");
    return t_take(&t);
}

/* Send an envelope; ACH_OK leaves the answer in *out (free it). */
static AchResult send_raw(AchEngine *engine, const char *env, AchBuffer *out) {
    return ach_engine_request(engine, env, out);
}

/* Send a request; the HTTP status (answer in *out), or -1 if the call failed. */
static long send_req(AchEngine *engine, struct req r, AchBuffer *out) {
    char *env = envelope(r);
    AchResult got = send_raw(engine, env, out);
    free(env);
    if (got != ACH_OK) {
        fprintf(stderr, "%s %.60s: %s (%s)\n", r.method ? r.method : "GET", r.path, ach_result_name(got),
                last_error_text());
        return -1;
    }
    return json_last_int((const char *)out->data, "status");
}

/* Send a request expecting `status`; copy the string member `field` of the
 * answer into `value` (when given). */
static void must(AchEngine *engine, long status, struct req r, const char *field, char *value, size_t cap) {
    AchBuffer out = {0};
    long got = send_req(engine, r, &out);
    checks_run++;
    if (got != status) {
        checks_failed++;
        fprintf(stderr, "set-up: %s %.60s answered %ld, expected %ld: %.300s\n", r.method ? r.method : "GET",
                r.path, got, status, out.data ? (const char *)out.data : "(nothing)");
    }
    if (field != NULL) {
        CHECK(out.data != NULL && json_string((const char *)out.data, field, value, cap));
    }
    ach_buffer_free(out);
}

/* ------------------------------------------------------------------------ */
/* The catalogue: every message the service may put in an envelope             */

/* The spec's messages by number, `{}` for a placeholder: the corpus's own file,
 * which the Rust and node runners read too (one `"N": "text"` member a line, no
 * escapes). */
#define CATALOGUE_FILE "tests/hostile/support/catalogue.json"

static char catalogue[8192];

/* Read CATALOGUE_FILE (relative to the repository root) into `catalogue`. */
static int load_catalogue(void) {
    FILE *f = fopen(CATALOGUE_FILE, "rb");
    size_t got;
    if (f == NULL) {
        perror(CATALOGUE_FILE);
        return 0;
    }
    got = fread(catalogue, 1, sizeof catalogue - 1, f);
    catalogue[got] = '\0';
    fclose(f);
    return got > 0 && got < sizeof catalogue - 1;
}

/* Whether `text` is catalogue message `code` (its placeholder filled with anything). */
static int is_catalogue_message(long code, const char *text) {
    char pattern[32];
    const char *at, *end, *hole;
    size_t n = strlen(text), b, a;
    snprintf(pattern, sizeof pattern, "\"%ld\": \"", code);
    if ((at = strstr(catalogue, pattern)) == NULL) return 0;
    at += strlen(pattern);
    if ((end = strchr(at, '"')) == NULL) return 0;
    hole = strstr(at, "{}");
    if (hole == NULL || hole > end) return (size_t)(end - at) == n && strncmp(text, at, n) == 0;
    b = (size_t)(hole - at);
    a = (size_t)(end - hole - 2);
    return n >= a + b && strncmp(text, at, b) == 0 && strncmp(text + n - a, hole + 2, a) == 0;
}

/* The string member `key` found LAST in a JSON text (the top-level "message" of
 * an envelope comes after its field problems' messages: serde_json sorts keys),
 * escapes kept as they are; 1 if found. */
static int json_last_string(const char *json, const char *key, char *out, size_t cap) {
    char pattern[64];
    const char *at = NULL, *p = json;
    size_t n = 0;
    out[0] = '\0';
    snprintf(pattern, sizeof pattern, "\"%s\":\"", key);
    while ((p = strstr(p, pattern)) != NULL) {
        at = p;
        p += strlen(pattern);
    }
    if (at == NULL) return 0;
    at += strlen(pattern);
    while (at[n] != '\0' && at[n] != '"' && n + 2 < cap) {
        if (at[n] == '\\' && at[n + 1] != '\0') {
            out[n] = at[n];
            n++;
        }
        out[n] = at[n];
        n++;
    }
    out[n] = '\0';
    return 1;
}

/* ------------------------------------------------------------------------ */
/* The fixture: two partners, each with what hostile.rs's tenants own         */


static const char *ROOMY_LIMITS =
    "{\"limits\":{\"max_transaction_amount\":\"99999999.99\",\"min_transaction_amount\":\"0.01\","
    "\"daily_count\":1000000000,\"daily_amount\":\"99999999.99\",\"period_count\":1000000000,"
    "\"period_amount\":\"99999999.99\",\"monthly_count\":1000000000,\"monthly_amount\":\"99999999.99\","
    "\"monthly_average_amount\":\"99999999.99\"}}";

struct tenant {
    char id[64], key[128], query[96];
    char merchant[64], merchant_key[128];
    char second[64];
    char customer[64];
    char pending[64], last[64];
    char early_pointer[96]; /* a status-changes pointer issued before the last debit */
    char pointer[96];       /* where the status-changes feed stood after the set-up */
    char events[96];        /* where the merchant's events feed stood */
};

static struct {
    AchEngine *engine;
    struct tenant a, b;
    int rows;
    int rows_failed;
} fx;

/* A's (or t's) PPD debit with an inline customer, with `field` ("amount",
 * "customer/name", "customer", ...) set to the JSON text `value` (NULL: as is). */
static char *txn(const struct tenant *t, const char *amount, const char *field, const char *value) {
    struct text b = {0};
    static const char *top[][2] = {{"partner_id", NULL},   {"merchant_id", NULL},
                                   {"amount", NULL},       {"description", "\"C hostile\""},
                                   {"type", "\"debit\""},  {"standard_entry_class", "\"PPD\""},
                                   {"check_number", NULL}, {"customer", NULL}};
    static const char *inner[][2] = {{"name", "\"Ada Lovelace\""},
                                     {"routing_number", "\"021000021\""},
                                     {"account_number", "\"987654321\""},
                                     {"account_type", "\"checking\""}};
    unsigned i;
    int first = 1;
    t_add(&b, "{");
    for (i = 0; i < sizeof top / sizeof top[0]; i++) {
        const char *name = top[i][0];
        char quoted[160];
        const char *v = top[i][1];
        if (i == 0 || i == 1 || i == 2) {
            snprintf(quoted, sizeof quoted, "\"%s\"", i == 0 ? t->id : i == 1 ? t->merchant : amount);
            v = quoted;
        }
        if (field && strcmp(field, name) == 0) v = value;
        if (strcmp(name, "customer") == 0 && v == NULL) {
            unsigned j;
            t_add(&b, first ? "" : ",");
            t_add(&b, "\"customer\":{");
            for (j = 0; j < sizeof inner / sizeof inner[0]; j++) {
                const char *w = inner[j][1];
                if (field && strncmp(field, "customer/", 9) == 0 && strcmp(field + 9, inner[j][0]) == 0) {
                    w = value;
                }
                t_addf(&b, "%s\"%s\":", j ? "," : "", inner[j][0]);
                t_add(&b, w);
            }
            t_add(&b, "}");
            first = 0;
            continue;
        }
        if (v == NULL) continue;
        t_addf(&b, "%s\"%s\":", first ? "" : ",", name);
        t_add(&b, v);
        first = 0;
    }
    t_add(&b, "}");
    return t_take(&b);
}

/* A's BOC debit of 1.00 with both check images and the check number written as
 * the JSON text `number`: a class that reads its check number (a PPD ignores it). */
static char *check_txn(const struct tenant *t, const char *number) {
    char *ppd = txn(t, "1.00", "check_number", number);
    char *boc = replace_all(ppd, "\"standard_entry_class\":\"PPD\"",
                            "\"standard_entry_class\":\"BOC\","
                            "\"check_image_front\":\"iVBORw0KGgoAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\","
                            "\"check_image_back\":\"iVBORw0KGgoAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\"");
    free(ppd);
    return boc;
}

static void debit(AchEngine *engine, const struct tenant *t, const char *merchant, const char *amount,
                  char *id, size_t cap, long status, long error_code) {
    struct tenant as = *t;
    char *body;
    AchBuffer out = {0};
    long got;
    snprintf(as.merchant, sizeof as.merchant, "%s", merchant);
    body = txn(&as, amount, NULL, NULL);
    got = send_req(engine, (struct req){.method = "POST", .path = "/transactions", .key = t->key, .body = body},
                   &out);
    checks_run++;
    if (got != status || (error_code > 0 && json_last_int((const char *)out.data, "error_code") != error_code)) {
        checks_failed++;
        fprintf(stderr, "debit %s on %s: expected %ld (message %ld): %.300s\n", amount, merchant, status,
                error_code, out.data ? (const char *)out.data : "(nothing)");
    }
    if (id != NULL) CHECK(out.data && json_string((const char *)out.data, "id", id, cap));
    ach_buffer_free(out);
    free(body);
}

static void pointer_now(AchEngine *engine, const struct tenant *t, char *pointer, size_t cap) {
    AchBuffer out = {0};
    char path[160];
    snprintf(path, sizeof path, "/status-changes/%s", "0");
    CHECK(send_req(engine, (struct req){.path = path, .query = t->query, .key = t->key}, &out) == 200);
    CHECK(out.data && json_string((const char *)out.data, "new_pointer", pointer, cap));
    ach_buffer_free(out);
}

static void merchant(AchEngine *engine, struct tenant *t, const char *classes, char *id, size_t cap,
                     char *key, size_t key_cap) {
    char *app = format(APPLICATION, t->id, classes);
    char path[160];
    must(engine, 201, (struct req){.method = "POST", .path = "/merchants", .key = t->key, .body = app}, "id", id,
         cap);
    free(app);
    snprintf(path, sizeof path, "/admin/merchants/%s/approve", id);
    must(engine, 200, (struct req){.method = "POST", .path = path, .key = OPERATOR_KEY, .body = ROOMY_LIMITS},
         "api_key", key, key_cap);
}

static void make_tenant(AchEngine *engine, struct tenant *t) {
    char second_key[128], body[512], path[160];
    AchBuffer out = {0};
    must(engine, 201,
         (struct req){.method = "POST", .path = "/admin/partners", .key = OPERATOR_KEY, .body = "{\"name\":\"P\"}"},
         "partner_id", t->id, sizeof t->id);
    CHECK(send_req(engine,
                   (struct req){.method = "POST", .path = "/admin/partners", .key = OPERATOR_KEY,
                                .body = "{\"name\":\"Hostile Test Partner\"}"},
                   &out) == 201);
    CHECK(json_string((const char *)out.data, "partner_id", t->id, sizeof t->id));
    CHECK(json_string((const char *)out.data, "api_key", t->key, sizeof t->key));
    ach_buffer_free(out);
    snprintf(t->query, sizeof t->query, "partner_id=%s", t->id);
    merchant(engine, t, "[\"PPD\",\"WEB\"]", t->merchant, sizeof t->merchant, t->merchant_key,
             sizeof t->merchant_key);
    merchant(engine, t, "[\"PPD\"]", t->second, sizeof t->second, second_key, sizeof second_key);
    snprintf(body, sizeof body,
             "{\"partner_id\":\"%s\",\"merchant_id\":\"global\",\"name\":\"Grace Hopper\","
             "\"routing_number\":\"026009593\",\"account_number\":\"918273645500\",\"account_type\":\"savings\"}",
             t->id);
    must(engine, 201, (struct req){.method = "POST", .path = "/customers", .key = t->key, .body = body}, "id",
         t->customer, sizeof t->customer);
    debit(engine, t, t->merchant, "10.00", t->pending, sizeof t->pending, 201, 0);
    pointer_now(engine, t, t->early_pointer, sizeof t->early_pointer);
    debit(engine, t, t->merchant, "20.00", t->last, sizeof t->last, 201, 0);
    pointer_now(engine, t, t->pointer, sizeof t->pointer);
    CHECK(strcmp(t->pointer, t->early_pointer) != 0);
    CHECK(send_req(engine, (struct req){.path = "/events", .key = t->merchant_key}, &out) == 200);
    CHECK(json_string((const char *)out.data, "new_pointer", t->events, sizeof t->events));
    ach_buffer_free(out);
    /* Room for exactly one more debit of 1.00 today: for the merchant (2 debits,
     * 30.00 so far) and for the partner overall (2 debits). */
    snprintf(path, sizeof path, "/admin/merchants/%s/limits", t->merchant);
    must(engine, 200,
         (struct req){.method = "POST", .path = path, .key = OPERATOR_KEY,
                      .body = "{\"daily_count\":3,\"daily_amount\":\"31.00\"}"},
         NULL, NULL, 0);
    snprintf(path, sizeof path, "/admin/partners/%s/limits", t->id);
    must(engine, 200,
         (struct req){.method = "POST", .path = path, .key = OPERATOR_KEY, .body = "{\"daily_count\":3}"}, NULL,
         NULL, 0);
}

/* Neither partner's feeds moved since the set-up (read through `engine`, so
 * also: the handle still answers normal requests). 1 if so. */
static int nothing_stored(AchEngine *engine, const char *name) {
    int ok = 1;
    const struct tenant *ts[2];
    unsigned i;
    ts[0] = &fx.a;
    ts[1] = &fx.b;
    for (i = 0; i < 2; i++) {
        const struct tenant *t = ts[i];
        AchBuffer out = {0};
        char path[160];
        snprintf(path, sizeof path, "/status-changes/%s", t->pointer);
        if (send_req(engine, (struct req){.path = path, .query = t->query, .key = t->key}, &out) != 200 ||
            strstr((const char *)out.data, "\"changes\":[]") == NULL) {
            fprintf(stderr, "%s: the status-changes feed moved: %.300s\n", name,
                    out.data ? (const char *)out.data : "(nothing)");
            ok = 0;
        }
        ach_buffer_free(out);
        out.data = NULL;
        snprintf(path, sizeof path, "/events/%s", t->events);
        if (send_req(engine, (struct req){.path = path, .key = t->merchant_key}, &out) != 200 ||
            strstr((const char *)out.data, "\"events\":[]") == NULL) {
            fprintf(stderr, "%s: the events feed moved: %.300s\n", name,
                    out.data ? (const char *)out.data : "(nothing)");
            ok = 0;
        }
        ach_buffer_free(out);
    }
    return ok;
}

/* ------------------------------------------------------------------------ */
/* Rows                                                                       */

enum kind {
    CODE,   /* the call fails with `code`: *out untouched, the detail says why */
    AUTH,   /* ACH_OK, exactly 401 {"success":false,"message":"Authentication failed."} */
    PARTNER_ID, /* ACH_OK, exactly that 401 with one problem naming partner_id (a right key without it) */
    REFUSED, /* ACH_OK, `status`, catalogue `error_code`, first problem `field`/`problem` */
    ANY,    /* ACH_OK, some refusal 400..422 with a catalogue message */
    CLEAR,  /* either a failing code (as CODE, any code) or a refusal (as ANY, 401 included) */
};

struct expect {
    enum kind kind;
    AchResult code;
    long status, error_code;
    const char *field, *problem;
    const char *detail; /* CODE: a part of ach_last_error's detail */
};

#define E_CODE(c) ((struct expect){CODE, (c), 0, 0, NULL, NULL, "request_json"})
#define E_CODE_D(c, d) ((struct expect){CODE, (c), 0, 0, NULL, NULL, (d)})
#define E_AUTH ((struct expect){AUTH, ACH_OK, 401, 0, NULL, NULL, NULL})
#define E_PARTNER_ID ((struct expect){PARTNER_ID, ACH_OK, 401, 0, NULL, NULL, NULL})
#define E_ANY ((struct expect){ANY, ACH_OK, 0, 0, NULL, NULL, NULL})
#define E_REFUSED(s, c, f, p) ((struct expect){REFUSED, ACH_OK, (s), (c), (f), (p), NULL})
#define E_CLEAR ((struct expect){CLEAR, ACH_OK, 0, 0, NULL, NULL, "request_json"})

static const char *AUTH_FAILED = "{\"body\":{\"message\":\"Authentication failed.\",\"success\":false},\"status\":401}";
static const char *PARTNER_ID_REQUIRED =
    "{\"body\":{\"errors\":[{\"code\":\"required\",\"field\":\"partner_id\",\"message\":\"partner_id is "
    "required with this key: send it in the body or in the query string\"}],\"message\":\"Authentication "
    "failed.\",\"success\":false},\"status\":401}";

/* Check one answer against `e`; 1 if it matches (failures are printed). */
static int judge(const char *name, AchResult got, const AchBuffer *out, const AchBuffer *sentinel,
                 struct expect e) {
    const char *a = (const char *)out->data;
    char message[2048], field[256], problem[64];
    const char *detail;
    long status, code;
    if (e.kind == CLEAR) {
        e.kind = got == ACH_OK ? ANY : CODE;
        e.code = got == ACH_OK ? ACH_OK : got;
        if (got == ACH_PANIC) e.code = ACH_OK; /* never acceptable */
    }
    if (e.kind == CODE) {
        if (got != e.code) {
            fprintf(stderr, "%s: answered %s, expected %s (%s)\n", name, ach_result_name(got),
                    ach_result_name(e.code), got == ACH_OK && a ? a : last_error_text());
            return 0;
        }
        if (out->data != sentinel->data || out->len != sentinel->len) {
            fprintf(stderr, "%s: *out was written on failure\n", name);
            return 0;
        }
        detail = last_error_text();
        if (strstr(detail, e.detail) == NULL) {
            fprintf(stderr, "%s: the detail %.200s does not mention %s\n", name, detail, e.detail);
            return 0;
        }
        if (strlen(detail) >= 1000) { /* last_error_text keeps 1,023 bytes */
            fprintf(stderr, "%s: the detail reflects the input: %.200s...\n", name, detail);
            return 0;
        }
        return 1;
    }
    if (got != ACH_OK) {
        fprintf(stderr, "%s: answered %s (%s), expected ACH_OK\n", name, ach_result_name(got), last_error_text());
        return 0;
    }
    if (a == NULL || strlen(a) != out->len || out->len > 16 * 1024 + 64) {
        fprintf(stderr, "%s: a malformed or %zu-byte answer\n", name, out->len);
        return 0;
    }
    status = json_last_int(a, "status");
    if (e.kind == ANY && status == 401) e.kind = strcmp(a, PARTNER_ID_REQUIRED) == 0 ? PARTNER_ID : AUTH;
    if (e.kind == AUTH || e.kind == PARTNER_ID || status == 401) {
        const char *exact = e.kind == PARTNER_ID ? PARTNER_ID_REQUIRED : AUTH_FAILED;
        if ((e.kind != AUTH && e.kind != PARTNER_ID) || strcmp(a, exact) != 0) {
            fprintf(stderr, "%s: %.400s\n", name, a);
            return 0;
        }
        return 1;
    }
    code = json_last_int(a, "error_code");
    json_last_string(a, "message", message, sizeof message);
    json_string(a, "field", field, sizeof field);
    json_string(a, "code", problem, sizeof problem);
    if (strstr(a, "\"success\":false") == NULL || strstr(a, "\"error_type\":\"E\"") == NULL ||
        !is_catalogue_message(code, message)) {
        fprintf(stderr, "%s: not a catalogue refusal: %.400s\n", name, a);
        return 0;
    }
    if (e.kind == ANY) {
        if (status < 400 || status > 422) {
            fprintf(stderr, "%s: status %ld: %.400s\n", name, status, a);
            return 0;
        }
        return 1;
    }
    if (status != e.status || code != e.error_code || strcmp(field, e.field) != 0 ||
        strcmp(problem, e.problem) != 0) {
        fprintf(stderr, "%s: expected %ld, message %ld, %s %s; got %.400s\n", name, e.status, e.error_code,
                e.field, e.problem, a);
        return 0;
    }
    return 1;
}

/* Run one row: send `env` (any bytes up to its first NUL) on the fixture's
 * engine, judge the answer, and check nothing was stored. */
static void row_env(const char *name, const char *env, struct expect e) {
    AchBuffer sentinel = {(uint8_t *)"sentinel", 8};
    AchBuffer out = sentinel;
    AchResult got;
    int verbose = getenv("ACH_HOSTILE_VERBOSE") != NULL;
    struct timespec began, ended;
    clock_gettime(CLOCK_MONOTONIC, &began);
    got = send_raw(fx.engine, env, &out);
    int ok = judge(name, got, &out, &sentinel, e);
    if (got == ACH_OK) ach_buffer_free(out);
    ok = nothing_stored(fx.engine, name) && ok;
    if (verbose) { /* ACH_HOSTILE_VERBOSE=1: each row and its time (with the feed checks) */
        clock_gettime(CLOCK_MONOTONIC, &ended);
        printf("%8.1f ms  %s\n",
               (double)(ended.tv_sec - began.tv_sec) * 1e3 + (double)(ended.tv_nsec - began.tv_nsec) / 1e6, name);
    }
    fx.rows++;
    checks_run++;
    if (!ok) {
        fx.rows_failed++;
        checks_failed++;
    }
}

static void row(const char *name, struct req r, struct expect e) {
    char *env = envelope(r);
    row_env(name, env, e);
    free(env);
}

/* A row posting `body` (freed here) to /transactions with A's key. */
static void transaction_row(const char *name, char *body, struct expect e) {
    row(name, (struct req){.method = "POST", .path = "/transactions", .key = fx.a.key, .body = body}, e);
    free(body);
}

/* A row of `r` sent to the path `fmt` with its one %s replaced by `arg`. */
static void row_path(const char *name, const char *fmt, const char *arg, struct req r, struct expect e) {
    char *path = format(fmt, arg);
    r.path = path;
    row(name, r, e);
    free(path);
}

/* `r` sent once as it is and once with `real` replaced by a never-issued id of
 * the same shape: the two answers must be identical (after swapping the id
 * back), so another partner's id tells nothing an unknown one does not. */
static void row_like_unknown(const char *name, struct req r, struct expect e, const char *real, const char *prefix) {
    char *env = envelope(r), *never, *other, *back;
    AchBuffer first = {0}, second = {0};
    size_t n = strlen(real) - strlen(prefix);
    char *tail = repeat("Z", n);
    never = format("%s%s", prefix, tail);
    free(tail);
    other = replace_all(env, real, never);
    row_env(name, env, e);
    if (send_raw(fx.engine, env, &first) == ACH_OK && send_raw(fx.engine, other, &second) == ACH_OK) {
        back = replace_all((const char *)second.data, never, real);
        checks_run++;
        if (strcmp(back, (const char *)first.data) != 0) {
            checks_failed++;
            fprintf(stderr, "%s: another partner's id answers unlike an unknown one:\n  %s\n  %s\n", name,
                    (const char *)first.data, back);
        }
        free(back);
    } else {
        CHECK(!"like-unknown requests answered");
    }
    ach_buffer_free(first);
    ach_buffer_free(second);
    free(env);
    free(other);
    free(never);
}

/* ------------------------------------------------------------------------ */
/* Look-alikes                                                                */

/* `id` with every Latin letter that has a Cyrillic twin replaced by it (UTF-8). */
static char *cyrillic(const char *id) {
    static const struct {
        char latin;
        const char *twin;
    } twins[] = {{'a', "\xd0\xb0"}, {'c', "\xd1\x81"}, {'e', "\xd0\xb5"}, {'o', "\xd0\xbe"}, {'p', "\xd1\x80"},
                 {'x', "\xd1\x85"}, {'y', "\xd1\x83"}, {'A', "\xd0\x90"}, {'B', "\xd0\x92"}, {'E', "\xd0\x95"},
                 {'K', "\xd0\x9a"}, {'M', "\xd0\x9c"}, {'O', "\xd0\x9e"}, {'T', "\xd0\xa2"}};
    struct text t = {0};
    for (; *id; id++) {
        unsigned i;
        const char *w = NULL;
        for (i = 0; i < sizeof twins / sizeof twins[0]; i++) {
            if (twins[i].latin == *id) w = twins[i].twin;
        }
        if (w) {
            t_add(&t, w);
        } else {
            t_addn(&t, id, 1);
        }
    }
    return t_take(&t);
}

/* The fullwidth form (U+FF01..U+FF5E) of an ASCII character, as UTF-8. */
static void add_fullwidth(struct text *t, char c) {
    unsigned cp = (unsigned)(unsigned char)c + 0xFEE0u;
    char u[4];
    u[0] = (char)(0xE0u | (cp >> 12));
    u[1] = (char)(0x80u | ((cp >> 6) & 0x3Fu));
    u[2] = (char)(0x80u | (cp & 0x3Fu));
    u[3] = '\0';
    t_add(t, u);
}

/* `id` with its digits, and its last character, in fullwidth forms; with
 * `prefix_too`, only its first three letters. */
static char *fullwidth(const char *id, int prefix_only) {
    struct text t = {0};
    size_t i, n = strlen(id);
    for (i = 0; i < n; i++) {
        int wide = prefix_only ? i < 3 : ((id[i] >= '0' && id[i] <= '9') || i == n - 1);
        if (wide) {
            add_fullwidth(&t, id[i]);
        } else {
            t_addn(&t, id + i, 1);
        }
    }
    return t_take(&t);
}

/* ------------------------------------------------------------------------ */
/* The C-only rows: NULL, handles, UTF-8, NUL, nesting of the envelope         */

static void test_null_arguments(void) {
    AchBuffer sentinel = {(uint8_t *)"sentinel", 8};
    AchBuffer out = sentinel;
    AchEngine *engine = (AchEngine *)&checks_run;
    const char *get = "{\"method\":\"GET\",\"path\":\"/categories\"}";
    static const uint8_t bytes[] = {'{', '}'};

    CHECK_RESULT(ach_engine_request(NULL, get, &out), ACH_NULL_POINTER);
    CHECK(strcmp(last_error_text(), "engine is NULL") == 0);
    CHECK_RESULT(ach_engine_request(fx.engine, NULL, &out), ACH_NULL_POINTER);
    CHECK(strcmp(last_error_text(), "request_json is NULL") == 0);
    CHECK_RESULT(ach_engine_request(fx.engine, get, NULL), ACH_NULL_POINTER);
    CHECK(strcmp(last_error_text(), "out is NULL") == 0);
    CHECK_RESULT(ach_engine_request(NULL, NULL, NULL), ACH_NULL_POINTER);
    CHECK(out.data == sentinel.data && out.len == sentinel.len);

    CHECK_RESULT(ach_engine_open(NULL, &engine), ACH_NULL_POINTER);
    CHECK(strcmp(last_error_text(), "options_json is NULL") == 0);
    CHECK_RESULT(ach_engine_open("{}", NULL), ACH_NULL_POINTER);
    CHECK_RESULT(ach_engine_open(NULL, NULL), ACH_NULL_POINTER);
    CHECK(engine == (AchEngine *)&checks_run);

    CHECK_RESULT(ach_validate(NULL, "{}", &out), ACH_NULL_POINTER);
    CHECK_RESULT(ach_validate("transaction", NULL, &out), ACH_NULL_POINTER);
    CHECK(strcmp(last_error_text(), "json is NULL") == 0);
    CHECK_RESULT(ach_validate("transaction", "{}", NULL), ACH_NULL_POINTER);
    CHECK_RESULT(ach_validate_bytes(NULL, bytes, sizeof bytes, &out), ACH_NULL_POINTER);
    CHECK_RESULT(ach_validate_bytes("transaction", NULL, 1, &out), ACH_NULL_POINTER);
    CHECK_RESULT(ach_validate_bytes("transaction", NULL, SIZE_MAX, &out), ACH_NULL_POINTER);
    CHECK_RESULT(ach_validate_bytes("transaction", bytes, sizeof bytes, NULL), ACH_NULL_POINTER);
    CHECK(out.data == sentinel.data && out.len == sentinel.len);

    CHECK_RESULT(ach_last_error(NULL), ACH_NULL_POINTER);
    CHECK(strcmp(last_error_text(), "out is NULL") == 0); /* the detail before stays */
    ach_buffer_release(NULL);
    ach_engine_close(NULL);
    out.data = NULL;
    out.len = 0;
    ach_buffer_free(out);
    CHECK(strcmp(ach_result_name((AchResult)0xFFFFFFFFu), "ACH_UNKNOWN_RESULT") == 0);
    CHECK(nothing_stored(fx.engine, "NULL arguments"));
}

static void test_handles(const char *dir) {
    AchBuffer sentinel = {(uint8_t *)"sentinel", 8};
    AchBuffer out = sentinel;
    const char *get = "{\"method\":\"GET\",\"path\":\"/categories\"}";
    uintptr_t real = (uintptr_t)fx.engine;
    int on_stack = 0;
    char options[512];
    AchEngine *closed = NULL;
    unsigned i;
    struct {
        const char *name;
        uintptr_t value;
        AchResult code;
    } handles[] = {
        {"a pointer to the stack", (uintptr_t)&on_stack, ACH_UNKNOWN_HANDLE},
        {"a pointer to static data", (uintptr_t)&fx, ACH_UNKNOWN_HANDLE},
        {"a pointer to a string", (uintptr_t)get, ACH_UNKNOWN_HANDLE},
        {"1", 1, ACH_UNKNOWN_HANDLE},
        {"the tag alone (id 0)", 0xAC, ACH_UNKNOWN_HANDLE},
        {"UINTPTR_MAX", UINTPTR_MAX, ACH_UNKNOWN_HANDLE},
        {"UINTPTR_MAX shaped like a handle", (UINTPTR_MAX & ~(uintptr_t)0xFF) | 0xAC, ACH_UNKNOWN_HANDLE},
        {"INTPTR_MIN shaped like a handle", ((uintptr_t)1 << (sizeof(uintptr_t) * 8 - 1)) | 0xAC,
         ACH_UNKNOWN_HANDLE},
        {"the real handle plus one", real + 1, ACH_UNKNOWN_HANDLE},
        {"the real handle minus the tag", real - 0xAC, ACH_UNKNOWN_HANDLE},
        {"a never-issued id", real + ((uintptr_t)1000000 << 8), ACH_UNKNOWN_HANDLE},
        {"the real handle with a bit flipped", real ^ ((uintptr_t)1 << 40), ACH_UNKNOWN_HANDLE},
    };
    void *heap = malloc(64);
    CHECK(heap != NULL);

    for (i = 0; i < sizeof handles / sizeof handles[0]; i++) {
        AchEngine *h = (AchEngine *)handles[i].value;
        out = sentinel;
        checks_run++;
        if (ach_engine_request(h, get, &out) != handles[i].code || out.data != sentinel.data) {
            checks_failed++;
            fprintf(stderr, "handle %s: not %s (%s)\n", handles[i].name, ach_result_name(handles[i].code),
                    last_error_text());
        }
        CHECK(strstr(last_error_text(), "is not a handle issued by ach_engine_open") != NULL);
        ach_engine_close(h); /* closing what is not a handle does nothing */
    }
    CHECK_RESULT(ach_engine_request((AchEngine *)heap, get, &out), ACH_UNKNOWN_HANDLE);
    ach_engine_close((AchEngine *)heap);
    free(heap);

    /* A closed handle: ACH_CLOSED, closing it again (and again) is harmless. */
    snprintf(options, sizeof options, "{\"path\":\"%s/closed.redb\",\"sandbox\":true,\"start\":\"" START "\"}", dir);
    CHECK_RESULT(ach_engine_open(options, &closed), ACH_OK);
    CHECK(closed != fx.engine);
    ach_engine_close(closed);
    for (i = 0; i < 3; i++) {
        out = sentinel;
        CHECK_RESULT(ach_engine_request(closed, get, &out), ACH_CLOSED);
        CHECK(strstr(last_error_text(), "was closed") != NULL);
        CHECK(out.data == sentinel.data);
        ach_engine_close(closed);
    }
    /* Its database was closed: the file opens again, under a new handle. */
    {
        AchEngine *again = NULL;
        CHECK_RESULT(ach_engine_open(options, &again), ACH_OK);
        CHECK(again != closed);
        CHECK_RESULT(ach_engine_request(closed, get, &out), ACH_CLOSED);
        ach_engine_close(again);
    }
    snprintf(options, sizeof options, "%s/closed.redb", dir);
    unlink(options);
    snprintf(options, sizeof options, "%s/closed.redb.key", dir);
    unlink(options);
    /* The fixture's engine is untouched by all of it. */
    CHECK(nothing_stored(fx.engine, "forged handles"));
}

static void test_invalid_utf8(void) {
    static const char *bad[][2] = {
        {"a lone continuation byte in the path", "{\"method\":\"GET\",\"path\":\"/categories\x80\"}"},
        {"0xFF in the method", "{\"method\":\"G\xff\",\"path\":\"/categories\"}"},
        {"0xFE 0xFF in the key", "{\"method\":\"GET\",\"path\":\"/categories\",\"api_key\":\"pk_\xfe\xff\"}"},
        {"an overlong NUL (C0 80) in the body",
         "{\"method\":\"POST\",\"path\":\"/transactions\",\"body\":\"{\\\"a\\\":\\\"\xc0\x80\\\"}\"}"},
        {"an overlong slash (E0 80 AF) in the path", "{\"method\":\"GET\",\"path\":\"\xe0\x80\xaf" "categories\"}"},
        {"a UTF-16 surrogate as UTF-8 (ED A0 80)",
         "{\"method\":\"GET\",\"path\":\"/categories\",\"api_key\":\"\xed\xa0\x80\"}"},
        {"a code point above U+10FFFF (F4 90 80 80)", "{\"method\":\"GET\",\"path\":\"/\xf4\x90\x80\x80\"}"},
        {"a 5-byte form (F8)", "{\"method\":\"GET\",\"path\":\"/\xf8\x88\x80\x80\x80\"}"},
        {"a sequence cut at the end (E2 82)", "{\"method\":\"GET\",\"path\":\"/categories\"}\xe2\x82"},
        {"Latin-1 in a description",
         "{\"method\":\"POST\",\"path\":\"/transactions\",\"body\":{\"description\":\"caf\xe9\"}}"},
    };
    unsigned i;
    AchBuffer sentinel = {(uint8_t *)"sentinel", 8};
    AchBuffer out = sentinel;
    AchEngine *engine = (AchEngine *)&checks_run;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char name[160];
        snprintf(name, sizeof name, "invalid UTF-8: %s", bad[i][0]);
        row_env(name, bad[i][1], E_CODE_D(ACH_INVALID_UTF8, "request_json is not valid UTF-8 (bad byte at offset "));
    }
    CHECK_RESULT(ach_engine_open("{\"operator_key\":\"ok_\xff\"}", &engine), ACH_INVALID_UTF8);
    CHECK(engine == (AchEngine *)&checks_run);
    CHECK_RESULT(ach_validate("transaction", "{\"description\":\"\xc3\x28\"}", &out), ACH_INVALID_UTF8);
    CHECK_RESULT(ach_validate("transact\xc4on", "{}", &out), ACH_INVALID_UTF8);
    CHECK(out.data == sentinel.data);
    /* ach_validate_bytes judges such bytes as a verdict, as `achd validate` does. */
    out.data = NULL;
    CHECK_RESULT(ach_validate_bytes("transaction", (const uint8_t *)"{\"description\":\"\xff\"}", 19, &out),
                 ACH_OK);
    CHECK(out.data && strstr((const char *)out.data, "\"valid\":false") != NULL);
    CHECK(out.data && strstr((const char *)out.data, "invalid_json") != NULL);
    ach_buffer_free(out);
}

static void test_nul_truncation(void) {
    struct text t = {0};
    char *body = txn(&fx.a, "1.00", NULL, NULL);
    char *whole, *cut;
    size_t at;
    AchBuffer out = {0};

    /* The body cut inside a string: the library sees JSON that stops short. */
    whole = envelope((struct req){.method = "POST", .path = "/transactions", .key = fx.a.key, .body = body});
    at = (size_t)(strstr(whole, "Ada") - whole);
    whole[at] = '\0';
    row_env("a NUL inside the body's customer name", whole, E_CODE(ACH_INVALID_JSON));
    whole[at] = 'A';
    /* Cut inside the API key. */
    at = (size_t)(strstr(whole, fx.a.key) - whole) + 5;
    whole[at] = '\0';
    row_env("a NUL inside the API key", whole, E_CODE(ACH_INVALID_JSON));
    free(whole);

    /* A NUL right after a complete envelope that lacks its body: a POST
     * without a body, refused; the transaction after the NUL is never seen. */
    t_addf(&t, "{\"method\":\"POST\",\"path\":\"/transactions\",\"api_key\":\"%s\"}", fx.a.key);
    at = t.len;
    t_add(&t, "X,\"body\":");
    t_add(&t, body);
    t_add(&t, "}");
    cut = t_take(&t);
    cut[at] = '\0';
    row_env("a NUL after a complete envelope, before its body", cut, E_PARTNER_ID);
    /* A NUL as the first byte: the empty string. */
    cut[0] = '\0';
    row_env("a NUL as the first byte (the empty envelope)", cut, E_CODE(ACH_INVALID_JSON));
    free(cut);

    /* ach_validate sees the same truncation as a verdict. */
    CHECK_RESULT(ach_validate("transaction", "{\"amount\":\"1.00\"\0}", &out), ACH_OK);
    CHECK(out.data && strstr((const char *)out.data, "invalid_json") != NULL);
    ach_buffer_free(out);
    free(body);
}

static void test_envelopes(void) {
    char *deep_arrays, *deep_objects, *env, *big, *digits;
    struct text t = {0};
    AchEngine *engine = (AchEngine *)&checks_run;
    const char *key = fx.a.key;

    t_repeat(&t, "[", 100000);
    t_repeat(&t, "]", 100000);
    deep_arrays = t_take(&t);
    t_repeat(&t, "{\"a\":", 100000);
    t_add(&t, "1");
    t_repeat(&t, "}", 100000);
    deep_objects = t_take(&t);

    /* Deep nesting is well-formed JSON: ACH_INVALID_ARGUMENT (wrong shape, or
     * deeper than the envelope's parser goes), never a stack overflow. */
    row_env("the envelope is 100,000 nested arrays", deep_arrays, E_CODE(ACH_INVALID_ARGUMENT));
    row_env("the envelope is 100,000 nested objects", deep_objects, E_CODE(ACH_INVALID_ARGUMENT));
    env = format("{\"method\":\"POST\",\"path\":\"/transactions\",\"api_key\":\"%s\",\"body\":%s}", key, deep_arrays);
    row_env("the body member is 100,000 nested arrays (a JSON value)", env,
            E_CODE_D(ACH_INVALID_ARGUMENT, "recursion limit exceeded"));
    free(env);
    env = format("{\"method\":\"GET\",\"path\":\"/categories\",\"api_key\":\"%s\",\"query\":%s}", key, deep_objects);
    row_env("the query member is 100,000 nested objects", env,
            E_CODE_D(ACH_INVALID_ARGUMENT, "recursion limit exceeded"));
    free(env);
    CHECK_RESULT(ach_engine_open(deep_objects, &engine), ACH_INVALID_JSON);
    CHECK(engine == (AchEngine *)&checks_run);
    {
        AchBuffer out = {0};
        CHECK_RESULT(ach_validate("transaction", deep_arrays, &out), ACH_OK);
        CHECK(out.data && strstr((const char *)out.data, "\"valid\":false") != NULL);
        /* Deeper than the service's parser goes: malformed, as the router says. */
        CHECK(out.data && strstr((const char *)out.data, "\"code\":\"invalid_json\"") != NULL);
        ach_buffer_free(out);
        out.data = NULL;
        CHECK_RESULT(ach_validate("merchant", deep_objects, &out), ACH_OK);
        CHECK(out.data && strstr((const char *)out.data, "\"valid\":false") != NULL);
        CHECK(out.data && out.len < 4096);
        ach_buffer_free(out);
    }

    /* Envelopes of the wrong shape. */
    row_env("the envelope is a string", "\"GET /categories\"", E_CODE(ACH_INVALID_ARGUMENT));
    row_env("the envelope is null", "null", E_CODE(ACH_INVALID_ARGUMENT));
    /* serde reads a struct from a JSON array positionally (method, path, ...), so
     * this one is answered as {"method":"GET","path":"/categories"} is (401): a
     * leniency of Request::from_json, harmless, but not what ach.h documents. */
    row_env("the envelope is an array", "[\"GET\",\"/categories\"]", E_CLEAR);
    row_env("the envelope has no path", "{\"method\":\"GET\"}", E_CODE(ACH_INVALID_ARGUMENT));
    env = format("{\"method\":\"GET\",\"path\":\"/categories\",\"api_key\":\"%s\",\"bogus\":1}", key);
    row_env("an unknown envelope member", env, E_CODE(ACH_INVALID_ARGUMENT));
    free(env);
    env = format("{\"method\":\"GET\",\"path\":\"/categories\",\"api_key\":\"%s\",\"api_key\":\"%s\"}", key, key);
    row_env("api_key twice", env, E_CODE(ACH_INVALID_ARGUMENT));
    free(env);
    env = format("{\"method\":\"GET\",\"path\":\"/categories\",\"api_key\":\"%s\",\"query\":[1]}", key);
    row_env("the query is an array", env, E_CODE(ACH_INVALID_ARGUMENT));
    free(env);
    row_env("the API key is a lone surrogate escape",
            "{\"method\":\"GET\",\"path\":\"/categories\",\"api_key\":\"\\ud800\"}",
            E_CODE_D(ACH_INVALID_ARGUMENT, "hex escape"));
    digits = repeat("9", 400);
    env = format("{\"method\":\"GET\",\"path\":\"/categories\",\"api_key\":%s}", digits);
    row_env("the API key is a 400-digit number", env, E_CODE(ACH_INVALID_ARGUMENT));
    free(env);
    env = format("{\"method\":\"GET\",\"path\":\"/status-changes/0\",\"api_key\":\"%s\",\"query\":{\"partner_id\":%s}}",
                 key, digits);
    row_env("the query's partner_id is a 400-digit number", env, E_AUTH);
    free(env);
    env = format("{\"method\":-0,\"path\":\"/categories\"}");
    row_env("the method is negative zero", env, E_CODE(ACH_INVALID_ARGUMENT));
    free(env);
    big = repeat("x", MB);
    env = format("{\"method\":\"%s\",\"path\":\"/categories\",\"api_key\":\"%s\"}", big, key);
    row_env("a 1 MB method", env, E_ANY);
    free(env);
    env = format("{\"method\":\"GET\",\"path\":\"/categories\",\"api_key\":\"%s\",\"%s\":1}", key, big);
    row_env("a 1 MB member name", env, E_CODE(ACH_INVALID_ARGUMENT));
    free(env);
    env = format("{\"method\":\"POST\",\"path\":\"/admin/partners\",\"api_key\":\"" OPERATOR_KEY
                 "\",\"body\":{\"%s\":1}}",
                 big);
    row_env("a 1 MB member name in an operator body", env, E_ANY);
    free(env);

    /* Hostile options for ach_engine_open: the engine is never opened. */
    env = format("{\"operator_key\":\"%s\"}", big);
    CHECK_RESULT(ach_engine_open(env, &engine), ACH_INVALID_ARGUMENT);
    CHECK(strlen(last_error_text()) < 4096);
    free(env);
    env = format("{\"operator_key\":%s}", digits);
    CHECK_RESULT(ach_engine_open(env, &engine), ACH_INVALID_ARGUMENT);
    free(env);
    CHECK_RESULT(ach_engine_open("{\"sandbox\":-0}", &engine), ACH_INVALID_ARGUMENT);
    CHECK_RESULT(ach_engine_open("{\"sandbox\":true,\"start\":\"2026\\u0000-11-23T10:00:00-05:00\"}", &engine),
                 ACH_INVALID_ARGUMENT);
    CHECK_RESULT(ach_engine_open("{\"path\":\"/tmp/x\\u0000y.redb\"}", &engine), ACH_STORAGE);
    CHECK(engine == (AchEngine *)&checks_run);

    free(big);
    free(digits);
    free(deep_arrays);
    free(deep_objects);
}

/* ------------------------------------------------------------------------ */
/* The router's rows (tests/tests/hostile.rs), as a C host sends them          */

static void structure_rows(void) {
    const struct tenant *a = &fx.a;
    struct text t = {0};
    char *deep[2], *void_path = format("/transactions/%s/void", a->pending);
    const char *paths[] = {"/transactions", "/customers", "/merchants", void_path, "/status-changes/0"};
    const char *admin[] = {"/admin/partners", "/admin/returns", "/admin/clock"};
    char *limits_path = format("/admin/merchants/%s/limits", a->merchant);
    unsigned i, s;
    char name[200];
    char *huge, *form_query, *path;

    t_repeat(&t, "[", 100000);
    t_repeat(&t, "]", 100000);
    deep[0] = t_take(&t);
    t_repeat(&t, "{\\\"a\\\":", 100000); /* as raw text inside a JSON string */
    t_add(&t, "1");
    t_repeat(&t, "}", 100000);
    deep[1] = t_take(&t);
    for (s = 0; s < 2; s++) {
        const char *shape = s ? "objects" : "arrays";
        for (i = 0; i < sizeof paths / sizeof paths[0]; i++) {
            const char *method = i == 3 ? "PUT" : i == 4 ? "GET" : "POST";
            if (s == 1 && (i == 1 || i == 2)) continue; /* (time under valgrind) */
            snprintf(name, sizeof name, "100,000 nested %s: %s", shape, paths[i]);
            /* Only /transactions and /merchants take a body this large; the
             * other endpoints refuse it on its size (413) before reading it. */
            row(name,
                (struct req){.method = method, .path = paths[i], .query = i == 4 ? a->query : NULL, .key = a->key,
                             .text = deep[s]},
                i == 0 || i == 2 ? E_REFUSED(400, 10, "", "invalid_json") : E_REFUSED(413, 10, "", "over_limit"));
        }
        for (i = 0; i < sizeof admin / sizeof admin[0]; i++) {
            if (s == 1 && i > 0) continue;
            snprintf(name, sizeof name, "100,000 nested %s: %s", shape, admin[i]);
            row(name, (struct req){.method = "POST", .path = admin[i], .key = OPERATOR_KEY, .text = deep[s]}, E_ANY);
        }
        if (s == 1) continue;
        snprintf(name, sizeof name, "100,000 nested %s: merchant limits", shape);
        row(name, (struct req){.method = "POST", .path = limits_path, .key = OPERATOR_KEY, .text = deep[s]}, E_ANY);
    }
    /* Form data nested as deep, in the query string (an envelope has no
     * Content-Type, so form data comes through the query). */
    t_addf(&t, "partner_id=%s&customer", a->id);
    t_repeat(&t, "[a]", 100000);
    t_add(&t, "=1");
    form_query = t_take(&t);
    row("query string nested 100,000 levels",
        (struct req){.method = "POST", .path = "/transactions", .query = form_query, .key = a->key},
        E_REFUSED(400, 10, "", "invalid_json"));
    free(form_query);
    t_repeat(&t, "a[b]", 33);
    t_addf(&t, "=1&partner_id=%s", a->id);
    form_query = t_take(&t);
    row("query string one level too deep",
        (struct req){.method = "POST", .path = "/transactions", .query = form_query, .key = a->key},
        E_REFUSED(400, 10, "", "invalid_json"));
    free(form_query);

    /* Bodies far over the 3 MiB limit: 10 MB with a key, without, as raw text
     * and as a JSON string value. */
    huge = repeat(" ", 10 * MB);
    row("10 MB body: POST /transactions", (struct req){.method = "POST", .path = "/transactions", .key = a->key, .text = huge},
        E_REFUSED(413, 10, "", "over_limit"));
    /* The key is checked before the body counts. */
    row("10 MB body without a key", (struct req){.method = "POST", .path = "/transactions", .text = huge}, E_AUTH);
    free(huge);
    huge = repeat("9", 4 * MB);
    path = format("\"%s\"", huge);
    row("4 MB body (a JSON string): POST /customers",
        (struct req){.method = "POST", .path = "/customers", .key = a->key, .body = path},
        E_REFUSED(413, 10, "", "over_limit"));
    free(path);
    row("4 MB body: PUT void", (struct req){.method = "PUT", .path = void_path, .key = a->key, .text = huge},
        E_REFUSED(413, 10, "", "over_limit"));
    row("4 MB body: POST /admin/routing",
        (struct req){.method = "POST", .path = "/admin/routing", .key = OPERATOR_KEY, .text = huge},
        E_REFUSED(413, 10, "", "over_limit"));
    row("4 MB body: GET /categories", (struct req){.path = "/categories", .key = a->key, .text = huge},
        E_REFUSED(413, 10, "", "over_limit"));
    free(huge);

    free(deep[0]);
    free(deep[1]);
    free(void_path);
    free(limits_path);
}

static void nul_rows(void) {
    const struct tenant *a = &fx.a;
    static const struct {
        const char *field, *value;
        struct expect e;
    } fields[] = {
        {"description", "\"Invoice\\u000042\"", {REFUSED, ACH_OK, 422, 10, "description", "invalid_format", NULL}},
        {"customer/name", "\"Ada\\u0000Lovelace\"", {REFUSED, ACH_OK, 422, 10, "customer.name", "invalid_format", NULL}},
        {"customer/account_number", "\"98765\\u00004321\"",
         {REFUSED, ACH_OK, 422, 13, "customer.account_number", "invalid_format", NULL}},
        {"amount", "\"1.00\\u0000\"", {REFUSED, ACH_OK, 422, 14, "amount", "invalid_amount", NULL}},
    };
    unsigned i;
    char name[200], value[160], *body, *path;
    for (i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        snprintf(name, sizeof name, "NUL (\\u0000) in %s", fields[i].field);
        transaction_row(name, txn(a, "1.00", fields[i].field, fields[i].value), fields[i].e);
    }
    snprintf(value, sizeof value, "\"%s\\u0000\"", a->merchant);
    transaction_row("NUL after the merchant id", txn(a, "1.00", "merchant_id", value),
        E_REFUSED(422, 11, "merchant_id", "invalid_format"));
    snprintf(value, sizeof value, "\"%s\\u0000\"", a->id);
    transaction_row("NUL after the partner id", txn(a, "1.00", "partner_id", value), E_AUTH);
    row("NUL in the path", (struct req){.method = "POST", .path = "/transactions\\u0000", .key = a->key},
        E_REFUSED(404, 10, "path", "not_found"));
    row("%00 in the path", (struct req){.method = "POST", .path = "/transactions%00", .key = a->key},
        E_REFUSED(404, 10, "path", "not_found"));
    row_path("NUL after a transaction id", "/transactions/%s\\u0000/void", a->pending,
        (struct req){.method = "PUT", .query = a->query, .key = a->key},
        E_REFUSED(404, 10, "transaction_id", "not_found"));
    row_path("%00 after a customer id", "/customers/%s%%00", a->customer,
        (struct req){.method = "DELETE", .query = a->query, .key = a->key},
        E_REFUSED(404, 10, "customer_id", "not_found"));
    path = format("partner_id=%s%%00", a->id);
    row("%00 in the query's partner_id", (struct req){.method = "POST", .path = "/transactions", .query = path, .key = a->key},
        E_AUTH);
    free(path);
    path = format("%s\\u0000", a->key);
    body = txn(a, "1.00", NULL, NULL);
    row("NUL after the API key", (struct req){.method = "POST", .path = "/transactions", .key = path, .body = body},
        E_AUTH);
    row("NUL in the idempotency key",
        (struct req){.method = "POST", .path = "/transactions", .key = a->key, .idem = "order\\u00001", .body = body},
        E_REFUSED(422, 10, "idempotency_key", "invalid_format"));
    free(path);
    free(body);
    /* Percent-escaped invalid UTF-8 (the bytes themselves cannot pass the ABI). */
    path = format("/transactions/%%FF%%FE/void");
    row("%FF%FE in the path", (struct req){.method = "PUT", .path = path, .query = a->query, .key = a->key},
        E_REFUSED(404, 10, "transaction_id", "not_found"));
    free(path);
    row("%FF%FE in the query's partner_id",
        (struct req){.method = "POST", .path = "/transactions", .query = "partner_id=%FF%FE", .key = a->key}, E_AUTH);
    path = format("partner_id=%s&amount=%%FF", a->id);
    row("%FF as a query amount", (struct req){.method = "POST", .path = "/transactions", .query = path, .key = a->key},
        E_ANY);
    free(path);
    row("U+FFFD in the key", (struct req){.path = "/categories", .key = "pk_\\ufffd\\ufffd"}, E_AUTH);
}

static void value_rows(void) {
    const struct tenant *a = &fx.a;
    char *digits = repeat("9", 400);
    char *fraction;
    struct text t = {0};
    const char *literals[6];
    const char *names[] = {"a 400-digit amount", "a 400-digit fraction", "an amount of 1e400",
                           "negative zero", "negative zero with decimals", "negative zero, exponent"};
    unsigned i;
    char name[200], quoted[1024], *body, *id, *path;
    struct expect invalid_amount = E_REFUSED(422, 14, "amount", "invalid_amount");

    t_add(&t, "0.");
    t_repeat(&t, "0", 399);
    fraction = t_take(&t);
    literals[0] = digits;
    literals[1] = fraction;
    literals[2] = "1e400";
    literals[3] = "-0";
    literals[4] = "-0.00";
    literals[5] = "-0e0";
    for (i = 0; i < 6; i++) {
        snprintf(name, sizeof name, "%s (number)", names[i]);
        transaction_row(name, txn(a, "1.00", "amount", literals[i]), invalid_amount);
        snprintf(name, sizeof name, "%s (string)", names[i]);
        snprintf(quoted, sizeof quoted, "\"%s\"", literals[i]);
        transaction_row(name, txn(a, "1.00", "amount", quoted), invalid_amount);
    }
    transaction_row("a 400-digit check number", check_txn(a, digits),
        E_REFUSED(422, 10, "check_number", "invalid_format"));
    transaction_row("a 400-digit routing number", txn(a, "1.00", "customer/routing_number", digits),
        E_REFUSED(422, 12, "customer.routing_number", "invalid_type"));
    transaction_row("check number negative zero", check_txn(a, "-0"),
        E_REFUSED(422, 10, "check_number", "invalid_format"));
    {
        const char *members[][2] = {{"partners", "daily_count"},
                                    {"merchants", "max_transaction_amount"},
                                    {"merchants", "period_days"}};
        const char *values[] = {digits, "-0", "-0.0"};
        unsigned m, v;
        for (m = 0; m < 3; m++) {
            path = format("/admin/%s/%s/limits", members[m][0], m == 0 ? a->id : a->merchant);
            for (v = 0; v < 3; v++) {
                body = format("{\"%s\":%s}", members[m][1], values[v]);
                snprintf(name, sizeof name, "%s = %.10s", members[m][1], values[v]);
                row(name, (struct req){.method = "POST", .path = path, .key = OPERATOR_KEY, .body = body}, E_ANY);
                free(body);
            }
            free(path);
        }
    }

    /* Look-alikes: Cyrillic letters and fullwidth forms in ids and codes, as
     * UTF-8 bytes and as JSON \u escapes. */
    {
        char *ids[4];
        const char *kinds[] = {"Cyrillic", "fullwidth digits", "fullwidth prefix", "Cyrillic (\\u escapes)"};
        ids[0] = cyrillic(a->merchant);
        ids[1] = fullwidth(a->merchant, 0);
        ids[2] = fullwidth(a->merchant, 1);
        ids[3] = format("m\\u0435r%s", a->merchant + 3); /* Cyrillic е, escaped */
        for (i = 0; i < 4; i++) {
            CHECK(strcmp(ids[i], a->merchant) != 0);
            snprintf(name, sizeof name, "merchant id with %s", kinds[i]);
            snprintf(quoted, sizeof quoted, "\"%s\"", ids[i]);
            transaction_row(name, txn(a, "1.00", "merchant_id", quoted),
                E_REFUSED(422, 11, "merchant_id", "invalid_format"));
            free(ids[i]);
        }
    }
    snprintf(quoted, sizeof quoted, "\"\xd1\x80%s\"", a->id + 1); /* Cyrillic р */
    transaction_row("partner id with a Cyrillic р", txn(a, "1.00", "partner_id", quoted), E_AUTH);
    for (i = 0; i < 2; i++) {
        id = i ? fullwidth(a->pending, 0) : cyrillic(a->pending);
        snprintf(name, sizeof name, "transaction id with %s", i ? "fullwidth digits" : "Cyrillic");
        row_path(name, "/transactions/%s/void", id, (struct req){.method = "PUT", .query = a->query, .key = a->key},
            E_REFUSED(404, 10, "transaction_id", "not_found"));
        free(id);
    }
    id = fullwidth(a->customer, 0);
    snprintf(quoted, sizeof quoted, "{\"id\":\"%s\"}", id);
    free(id);
    transaction_row("customer token with fullwidth digits", txn(a, "1.00", "customer", quoted), E_ANY);
    id = fullwidth("021000021", 0);
    snprintf(quoted, sizeof quoted, "\"%s\"", id);
    transaction_row("routing number in fullwidth digits", txn(a, "1.00", "customer/routing_number", quoted),
        E_REFUSED(422, 12, "customer.routing_number", "invalid_format"));
    row_path("institution in fullwidth digits", "/institutions/%s", id, (struct req){.key = a->key},
        E_REFUSED(422, 12, "routing_number", "invalid_format"));
    free(id);
    id = fullwidth("1.00", 0);
    snprintf(quoted, sizeof quoted, "\"%s\"", id);
    free(id);
    transaction_row("amount in fullwidth digits", txn(a, "1.00", "amount", quoted), invalid_amount);
    transaction_row("class in Cyrillic", txn(a, "1.00", "standard_entry_class", "\"\xd0\xa0\xd0\xa0" "D\""),
        E_REFUSED(403, 20, "standard_entry_class", "invalid_value"));
    id = cyrillic(a->key);
    body = txn(a, "1.00", NULL, NULL);
    row("API key with Cyrillic letters", (struct req){.method = "POST", .path = "/transactions", .key = id, .body = body},
        E_AUTH);
    free(body);
    free(id);
    free(digits);
    free(fraction);
}

static void size_rows(void) {
    const struct tenant *a = &fx.a;
    char *big = repeat("9", MB);
    char *quoted = format("\"%s\"", big);
    /* A few fields here (valgrind makes each 1 MB row take seconds); every
     * field of every body is ffi/tests/hostile.rs's. */
    static const char *fields[] = {"merchant_id", "amount", "description", "customer/account_number"};
    unsigned i;
    char name[200], *body, *path, *long_path;
    for (i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        snprintf(name, sizeof name, "1 MB in /transactions %s", fields[i]);
        transaction_row(name, txn(a, "1.00", fields[i], quoted), E_ANY);
    }
    transaction_row("1 MB in /transactions partner_id", txn(a, "1.00", "partner_id", quoted), E_AUTH);
    body = format("{\"name\":%s}", quoted);
    row("1 MB partner name", (struct req){.method = "POST", .path = "/admin/partners", .key = OPERATOR_KEY, .body = body},
        E_ANY);
    free(body);
    body = format("{\"now\":%s}", quoted);
    row("1 MB clock", (struct req){.method = "POST", .path = "/admin/clock", .key = OPERATOR_KEY, .body = body}, E_ANY);
    free(body);
    row("1 MB directory line",
        (struct req){.method = "POST", .path = "/admin/routing", .key = OPERATOR_KEY, .text = big},
        E_REFUSED(422, 10, "", "invalid_format"));
    path = format("partner_id=%s", big);
    row("1 MB partner_id in the query", (struct req){.method = "POST", .path = "/transactions", .query = path, .key = a->key},
        E_AUTH);
    free(path);
    row("1 MB API key", (struct req){.path = "/categories", .key = big}, E_AUTH);
    body = txn(a, "3.00", NULL, NULL);
    row("1 MB idempotency key",
        (struct req){.method = "POST", .path = "/transactions", .key = a->key, .idem = big, .body = body},
        E_REFUSED(422, 10, "idempotency_key", "invalid_format"));
    free(body);
    row_path("1 MB pointer", "/status-changes/%s", big, (struct req){.query = a->query, .key = a->key},
        E_REFUSED(422, 10, "pointer", "invalid_value"));
    row_path("1 MB events pointer", "/events/%s", big, (struct req){.key = a->merchant_key},
        E_REFUSED(422, 10, "pointer", "invalid_value"));
    long_path = repeat("a", 100 * 1024);
    row_path("100 KB path", "/%s", long_path, (struct req){.key = a->key}, E_REFUSED(404, 10, "path", "not_found"));
    row_path("100 KB transaction id", "/transactions/%s/void", long_path,
        (struct req){.method = "PUT", .query = a->query, .key = a->key},
        E_REFUSED(404, 10, "transaction_id", "not_found"));
    row_path("100 KB customer id", "/customers/%s", long_path,
        (struct req){.method = "DELETE", .query = a->query, .key = a->key},
        E_REFUSED(404, 10, "customer_id", "not_found"));
    row_path("100 KB routing number", "/institutions/%s", long_path, (struct req){.key = a->key},
        E_REFUSED(422, 12, "routing_number", "invalid_format"));
    free(long_path);
    long_path = repeat("x/", 50 * 1024);
    row_path("50,000 path segments", "/%s", long_path, (struct req){.key = a->key},
        E_REFUSED(404, 10, "path", "not_found"));
    free(long_path);
    free(quoted);
    free(big);
}

/* The replayed pointer: the answer is the last debit's change and the pointer
 * after it, every time. */
static void replayed_pointer_rows(void) {
    const struct tenant *a = &fx.a;
    char path[160], pointer[96];
    int i;
    snprintf(path, sizeof path, "/status-changes/%s", a->early_pointer);
    for (i = 0; i < 3; i++) {
        AchBuffer out = {0};
        long status = send_req(fx.engine, (struct req){.path = path, .query = a->query, .key = a->key}, &out);
        checks_run++;
        if (status != 200 || count_of((const char *)out.data, "\"transaction_id\"") != 1 ||
            strstr((const char *)out.data, a->last) == NULL ||
            !json_string((const char *)out.data, "new_pointer", pointer, sizeof pointer) ||
            strcmp(pointer, a->pointer) != 0) {
            checks_failed++;
            fprintf(stderr, "replayed pointer: %.400s\n", out.data ? (const char *)out.data : "(nothing)");
        }
        ach_buffer_free(out);
        fx.rows++;
        CHECK(nothing_stored(fx.engine, "replayed pointer"));
    }
}

static void tenancy_rows(void) {
    const struct tenant *a = &fx.a, *b = &fx.b;
    char flipped[96], name[240], random_pointer[40], *path, *body;
    unsigned i, k;
    struct expect bad_pointer = E_REFUSED(422, 10, "pointer", "invalid_value");
    replayed_pointer_rows();

    snprintf(flipped, sizeof flipped, "%s", a->pointer);
    flipped[3] = flipped[3] == 'A' ? 'B' : 'A';
    snprintf(random_pointer, sizeof random_pointer, "%s", "q8Wd0c1xTz7YkPm3LbR5vN2hJ9sF4gEa");
    {
        struct {
            const char *name, *pointer;
            const struct tenant *as;
        } pointers[] = {
            {"forged (one character changed)", flipped, a},
            {"forged (random)", random_pointer, a},
            {"another partner's", a->pointer, b},
            {"an events pointer as a status pointer", a->events, a},
            {"0 with a sign", "-0", a},
            {"a number", "1", a},
            {"the last pointer with a character added", NULL, a},
        };
        char longer[120];
        snprintf(longer, sizeof longer, "%sA", a->pointer);
        pointers[6].pointer = longer;
        for (i = 0; i < sizeof pointers / sizeof pointers[0]; i++) {
            snprintf(name, sizeof name, "status pointer %s", pointers[i].name);
            row_path(name, "/status-changes/%s", pointers[i].pointer,
                (struct req){.query = pointers[i].as->query, .key = pointers[i].as->key}, bad_pointer);
        }
    }
    {
        struct {
            const char *name, *pointer, *key;
        } pointers[] = {
            {"forged", flipped, a->merchant_key},
            {"another merchant's", a->events, b->merchant_key},
            {"a status pointer", a->pointer, a->merchant_key},
        };
        for (i = 0; i < sizeof pointers / sizeof pointers[0]; i++) {
            snprintf(name, sizeof name, "events pointer %s", pointers[i].name);
            row_path(name, "/events/%s", pointers[i].pointer, (struct req){.key = pointers[i].key}, bad_pointer);
        }
    }

    /* B's key and partner id, naming A's resources: exactly like unknown ids. */
    for (i = 0; i < 2; i++) {
        const char *verb = i ? "reverse" : "void";
        path = format("/transactions/%s/%s", a->pending, verb);
        snprintf(name, sizeof name, "B %ss A's transaction", verb);
        row_like_unknown(name, (struct req){.method = "PUT", .path = path, .query = b->query, .key = b->key},
                         E_REFUSED(404, 10, "transaction_id", "not_found"), a->pending, "txn_");
        free(path);
    }
    path = format("/customers/%s", a->customer);
    row_like_unknown("B deletes A's customer", (struct req){.method = "DELETE", .path = path, .query = b->query, .key = b->key},
                     E_REFUSED(404, 10, "customer_id", "not_found"), a->customer, "cus_");
    free(path);
    {
        struct tenant b_with_a_merchant = *b;
        char token[120];
        snprintf(b_with_a_merchant.merchant, sizeof b_with_a_merchant.merchant, "%s", a->merchant);
        body = txn(&b_with_a_merchant, "1.00", NULL, NULL);
        row_like_unknown("B pays with A's merchant",
                         (struct req){.method = "POST", .path = "/transactions", .key = b->key, .body = body},
                         E_REFUSED(422, 11, "merchant_id", "not_found"), a->merchant, "mer_");
        free(body);
        snprintf(token, sizeof token, "{\"id\":\"%s\"}", a->customer);
        body = txn(b, "1.00", "customer", token);
        row_like_unknown("B pays with A's customer token",
                         (struct req){.method = "POST", .path = "/transactions", .key = b->key, .body = body}, E_ANY,
                         a->customer, "cus_");
        free(body);
        body = format("{\"partner_id\":\"%s\",\"merchant_id\":\"%s\",\"name\":\"Grace Hopper\","
                      "\"routing_number\":\"026009593\",\"account_number\":\"918273645598\","
                      "\"account_type\":\"savings\"}",
                      b->id, a->merchant);
        row_like_unknown("B stores a customer for A's merchant",
                         (struct req){.method = "POST", .path = "/customers", .key = b->key, .body = body},
                         E_REFUSED(422, 11, "merchant_id", "not_found"), a->merchant, "mer_");
        free(body);
    }

    /* Another key on A's partner id, at every partner endpoint. */
    {
        char *t = txn(a, "1.00", NULL, NULL);
        char *c = format("{\"partner_id\":\"%s\",\"merchant_id\":\"global\",\"name\":\"Grace Hopper\","
                         "\"routing_number\":\"026009593\",\"account_number\":\"918273645597\","
                         "\"account_type\":\"savings\"}",
                         a->id);
        char *app = format(APPLICATION, a->id, "[\"PPD\"]");
        char *p1 = format("/transactions/%s/void", a->pending);
        char *p2 = format("/transactions/%s/reverse", a->pending);
        char *p3 = format("/customers/%s", a->customer);
        char *p4 = format("/status-changes/%s", a->pointer);
        struct req reqs[] = {
            {"POST", "/transactions", NULL, NULL, NULL, t, NULL},
            {"POST", "/customers", NULL, NULL, NULL, c, NULL},
            {"POST", "/merchants", NULL, NULL, NULL, app, NULL},
            {"PUT", p1, a->query, NULL, NULL, NULL, NULL},
            {"PUT", p2, a->query, NULL, NULL, NULL, NULL},
            {"DELETE", p3, a->query, NULL, NULL, NULL, NULL},
            {"GET", "/status-changes/0", a->query, NULL, NULL, NULL, NULL},
            {"GET", p4, a->query, NULL, NULL, NULL, NULL},
        };
        const char *keys[] = {b->key, a->merchant_key, b->merchant_key};
        for (i = 0; i < sizeof reqs / sizeof reqs[0]; i++) {
            for (k = 0; k < 3; k++) {
                struct req r = reqs[i];
                r.key = keys[k];
                snprintf(name, sizeof name, "another key (%u) on A's %s %.40s", k, r.method, r.path);
                row(name, r, E_AUTH);
            }
        }
        free(t);
        free(c);
        free(app);
        free(p1);
        free(p2);
        free(p3);
        free(p4);
    }
    /* A partner's key on the merchant's feed and on the operator plane. */
    {
        char *limits = format("/admin/partners/%s/limits", a->id);
        char *approve = format("/admin/merchants/%s/approve", a->second);
        char *mlimits = format("/admin/merchants/%s/limits", a->merchant);
        char *ret = format("{\"transaction_id\":\"%s\",\"return_code\":\"R01\"}", a->pending);
        struct req admin[] = {
            {"POST", "/admin/partners", NULL, NULL, NULL, "{\"name\":\"Mallory\"}", NULL},
            {"POST", limits, NULL, NULL, NULL, "{\"daily_count\":1000000}", NULL},
            {"POST", approve, NULL, NULL, NULL, "{}", NULL},
            {"POST", mlimits, NULL, NULL, NULL, "{\"daily_count\":1000000}", NULL},
            {"POST", "/admin/returns", NULL, NULL, NULL, ret, NULL},
            {"POST", "/admin/clock", NULL, NULL, NULL, "{\"now\":\"2027-01-01T00:00:00Z\"}", NULL},
        };
        const char *keys[] = {a->key, b->key, a->merchant_key};
        for (k = 0; k < 3; k++) {
            snprintf(name, sizeof name, "another key (%u) on /events", k);
            if (k < 2) row(name, (struct req){.path = "/events", .key = keys[k]}, E_AUTH);
            for (i = 0; i < sizeof admin / sizeof admin[0]; i++) {
                struct req r = admin[i];
                r.key = keys[k];
                snprintf(name, sizeof name, "a partner or merchant key (%u) on %s", k, r.path);
                row(name, r, E_AUTH);
            }
        }
        free(limits);
        free(approve);
        free(mlimits);
        free(ret);
    }
    /* Malformed keys, as a host might pass a Basic-auth user name through. */
    {
        char with_colon[160], with_newline[160], basic[160], upper[160], *long_key = repeat("k", 257);
        const char *keys[8];
        size_t j;
        snprintf(with_colon, sizeof with_colon, "%s:", a->key);
        snprintf(with_newline, sizeof with_newline, "%s\\n", a->key);
        snprintf(basic, sizeof basic, "Basic %s", a->key);
        snprintf(upper, sizeof upper, "%s", a->key);
        for (j = 0; upper[j]; j++) {
            if (upper[j] >= 'a' && upper[j] <= 'z') upper[j] = (char)(upper[j] - 'a' + 'A');
        }
        keys[0] = "";
        keys[1] = " ";
        keys[2] = "pk_";
        keys[3] = with_colon;
        keys[4] = with_newline;
        keys[5] = basic;
        keys[6] = upper;
        keys[7] = long_key;
        for (i = 0; i < 8; i++) {
            snprintf(name, sizeof name, "malformed key %.20s", keys[i]);
            row(name, (struct req){.path = "/status-changes/0", .query = a->query, .key = keys[i]}, E_AUTH);
        }
        free(long_key);
    }
}

/* ------------------------------------------------------------------------ */
/* Threads misusing one handle                                                */

#define THREADS 4

struct probe {
    const char *name;
    char *env;
    AchResult code; /* the result code while the handle is open */
    long status;    /* and the HTTP status when that is ACH_OK */
    const char *detail; /* a part of the detail when the code is not ACH_OK */
};

static struct probe probes[8];
static unsigned n_probes;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int rounds_done;

struct worker {
    AchEngine *engine;
    int rounds, closed, ok_after_closed, wrong, wrong_detail;
};

static void *misuse(void *arg) {
    struct worker *w = arg;
    int i;
    for (i = 0; i < 1000000 && w->closed < 3; i++) {
        const struct probe *p = &probes[(unsigned)i % n_probes];
        AchBuffer sentinel = {(uint8_t *)"sentinel", 8};
        AchBuffer out = sentinel;
        AchResult r = ach_engine_request(w->engine, p->env, &out);
        if (r == ACH_CLOSED) {
            w->closed++;
            if (strstr(last_error_text(), "was closed") == NULL) w->wrong_detail++;
        } else if (w->closed > 0) {
            w->ok_after_closed++;
        } else if (r != p->code || (r == ACH_OK && json_last_int((const char *)out.data, "status") != p->status)) {
            w->wrong++;
            fprintf(stderr, "thread: %s answered %s %.200s\n", p->name, ach_result_name(r),
                    r == ACH_OK ? (const char *)out.data : last_error_text());
        } else if (r != ACH_OK && strstr(last_error_text(), p->detail) == NULL) {
            w->wrong_detail++; /* another thread's detail would show here */
        }
        if (r == ACH_OK) {
            ach_buffer_free(out);
        } else if (out.data != sentinel.data) {
            w->wrong++;
        }
        if ((unsigned)i % n_probes == n_probes - 1 && ++w->rounds == 1) {
            pthread_mutex_lock(&lock);
            rounds_done++;
            pthread_mutex_unlock(&lock);
            /* The second round only once every thread has done its first: rounds
             * repeated without a pause could keep a lock one thread waits on from
             * it for good (valgrind runs one thread at a time). */
            wait_for_count(&lock, &rounds_done, THREADS);
        }
    }
    return NULL;
}

static void *closer(void *arg) {
    ach_engine_close((AchEngine *)arg);
    return NULL;
}

static void add_probe(const char *name, char *env, AchResult code, long status, const char *detail) {
    probes[n_probes].name = name;
    probes[n_probes].env = env;
    probes[n_probes].code = code;
    probes[n_probes].status = status;
    probes[n_probes].detail = detail;
    n_probes++;
}

static void test_concurrent_misuse(void) {
    const struct tenant *a = &fx.a, *b = &fx.b;
    struct worker workers[THREADS];
    pthread_t threads[THREADS], second_closer;
    struct text t = {0};
    char *path, *body;
    int i;
    unsigned k;

    t_addf(&t, "{\"method\":\"POST\",\"path\":\"/transactions\",\"api_key\":\"%s\",\"body\":\"", a->key);
    t_repeat(&t, "[", 100000);
    t_add(&t, "\"}");
    add_probe("100,000 open arrays", t_take(&t), ACH_OK, 400, NULL);
    add_probe("invalid UTF-8", format("{\"method\":\"GET\",\"path\":\"/\xff\"}"), ACH_INVALID_UTF8, 0, "UTF-8");
    path = format("/transactions/%s/void", a->pending);
    add_probe("B voids A's transaction",
              envelope((struct req){.method = "PUT", .path = path, .query = b->query, .key = b->key}), ACH_OK, 404,
              NULL);
    free(path);
    body = txn(a, "1.00", "amount", "-0");
    add_probe("negative zero", envelope((struct req){.method = "POST", .path = "/transactions", .key = a->key, .body = body}),
              ACH_OK, 422, NULL);
    free(body);
    body = txn(a, "1.00", NULL, NULL);
    add_probe("B's key on A's create",
              envelope((struct req){.method = "POST", .path = "/transactions", .key = b->key, .body = body}), ACH_OK,
              401, NULL);
    free(body);
    add_probe("not JSON", format("{\"method\":\"GET\",\"path\""), ACH_INVALID_JSON, 0, "request_json");
    path = format("/status-changes/%sA", a->pointer);
    add_probe("a forged pointer", envelope((struct req){.path = path, .query = a->query, .key = a->key}), ACH_OK, 422,
              NULL);
    free(path);
    add_probe("an unknown member", format("{\"method\":\"GET\",\"path\":\"/\",\"x\":1}"), ACH_INVALID_ARGUMENT, 0,
              "unknown field");

    rounds_done = 0;
    for (i = 0; i < THREADS; i++) {
        memset(&workers[i], 0, sizeof workers[i]);
        workers[i].engine = fx.engine;
        CHECK(pthread_create(&threads[i], NULL, misuse, &workers[i]) == 0);
    }
    wait_for_count(&lock, &rounds_done, THREADS); /* every thread has sent every probe at least once */
    /* Two threads close the handle at once (a double close is harmless). */
    CHECK(pthread_create(&second_closer, NULL, closer, fx.engine) == 0);
    ach_engine_close(fx.engine);
    pthread_join(second_closer, NULL);
    for (i = 0; i < THREADS; i++) {
        pthread_join(threads[i], NULL);
        CHECK(workers[i].rounds >= 1);
        CHECK(workers[i].closed == 3);
        CHECK(workers[i].ok_after_closed == 0);
        CHECK(workers[i].wrong == 0);
        CHECK(workers[i].wrong_detail == 0);
    }
    for (k = 0; k < n_probes; k++) {
        AchBuffer out = {0};
        CHECK_RESULT(ach_engine_request(fx.engine, probes[k].env, &out), ACH_CLOSED);
        free(probes[k].env);
    }
    n_probes = 0;
}

/* ------------------------------------------------------------------------ */

static AchEngine *open_file(const char *dir) {
    char options[600];
    AchEngine *engine = NULL;
    snprintf(options, sizeof options,
             "{\"path\":\"%s/hostile.redb\",\"operator_key\":\"" OPERATOR_KEY "\",\"sandbox\":true,"
             "\"start\":\"" START "\"}",
             dir);
    CHECK_RESULT(ach_engine_open(options, &engine), ACH_OK);
    return engine;
}

/* Each partner has room for exactly one more 1.00 debit on its first merchant;
 * then the merchant's daily count (22) refuses, and on its second merchant the
 * partner's overall daily count (24). */
static void counters_unchanged(void) {
    const struct tenant *ts[2];
    unsigned i;
    ts[0] = &fx.a;
    ts[1] = &fx.b;
    for (i = 0; i < 2; i++) {
        debit(fx.engine, ts[i], ts[i]->merchant, "1.00", NULL, 0, 201, 0);
        debit(fx.engine, ts[i], ts[i]->merchant, "1.00", NULL, 0, 403, 22);
        debit(fx.engine, ts[i], ts[i]->second, "1.00", NULL, 0, 403, 24);
    }
}

int main(int argc, char **argv) {
    const char *tmp = argc > 1 ? argv[1] : "/tmp";
    char dir[512], path[600];
    AchEngine *closed;

    if (!load_catalogue()) {
        fprintf(stderr, "cannot read the catalogue %s (run from the repository root)\n", CATALOGUE_FILE);
        return 2;
    }
    snprintf(dir, sizeof dir, "%s/ach-c-hostile-XXXXXX", tmp);
    if (mkdtemp(dir) == NULL) {
        perror("mkdtemp");
        return 2;
    }
    setvbuf(stdout, NULL, _IONBF, 0);

    fx.engine = open_file(dir);
    make_tenant(fx.engine, &fx.a);
    make_tenant(fx.engine, &fx.b);
    CHECK(nothing_stored(fx.engine, "set-up"));
    if (checks_failed > 0) {
        printf("set-up failed: %d passed, %d failed\n", checks_run - checks_failed, checks_failed);
        return 1;
    }

    test_null_arguments();
    test_handles(dir);
    test_invalid_utf8();
    test_nul_truncation();
    test_envelopes();
    structure_rows();
    nul_rows();
    value_rows();
    size_rows();
    tenancy_rows();
    printf("%d rows, %d failed\n", fx.rows, fx.rows_failed);

    test_concurrent_misuse();
    /* Reopen the file: still nothing stored, and a normal request succeeds. */
    closed = fx.engine;
    fx.engine = open_file(dir);
    CHECK(fx.engine != closed);
    CHECK(nothing_stored(fx.engine, "after reopening"));
    counters_unchanged();
    ach_engine_close(fx.engine);

    snprintf(path, sizeof path, "%s/hostile.redb", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/hostile.redb.key", dir);
    unlink(path);
    rmdir(dir);
    printf("%d passed, %d failed\n", checks_run - checks_failed, checks_failed);
    return checks_failed == 0 ? 0 : 1;
}
