/*
 * Small helpers for the C tests of libach: checks that count failures, and
 * string helpers that pull fields out of the library's compact JSON answers.
 *
 * The answers are serde_json's compact output ({"body":{...},"status":201}), so
 * a string member reads `"name":"value"` with no spaces, and the values the
 * tests extract (ids, keys, pointers) contain no escapes.
 */
#ifndef ACH_TESTLIB_H
#define ACH_TESTLIB_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ach.h"

/* A complete merchant application (examples/requests/merchant.json): printf
 * format with the partner id (%s) and the standard entry classes as a JSON array
 * (%s); duplicates accepted, so tests may repeat amounts. */
#define APPLICATION \
    "{\"partner_id\":\"%s\"," \
    "\"company_info\":{\"check_guarantee\":false,\"name\":\"Acme Groceries LLC\",\"dba\":\"Acme Market\"," \
    "\"website\":\"https://www.acme-market.example.com\",\"address\":{\"address1\":\"100 Main St\"," \
    "\"address2\":\"Suite 4\",\"city\":\"Springfield\",\"state\":\"IL\",\"zip\":\"62701\"}}," \
    "\"velocities\":{\"expected_checks_per_year\":1200,\"expected_average_check_amount\":85.5," \
    "\"expected_sales_per_year\":\"2500000\",\"lowest_amount_allowed\":1.0,\"highest_amount_allowed\":5000," \
    "\"decline_duplicates\":false}," \
    "\"business_data\":{\"authorization_method\":\"Signed paper authorization at the counter\"," \
    "\"business_start_date\":\"2015-06-01\",\"merchant_category_code\":5411,\"goods_or_service\":\"Groceries\"," \
    "\"federal_tax_id\":\"12-3456789\",\"corporate_structure\":\"LLC\"}," \
    "\"custodial_bank_account\":{\"name\":\"JPMorgan Chase\",\"contact_name\":\"Pat Banker\"," \
    "\"contact_title\":\"Branch Manager\",\"routing\":\"021000021\",\"account\":\"123456789\",\"type\":\"checking\"," \
    "\"check_image_front\":\"iVBORw0KGgoAAAANSUhEUg==\",\"check_image_back\":\"iVBORw0KGgoAAAANSUhEUg==\"," \
    "\"address\":{\"address1\":\"270 Park Ave\",\"city\":\"New York\",\"state\":\"NY\",\"zip\":\"10017\"}}," \
    "\"billing_bank_account\":null," \
    "\"support_contact\":{\"name\":\"Acme Support\",\"email\":\"support@acme-market.example.com\"," \
    "\"phone\":\"(217) 555-0100\"}," \
    "\"principal\":[{\"name\":\"Jane Owner\",\"title\":\"Managing Member\",\"ssn\":\"123-45-6789\"," \
    "\"driver_license\":\"D123-4567-8901\",\"driver_license_state\":\"IL\",\"phone\":\"217.555.0102\"," \
    "\"email\":\"jane@acme-market.example.com\",\"address\":{\"address1\":\"9 Elm St\",\"city\":\"Springfield\"," \
    "\"state\":\"IL\",\"zip\":\"62702-1234\"}}]," \
    "\"standard_entry_classes\":%s,\"references\":null}"

static int checks_run = 0;
static int checks_failed = 0;

#define CHECK(cond)                                                                 \
    do {                                                                            \
        checks_run++;                                                               \
        if (!(cond)) {                                                              \
            checks_failed++;                                                        \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                           \
    } while (0)

/* Check that an expression answers an expected AchResult; on a mismatch print
 * both names and the thread's last error. */
#define CHECK_RESULT(expr, expected)                                                \
    do {                                                                            \
        AchResult got_ = (expr);                                                    \
        checks_run++;                                                               \
        if (got_ != (expected)) {                                                   \
            checks_failed++;                                                        \
            fprintf(stderr, "%s:%d: %s answered %s, expected %s (%s)\n", __FILE__,   \
                    __LINE__, #expr, ach_result_name(got_), ach_result_name(expected), \
                    last_error_text());                                             \
        }                                                                           \
    } while (0)

/* The thread's last error, copied into a static buffer (for messages). */
static const char *last_error_text(void) {
    static char text[1024];
    AchBuffer buf = {0};
    text[0] = '\0';
    if (ach_last_error(&buf) == ACH_OK) {
        snprintf(text, sizeof text, "%s", (const char *)buf.data);
    }
    ach_buffer_free(buf);
    return text;
}

/* Copy the string member `key` ("key":"...") of a JSON text into out, cut to
 * cap - 1 bytes; 1 if found, 0 if not (out is then ""). With several members of
 * that name the first one wins. */
static int json_string(const char *json, const char *key, char *out, size_t cap) {
    char pattern[128];
    const char *at;
    size_t n;
    out[0] = '\0';
    snprintf(pattern, sizeof pattern, "\"%s\":\"", key);
    at = strstr(json, pattern);
    if (at == NULL) {
        return 0;
    }
    at += strlen(pattern);
    n = strcspn(at, "\"");
    if (n >= cap) {
        n = cap - 1;
    }
    memcpy(out, at, n);
    out[n] = '\0';
    return 1;
}

/* The integer member `key` ("key":123) found last in a JSON text, or -1. The
 * last one, because a response ends with its HTTP "status" while its body may
 * carry members of that name too. */
static long json_last_int(const char *json, const char *key) {
    char pattern[128];
    const char *at = NULL;
    const char *p = json;
    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    while ((p = strstr(p, pattern)) != NULL) {
        at = p;
        p += strlen(pattern);
    }
    if (at == NULL || at[strlen(pattern)] < '0' || at[strlen(pattern)] > '9') {
        return -1;
    }
    return strtol(at + strlen(pattern), NULL, 10);
}

/* How many times `needle` occurs in `text`. */
static int count_of(const char *text, const char *needle) {
    int n = 0;
    const char *p = text;
    while ((p = strstr(p, needle)) != NULL) {
        n++;
        p += strlen(needle);
    }
    return n;
}

/* Send one request through ach_engine_request (NULL parts are left out of the
 * envelope; `body` is JSON text); answer the HTTP status and leave the response
 * in *out (free it), or -1 if the call failed. Inline: not every test sends
 * requests this way. */
static inline long request(AchEngine *engine, AchBuffer *out, const char *method, const char *path,
                    const char *query, const char *api_key, const char *body) {
    size_t cap = 256 + strlen(method) + strlen(path) + (query ? strlen(query) : 0) +
                 (api_key ? strlen(api_key) : 0) + (body ? strlen(body) : 0);
    char *envelope = malloc(cap);
    size_t n;
    AchResult r;
    if (envelope == NULL) {
        return -1;
    }
    n = (size_t)snprintf(envelope, cap, "{\"method\":\"%s\",\"path\":\"%s\"", method, path);
    if (query) n += (size_t)snprintf(envelope + n, cap - n, ",\"query\":\"%s\"", query);
    if (api_key) n += (size_t)snprintf(envelope + n, cap - n, ",\"api_key\":\"%s\"", api_key);
    if (body) n += (size_t)snprintf(envelope + n, cap - n, ",\"body\":%s", body);
    snprintf(envelope + n, cap - n, "}");
    r = ach_engine_request(engine, envelope, out);
    free(envelope);
    if (r != ACH_OK) {
        fprintf(stderr, "request %s %s: %s (%s)\n", method, path, ach_result_name(r), last_error_text());
        return -1;
    }
    return json_last_int((const char *)out->data, "status");
}

/* A request through `request` that must answer `status`; copies the string
 * member `field` of the answer into `value` when both are given. */
static inline void expect(AchEngine *engine, long status, const char *method, const char *path, const char *query,
                          const char *api_key, const char *body, const char *field, char *value, size_t cap) {
    AchBuffer out = {0};
    long got = request(engine, &out, method, path, query, api_key, body);
    checks_run++;
    if (got != status) {
        checks_failed++;
        fprintf(stderr, "%s %s answered %ld, expected %ld: %s\n", method, path, got, status,
                out.data ? (const char *)out.data : "(nothing)");
    }
    if (field != NULL) {
        CHECK(out.data != NULL && json_string((const char *)out.data, field, value, cap));
    }
    ach_buffer_free(out);
}

/* Send a request and check its status and that its answer holds `needle`
 * (unless NULL). */
static inline void expect_text(AchEngine *engine, long status, const char *method, const char *path,
                               const char *query, const char *api_key, const char *body, const char *needle) {
    AchBuffer out = {0};
    long got = request(engine, &out, method, path, query, api_key, body);
    const char *text = out.data ? (const char *)out.data : "(nothing)";
    checks_run++;
    if (got != status || (needle != NULL && strstr(text, needle) == NULL)) {
        checks_failed++;
        fprintf(stderr, "%s %s answered %ld, expected %ld with %s: %s\n", method, path, got, status,
                needle ? needle : "anything", text);
    }
    ach_buffer_free(out);
}

/* A partner and an approved merchant of it, with their ids and keys. */
struct partner_merchant {
    char partner_id[64];
    char partner_key[128];
    char merchant_id[64];
    char merchant_key[128];
};

/* Make a partner called `name` and an approved merchant of it for `classes` (a
 * JSON array of standard entry classes), checking every step. */
static inline void make_partner_merchant(AchEngine *engine, const char *operator_key, const char *name, const char *classes,
                               struct partner_merchant *t) {
    char *application = malloc(strlen(APPLICATION) + 128);
    char text[128];
    AchBuffer out = {0};
    snprintf(text, sizeof text, "{\"name\":\"%s\"}", name);
    CHECK(request(engine, &out, "POST", "/admin/partners", NULL, operator_key, text) == 201);
    CHECK(out.data != NULL && json_string((const char *)out.data, "partner_id", t->partner_id, sizeof t->partner_id));
    CHECK(out.data != NULL && json_string((const char *)out.data, "api_key", t->partner_key, sizeof t->partner_key));
    ach_buffer_free(out);
    if (application == NULL) {
        CHECK(0);
        return;
    }
    sprintf(application, APPLICATION, t->partner_id, classes);
    expect(engine, 201, "POST", "/merchants", NULL, t->partner_key, application, "id", t->merchant_id,
           sizeof t->merchant_id);
    free(application);
    snprintf(text, sizeof text, "/admin/merchants/%s/approve", t->merchant_id);
    expect(engine, 200, "POST", text, NULL, operator_key, "{\"limits\":{\"max_transaction_amount\":\"10000.00\"}}",
           "api_key", t->merchant_key, sizeof t->merchant_key);
}

/* Wait until `*count`, which `lock` guards, reaches `target`, looking every
 * millisecond. Inline: not every test runs threads. */
static inline void wait_for_count(pthread_mutex_t *lock, const int *count, int target) {
    int seen;
    do {
        pthread_mutex_lock(lock);
        seen = *count;
        pthread_mutex_unlock(lock);
        if (seen < target) {
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
        }
    } while (seen < target);
}

#endif /* ACH_TESTLIB_H */
