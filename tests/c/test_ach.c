/*
 * The C test of libach: every function, every result code, a file database,
 * handles (closed, forged), threads (concurrent requests, closing while others
 * call), and a whole lifecycle through the operator and partner planes.
 *
 * Built twice by tests/c/run.sh (against libach.a and libach.so) and run under
 * valgrind. Usage: test_ach [TMPDIR]   (default /tmp). Exit 0 when every check
 * passes; prints "N passed, N failed".
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"

#define OPERATOR_KEY "ok_c_test_operator_key_0123456789abcdef"
#define ENCRYPTION_KEY_A "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
#define ENCRYPTION_KEY_B "ff0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"


static const char *VALID_TRANSACTION =
    "{\"partner_id\":\"par_0123456789abcdefghijKL\",\"merchant_id\":\"mer_0123456789abcdefghijKL\","
    "\"amount\":\"125.50\",\"description\":\"Invoice 42\",\"type\":\"debit\",\"standard_entry_class\":\"PPD\","
    "\"customer\":{\"name\":\"Ada Lovelace\",\"routing_number\":\"021000021\",\"account_number\":\"123456789\","
    "\"account_type\":\"checking\"}}";

/* ------------------------------------------------------------------------ */
/* Requests                                                                  */

/* A partner and an approved PPD and WEB merchant, made after another partner so
 * that ids and keys are not the first ones issued. */
static void make_test_partner_merchant(AchEngine *engine, struct partner_merchant *t) {
    expect(engine, 201, "POST", "/admin/partners", NULL, OPERATOR_KEY, "{\"name\":\"Other Payments\"}", NULL,
           NULL, 0);
    make_partner_merchant(engine, OPERATOR_KEY, "Acme Payments", "[\"PPD\",\"WEB\"]", t);
}

/* Move the sandbox clock to `now` (RFC 3339): answered 200, with the answer's
 * counter `counter` ("originated", "settled") at `count`. */
static void advance_clock(AchEngine *engine, const char *now, const char *counter, long count) {
    char body[96];
    AchBuffer out = {0};
    long status, got = -1;
    snprintf(body, sizeof body, "{\"now\":\"%s\"}", now);
    status = request(engine, &out, "POST", "/admin/clock", NULL, OPERATOR_KEY, body);
    if (out.data != NULL) {
        got = json_last_int((const char *)out.data, counter);
    }
    checks_run++;
    if (status != 200 || got != count) {
        checks_failed++;
        fprintf(stderr, "clock to %s answered %ld with %s %ld, expected 200 with %ld: %s\n", now, status, counter,
                got, count, out.data ? (const char *)out.data : "(nothing)");
    }
    ach_buffer_free(out);
}

static AchEngine *open_engine(const char *options) {
    AchEngine *engine = NULL;
    CHECK_RESULT(ach_engine_open(options, &engine), ACH_OK);
    return engine;
}

static AchEngine *open_sandbox(void) {
    return open_engine("{\"operator_key\":\"" OPERATOR_KEY "\",\"sandbox\":true,"
                       "\"start\":\"2026-11-23T09:00:00-05:00\"}");
}

/* ------------------------------------------------------------------------ */
/* Version, result names, buffers, the last error, the panic boundary         */

static void test_version_and_names(void) {
    char expected[64];
    static const char *names[] = {"ACH_OK", "ACH_INVALID_ARGUMENT", "ACH_NULL_POINTER", "ACH_INVALID_UTF8",
                                  "ACH_INVALID_JSON", "ACH_STORAGE", "ACH_CLOSED", "ACH_PANIC",
                                  "ACH_WRONG_KEY", "ACH_UNKNOWN_HANDLE", "ACH_KEY_FILE"};
    unsigned i;
    snprintf(expected, sizeof expected, "%d.%d.%d", ACH_VERSION_MAJOR, ACH_VERSION_MINOR, ACH_VERSION_PATCH);
    CHECK(strcmp(ach_version(), expected) == 0);
    CHECK(ach_version() == ach_version());
    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
        CHECK(strcmp(ach_result_name((AchResult)i), names[i]) == 0);
    }
    CHECK(ACH_OK == 0 && ACH_PANIC == 7 && ACH_UNKNOWN_HANDLE == 9 && ACH_KEY_FILE == 10);
    CHECK(strcmp(ach_result_name((AchResult)11), "ACH_UNKNOWN_RESULT") == 0);
    CHECK(strcmp(ach_result_name((AchResult)UINT32_MAX), "ACH_UNKNOWN_RESULT") == 0);
}

static void test_buffers_errors_and_panics(void) {
    AchBuffer zero = {0};
    AchBuffer out = {0};
    ach_buffer_free(zero); /* harmless */

    CHECK_RESULT(ach_test_panic(), ACH_PANIC);
    CHECK(strcmp(last_error_text(), "panic: ach_test_panic was called") == 0);
    CHECK(strcmp(last_error_text(), "panic: ach_test_panic was called") == 0); /* reading keeps it */
    CHECK_RESULT(ach_last_error(NULL), ACH_NULL_POINTER);
    CHECK(strstr(last_error_text(), "ach_test_panic") != NULL);

    CHECK_RESULT(ach_validate("customer", "{}", &out), ACH_OK);
    CHECK(out.data != NULL && out.data[out.len] == '\0' && strlen((const char *)out.data) == out.len);
    ach_buffer_free(out);
    CHECK(strcmp(last_error_text(), "") == 0); /* success cleared it */

    out.data = NULL;
    CHECK_RESULT(ach_last_error(&out), ACH_OK);
    CHECK(out.data != NULL && out.len == 0 && out.data[0] == '\0');
    ach_buffer_free(out);

    /* ach_buffer_release: through a pointer, and the struct is zeroed after. */
    out.data = NULL;
    CHECK_RESULT(ach_validate("merchant", "{}", &out), ACH_OK);
    CHECK(out.data != NULL && out.len > 0);
    ach_buffer_release(&out);
    CHECK(out.data == NULL && out.len == 0);
    ach_buffer_release(&out); /* a second release: harmless */
    ach_buffer_release(NULL); /* harmless */
}

/* ------------------------------------------------------------------------ */
/* Validation                                                                 */

static void test_validate(void) {
    AchBuffer out = {0};
    AchBuffer untouched = {(uint8_t *)"sentinel", 8};
    const char *bad_utf8 = "{\"name\":\"\xff\"}";
    static const uint8_t with_nul[] = {'{', '"', 'a', '"', ':', 0, '}'};

    CHECK_RESULT(ach_validate("transaction", VALID_TRANSACTION, &out), ACH_OK);
    CHECK(strcmp((const char *)out.data, "{\"valid\":true,\"message\":null,\"errors\":[]}\n") == 0);
    ach_buffer_free(out);

    CHECK_RESULT(ach_validate("transaction", "{\"merchant_id\":\"mer_1\",\"amount\":\"1.234\"}", &out), ACH_OK);
    CHECK(strncmp((const char *)out.data, "{\"valid\":false,\"message\":", 25) == 0);
    CHECK(strstr((const char *)out.data, "\"field\":\"amount\"") != NULL);
    CHECK(out.data[out.len - 1] == '\n');
    ach_buffer_free(out);

    CHECK_RESULT(ach_validate("merchant", "{not json", &out), ACH_OK);
    CHECK(strstr((const char *)out.data, "invalid_json") != NULL);
    ach_buffer_free(out);

    out = untouched;
    CHECK_RESULT(ach_validate("payment", "{}", &out), ACH_INVALID_ARGUMENT);
    CHECK(strstr(last_error_text(), "payment") != NULL);
    CHECK_RESULT(ach_validate(NULL, "{}", &out), ACH_NULL_POINTER);
    CHECK(strcmp(last_error_text(), "kind is NULL") == 0);
    CHECK_RESULT(ach_validate("customer", NULL, &out), ACH_NULL_POINTER);
    CHECK_RESULT(ach_validate("customer", "{}", NULL), ACH_NULL_POINTER);
    CHECK_RESULT(ach_validate("customer", bad_utf8, &out), ACH_INVALID_UTF8);
    CHECK(strstr(last_error_text(), "offset 9") != NULL);
    CHECK_RESULT(ach_validate("\xfe", "{}", &out), ACH_INVALID_UTF8);
    CHECK(out.data == untouched.data && out.len == untouched.len); /* never written on failure */

    out.data = NULL;
    CHECK_RESULT(ach_validate_bytes("customer", with_nul, sizeof with_nul, &out), ACH_OK);
    CHECK(strstr((const char *)out.data, "invalid_json") != NULL);
    ach_buffer_free(out);
    CHECK_RESULT(ach_validate_bytes("customer", (const uint8_t *)bad_utf8, strlen(bad_utf8), &out), ACH_OK);
    CHECK(strstr((const char *)out.data, "UTF-8") != NULL);
    ach_buffer_free(out);
    CHECK_RESULT(ach_validate_bytes("transaction", (const uint8_t *)VALID_TRANSACTION, strlen(VALID_TRANSACTION),
                                    &out),
                 ACH_OK);
    CHECK(strncmp((const char *)out.data, "{\"valid\":true", 13) == 0);
    ach_buffer_free(out);
    CHECK_RESULT(ach_validate_bytes("customer", NULL, 0, &out), ACH_OK);
    ach_buffer_free(out);
    out = untouched;
    CHECK_RESULT(ach_validate_bytes("customer", NULL, 3, &out), ACH_NULL_POINTER);
    CHECK_RESULT(ach_validate_bytes("nope", with_nul, sizeof with_nul, &out), ACH_INVALID_ARGUMENT);
    CHECK(out.data == untouched.data);
}

/* ------------------------------------------------------------------------ */
/* Opening: options, files, keys                                              */

static void test_open_errors(const char *dir) {
    AchEngine *sentinel = (AchEngine *)&checks_run;
    AchEngine *engine = sentinel;
    char options[512];

    CHECK_RESULT(ach_engine_open(NULL, &engine), ACH_NULL_POINTER);
    CHECK_RESULT(ach_engine_open("{}", NULL), ACH_NULL_POINTER);
    CHECK_RESULT(ach_engine_open("{", &engine), ACH_INVALID_JSON);
    CHECK_RESULT(ach_engine_open("{\"sandbox\":true,\"bogus_member\":1}", &engine), ACH_INVALID_ARGUMENT);
    CHECK(strstr(last_error_text(), "bogus_member") != NULL);
    CHECK_RESULT(ach_engine_open("[]", &engine), ACH_INVALID_ARGUMENT);
    CHECK_RESULT(ach_engine_open("{\"sandbox\":\"yes\"}", &engine), ACH_INVALID_ARGUMENT);
    CHECK_RESULT(ach_engine_open("{\"encryption_key\":\"not hex\"}", &engine), ACH_INVALID_ARGUMENT);
    CHECK(strstr(last_error_text(), "encryption_key") != NULL);
    CHECK_RESULT(ach_engine_open("{\"sandbox\":true,\"start\":\"tomorrow\"}", &engine), ACH_INVALID_ARGUMENT);
    CHECK_RESULT(ach_engine_open("{\"start\":\"2026-11-23T09:00:00Z\"}", &engine), ACH_INVALID_ARGUMENT);
    CHECK_RESULT(ach_engine_open("{\"path\":\"\xff\"}", &engine), ACH_INVALID_UTF8);
    snprintf(options, sizeof options, "{\"path\":\"%s/no/such/dir/x.redb\",\"encryption_key\":\"%s\"}", dir,
             ENCRYPTION_KEY_A);
    CHECK_RESULT(ach_engine_open(options, &engine), ACH_STORAGE);
    CHECK(engine == sentinel); /* never written on failure */

    engine = open_engine("{}"); /* every default: in memory, system clock, no operator */
    expect_text(engine, 401, "POST", "/admin/partners", NULL, OPERATOR_KEY, "{\"name\":\"x\"}", NULL);
    ach_engine_close(engine);
}

static void test_file_database(const char *dir) {
    char path[400], options[800], key_path[420], partner_key[128], partner_id[64];
    AchEngine *engine, *second = NULL;
    FILE *f;

    snprintf(path, sizeof path, "%s/ach-c-test.redb", dir);
    snprintf(key_path, sizeof key_path, "%s.key", path);
    unlink(path);
    unlink(key_path);

    /* First open: creates the database and its key file <path>.key. */
    snprintf(options, sizeof options, "{\"path\":\"%s\",\"operator_key\":\"%s\"}", path, OPERATOR_KEY);
    engine = open_engine(options);
    CHECK(access(key_path, R_OK) == 0);
    {
        AchBuffer out = {0};
        CHECK(request(engine, &out, "POST", "/admin/partners", NULL, OPERATOR_KEY, "{\"name\":\"Kept\"}") == 201);
        CHECK(json_string((const char *)out.data, "api_key", partner_key, sizeof partner_key));
        CHECK(json_string((const char *)out.data, "partner_id", partner_id, sizeof partner_id));
        ach_buffer_free(out);
    }
    /* The same file twice at once: refused, the first engine unharmed. */
    CHECK_RESULT(ach_engine_open(options, &second), ACH_STORAGE);
    CHECK(second == NULL);
    ach_engine_close(engine);

    /* Reopened: the partner's key still works (committed data is durable). */
    engine = open_engine(options);
    {
        char query[128];
        snprintf(query, sizeof query, "partner_id=%s", partner_id);
        expect_text(engine, 200, "GET", "/status-changes/0", query, partner_key, NULL, NULL);
    }
    ach_engine_close(engine);

    /* Another key than the database's: refused. */
    snprintf(options, sizeof options, "{\"path\":\"%s\",\"encryption_key\":\"%s\"}", path, ENCRYPTION_KEY_B);
    CHECK_RESULT(ach_engine_open(options, &engine), ACH_WRONG_KEY);

    /* A key file that holds no key: refused. */
    f = fopen(key_path, "w");
    CHECK(f != NULL);
    if (f != NULL) {
        fputs("this is not a key\n", f);
        fclose(f);
    }
    snprintf(options, sizeof options, "{\"path\":\"%s\"}", path);
    CHECK_RESULT(ach_engine_open(options, &engine), ACH_KEY_FILE);
    CHECK(strstr(last_error_text(), ".key") != NULL);

    unlink(path);
    unlink(key_path);
}

/* ------------------------------------------------------------------------ */
/* Handles and envelopes                                                      */

static void test_handles_and_envelopes(void) {
    AchEngine *engine = open_sandbox();
    AchEngine *forged = (AchEngine *)&checks_failed;
    AchEngine *never_issued = (AchEngine *)(uintptr_t)0x7fffffACu;
    AchBuffer untouched = {(uint8_t *)"sentinel", 8};
    AchBuffer out = untouched;
    const char *get = "{\"method\":\"GET\",\"path\":\"/categories\"}";

    CHECK_RESULT(ach_engine_request(NULL, get, &out), ACH_NULL_POINTER);
    CHECK_RESULT(ach_engine_request(forged, get, &out), ACH_UNKNOWN_HANDLE);
    CHECK_RESULT(ach_engine_request(never_issued, get, &out), ACH_UNKNOWN_HANDLE);
    CHECK_RESULT(ach_engine_request(engine, NULL, &out), ACH_NULL_POINTER);
    CHECK_RESULT(ach_engine_request(engine, get, NULL), ACH_NULL_POINTER);
    CHECK_RESULT(ach_engine_request(engine, "{not json", &out), ACH_INVALID_JSON);
    CHECK_RESULT(ach_engine_request(engine, "{\"method\":\"GET\"}", &out), ACH_INVALID_ARGUMENT);
    CHECK(strstr(last_error_text(), "path") != NULL);
    CHECK_RESULT(ach_engine_request(engine, "{\"method\":\"GET\",\"path\":\"/\",\"header\":1}", &out),
                 ACH_INVALID_ARGUMENT);
    CHECK_RESULT(ach_engine_request(engine, "{\"method\":\"GET\",\"path\":\"/\xc3\"}", &out), ACH_INVALID_UTF8);
    CHECK(out.data == untouched.data && out.len == untouched.len);

    /* Answers are data: no key is a 401, an unknown path a 404, both ACH_OK. */
    out.data = NULL;
    CHECK_RESULT(ach_engine_request(engine, get, &out), ACH_OK);
    CHECK(strcmp((const char *)out.data, "{\"body\":{\"message\":\"Authentication failed.\",\"success\":false},"
                                         "\"status\":401}") == 0);
    ach_buffer_free(out);
    expect_text(engine, 404, "GET", "/nowhere", NULL, OPERATOR_KEY, NULL, NULL);
    expect_text(engine, 200, "GET", "/openapi.json", NULL, NULL, NULL, NULL);

    ach_engine_close(engine);
    out = untouched;
    CHECK_RESULT(ach_engine_request(engine, get, &out), ACH_CLOSED);
    CHECK(strstr(last_error_text(), "closed") != NULL);
    CHECK(out.data == untouched.data);
    ach_engine_close(engine); /* twice: harmless */
    ach_engine_close(NULL);   /* harmless */
    ach_engine_close(forged); /* harmless: never a handle */
    CHECK_RESULT(ach_engine_request(engine, get, &out), ACH_CLOSED);
}

/* ------------------------------------------------------------------------ */
/* The whole lifecycle                                                        */

static void transaction_body(char *out, size_t cap, const struct partner_merchant *t, const char *type,
                             const char *amount, const char *customer) {
    snprintf(out, cap,
             "{\"partner_id\":\"%s\",\"merchant_id\":\"%s\",\"amount\":\"%s\",\"description\":\"C test\","
             "\"type\":\"%s\",\"standard_entry_class\":\"PPD\",\"customer\":%s}",
             t->partner_id, t->merchant_id, amount, type, customer);
}

static void test_lifecycle(void) {
    AchEngine *engine = open_sandbox();
    struct partner_merchant t;
    char body[1024], query[128], path[160], customer[64], token[96];
    char voided[64], returned[64], settled[64], reversal[64], pointer[64];
    AchBuffer out = {0};
    const char *inline_customer = "{\"name\":\"Ada Lovelace\",\"routing_number\":\"021000021\","
                                  "\"account_number\":\"987654321\",\"account_type\":\"checking\"}";

    make_test_partner_merchant(engine, &t);
    snprintf(query, sizeof query, "partner_id=%s", t.partner_id);

    /* Customers: a stored account, then a transaction through its token. */
    snprintf(body, sizeof body,
             "{\"partner_id\":\"%s\",\"merchant_id\":\"%s\",\"name\":\"Grace Hopper\","
             "\"routing_number\":\"026009593\",\"account_number\":\"12345678\",\"account_type\":\"savings\"}",
             t.partner_id, t.merchant_id);
    expect(engine, 201, "POST", "/customers", NULL, t.partner_key, body, "id", customer, sizeof customer);
    CHECK(strncmp(customer, "cus_", 4) == 0);
    snprintf(token, sizeof token, "{\"id\":\"%s\"}", customer);

    /* Debits: one to void, one to be returned, one to settle and reverse. */
    transaction_body(body, sizeof body, &t, "debit", "10.00", inline_customer);
    expect(engine, 201, "POST", "/transactions", NULL, t.partner_key, body, "id", voided, sizeof voided);
    transaction_body(body, sizeof body, &t, "debit", "20.00", token);
    expect(engine, 201, "POST", "/transactions", NULL, t.partner_key, body, "id", returned, sizeof returned);
    transaction_body(body, sizeof body, &t, "debit", "30.00", inline_customer);
    expect(engine, 201, "POST", "/transactions", NULL, t.partner_key, body, "id", settled, sizeof settled);
    CHECK(strncmp(settled, "txn_", 4) == 0);

    /* A refusal is an answer: over the merchant's limit (message 21, HTTP 403). */
    transaction_body(body, sizeof body, &t, "debit", "20000.00", inline_customer);
    expect_text(engine, 403, "POST", "/transactions", NULL, t.partner_key, body, "\"error_code\":21");
    /* Another partner's key, or none: 401. */
    expect_text(engine, 401, "POST", "/transactions", NULL, "pk_not_a_key", body, NULL);

    /* Void while Pending. */
    snprintf(path, sizeof path, "/transactions/%s/void", voided);
    expect_text(engine, 200, "PUT", path, query, t.partner_key, NULL, "\"status\":\"voided\"");

    /* The customer can go; its transactions keep their own copy of the account. */
    snprintf(path, sizeof path, "/customers/%s", customer);
    expect_text(engine, 200, "DELETE", path, query, t.partner_key, NULL, NULL);

    /* Past the 6 PM ET cut-off: the two live debits originate. */
    advance_clock(engine, "2026-11-23T18:30:00-05:00", "originated", 2);
    /* Void after origination: refused (409). */
    snprintf(path, sizeof path, "/transactions/%s/void", settled);
    expect_text(engine, 409, "PUT", path, query, t.partner_key, NULL, NULL);

    /* The bank returns one (R01). */
    snprintf(body, sizeof body, "{\"transaction_id\":\"%s\",\"return_code\":\"R01\"}", returned);
    expect_text(engine, 200, "POST", "/admin/returns", NULL, OPERATOR_KEY, body, NULL);

    /* Settlement: debits settle two banking days after their effective date. */
    advance_clock(engine, "2026-12-01T09:00:00-05:00", "settled", 1);
    /* The sandbox clock never goes back. */
    expect_text(engine, 422, "POST", "/admin/clock", NULL, OPERATOR_KEY, "{\"now\":\"2026-11-01T00:00:00Z\"}",
                NULL);

    /* Reverse the settled debit: a new credit. */
    snprintf(path, sizeof path, "/transactions/%s/reverse", settled);
    expect(engine, 200, "PUT", path, query, t.partner_key, NULL, "reversal_id", reversal, sizeof reversal);
    CHECK(strncmp(reversal, "txn_", 4) == 0 && strcmp(reversal, settled) != 0);

    /* The partner's status-changes feed: every change, in order. */
    CHECK(request(engine, &out, "GET", "/status-changes/0", query, t.partner_key, NULL) == 200);
    {
        const char *feed = (const char *)out.data;
        CHECK(strstr(feed, "\"success\":\"true\"") != NULL);
        CHECK(count_of(feed, "\"status\":\"A\"") == 4);
        CHECK(count_of(feed, "\"status\":\"B\"") == 2);
        CHECK(count_of(feed, "\"status\":\"S\"") == 1);
        CHECK(count_of(feed, "\"status\":\"R\"") == 2);
        CHECK(count_of(feed, "\"return_code\":\"R01\"") == 1);
        CHECK(count_of(feed, "\"reason\":\"Voided\"") == 1);
        CHECK(strstr(feed, reversal) != NULL);
        CHECK(json_string(feed, "new_pointer", pointer, sizeof pointer));
    }
    ach_buffer_free(out);
    snprintf(path, sizeof path, "/status-changes/%s", pointer);
    expect_text(engine, 200, "GET", path, query, t.partner_key, NULL, "\"changes\":[]");

    /* The merchant's events feed: the same nine changes, then nothing more. */
    CHECK(request(engine, &out, "GET", "/events", NULL, t.merchant_key, NULL) == 200);
    CHECK(count_of((const char *)out.data, "\"type\":\"transaction.status_changed\"") == 9);
    CHECK(strstr((const char *)out.data, "\"exists_more_events\":false") != NULL);
    CHECK(json_string((const char *)out.data, "new_pointer", pointer, sizeof pointer));
    ach_buffer_free(out);
    snprintf(path, sizeof path, "/events/%s", pointer);
    expect_text(engine, 200, "GET", path, NULL, t.merchant_key, NULL, "\"events\":[]");

    /* Read one back: its history, the account cut to its last four digits. */
    snprintf(path, sizeof path, "/transactions/%s", returned);
    CHECK(request(engine, &out, "GET", path, query, t.partner_key, NULL) == 200);
    {
        const char *read = (const char *)out.data;
        CHECK(strstr(read, "\"success\":true") != NULL);
        CHECK(strstr(read, "\"account_number_last4\":\"5678\"") != NULL);
        CHECK(strstr(read, "12345678") == NULL);
        CHECK(strstr(read, "\"return\":{\"code\":\"R01\"") != NULL);
        CHECK(count_of(read, "\"change_timestamp\"") == 3);
    }
    ach_buffer_free(out);
    /* List a page of two by the merchant's key, then the rest by its cursor. */
    CHECK(request(engine, &out, "GET", "/transactions", "limit=2", t.merchant_key, NULL) == 200);
    CHECK(count_of((const char *)out.data, "\"standard_entry_class\"") == 2);
    CHECK(strstr((const char *)out.data, reversal) != NULL);
    CHECK(json_string((const char *)out.data, "next_cursor", pointer, sizeof pointer));
    ach_buffer_free(out);
    snprintf(body, sizeof body, "limit=100&after=%s", pointer);
    CHECK(request(engine, &out, "GET", "/transactions", body, t.merchant_key, NULL) == 200);
    CHECK(count_of((const char *)out.data, "\"standard_entry_class\"") == 2);
    CHECK(strstr((const char *)out.data, "\"next_cursor\":null") != NULL);
    ach_buffer_free(out);

    ach_engine_close(engine);
}

/* ------------------------------------------------------------------------ */
/* Same Day ACH                                                               */

static void same_day_body(char *out, size_t cap, const struct partner_merchant *t, const char *amount) {
    snprintf(out, cap,
             "{\"partner_id\":\"%s\",\"merchant_id\":\"%s\",\"amount\":\"%s\",\"description\":\"C same day\","
             "\"type\":\"debit\",\"standard_entry_class\":\"PPD\",\"same_day\":true,\"customer\":"
             "{\"name\":\"Ada Lovelace\",\"routing_number\":\"021000021\",\"account_number\":\"987654321\","
             "\"account_type\":\"checking\"}}",
             t->partner_id, t->merchant_id, amount);
}

static void test_same_day(void) {
    AchEngine *engine = open_sandbox();
    struct partner_merchant t;
    char body[1024], query[128], path[160], id[64];
    AchBuffer out = {0};

    make_test_partner_merchant(engine, &t);
    snprintf(query, sizeof query, "partner_id=%s", t.partner_id);
    /* At 09:00 ET: the 10:00 window. */
    same_day_body(body, sizeof body, &t, "12.00");
    expect(engine, 201, "POST", "/transactions", NULL, t.partner_key, body, "id", id, sizeof id);
    /* Over a million dollars: message 14, problem same_day_limit. */
    same_day_body(body, sizeof body, &t, "1000000.01");
    CHECK(request(engine, &out, "POST", "/transactions", NULL, t.partner_key, body) == 422);
    CHECK(strstr((const char *)out.data, "\"error_code\":14") != NULL);
    CHECK(strstr((const char *)out.data, "\"code\":\"same_day_limit\"") != NULL);
    ach_buffer_free(out);
    /* The window's cut-off originates it, dated today. */
    advance_clock(engine, "2026-11-23T10:00:00-05:00", "originated", 1);
    snprintf(path, sizeof path, "/transactions/%s", id);
    CHECK(request(engine, &out, "GET", path, query, t.partner_key, NULL) == 200);
    CHECK(strstr((const char *)out.data, "\"same_day\":true") != NULL);
    CHECK(strstr((const char *)out.data, "\"effective_date\":\"2026-11-23\"") != NULL);
    CHECK(strstr((const char *)out.data, "\"settlement_date\":\"2026-11-23\"") != NULL);
    ach_buffer_free(out);
    /* It settles at 13:00 ET the same day. */
    advance_clock(engine, "2026-11-23T13:00:00-05:00", "settled", 1);
    CHECK(request(engine, &out, "GET", path, query, t.partner_key, NULL) == 200);
    /* Its status, and the last change of its history. */
    CHECK(count_of((const char *)out.data, "\"status\":\"S\"") == 2);
    ach_buffer_free(out);
    ach_engine_close(engine);
}

/* ------------------------------------------------------------------------ */
/* Image cash letters                                                         */

/* A 96 x 40 grey PNG with a bar of ink: a readable check picture. */
#define CHECK_PNG "iVBORw0KGgoAAAANSUhEUgAAAGAAAAAoCAAAAAAk+KDlAAAAMklEQVR42u3TMQ0AAAgEMUTg3yAmMPEMJD0Dna7muAIAAABAFuhgAMAR4GQAAAAAPAYWaIAG6YYmWG0AAAAASUVORK5CYII="

static void test_image_cash_letter(void) {
    AchEngine *engine = open_sandbox();
    struct partner_merchant t;
    char body[2048];
    AchBuffer out = {0};

    make_partner_merchant(engine, OPERATOR_KEY, "Check Deposits", "[\"PPD\",\"ICL\"]", &t);
    snprintf(body, sizeof body,
             "{\"partner_id\":\"%s\",\"merchant_id\":\"%s\",\"amount\":\"88.20\",\"description\":\"C check\","
             "\"type\":\"debit\",\"standard_entry_class\":\"ICL\",\"check_number\":\"7001\","
             "\"check_image_front\":\"" CHECK_PNG "\",\"check_image_back\":\"" CHECK_PNG "\","
             "\"customer\":{\"name\":\"Ada Lovelace\",\"routing_number\":\"021000021\","
             "\"account_number\":\"987654321\",\"account_type\":\"checking\"}}",
             t.partner_id, t.merchant_id);
    expect(engine, 201, "POST", "/transactions", NULL, t.partner_key, body, NULL, NULL, 0);
    /* The 18:00 cut-off writes its letter. */
    advance_clock(engine, "2026-11-23T18:00:00-05:00", "originated", 1);
    CHECK(request(engine, &out, "GET", "/admin/image-cash-letters", NULL, OPERATOR_KEY, NULL) == 200);
    CHECK(strstr((const char *)out.data, "\"id\":\"icl_20261123A\"") != NULL);
    CHECK(strstr((const char *)out.data, "\"items\":1") != NULL);
    CHECK(strstr((const char *)out.data, "\"total\":88.20") != NULL);
    ach_buffer_free(out);
    /* Its bytes, in base64 through the JSON form. */
    expect_text(engine, 200, "GET", "/admin/image-cash-letters/icl_20261123A", NULL, OPERATOR_KEY, NULL,
                "\"content_base64\":\"");
    ach_engine_close(engine);
}

/* ------------------------------------------------------------------------ */
/* Account validation before WEB debits (Nacha Rules 2.5.17.4)               */

static void test_account_validation(void) {
    AchEngine *engine = open_sandbox();
    struct partner_merchant t;
    char body[1024], path[200], customer[64], other[64], validation[64];

    make_test_partner_merchant(engine, &t);
    for (int i = 0; i < 2; i++) {
        snprintf(body, sizeof body,
                 "{\"partner_id\":\"%s\",\"merchant_id\":\"%s\",\"name\":\"Grace Hopper\","
                 "\"routing_number\":\"026009593\",\"account_number\":\"4444555%d\",\"account_type\":\"checking\"}",
                 t.partner_id, t.merchant_id, i);
        expect(engine, 201, "POST", "/customers", NULL, t.partner_key, body, "id", i == 0 ? customer : other,
               sizeof customer);
    }
    /* A WEB debit to an account not validated for the partner: refused. */
    snprintf(body, sizeof body,
             "{\"partner_id\":\"%s\",\"merchant_id\":\"%s\",\"amount\":\"9.99\",\"description\":\"C test\","
             "\"type\":\"debit\",\"standard_entry_class\":\"WEB\",\"customer\":{\"id\":\"%s\"}}",
             t.partner_id, t.merchant_id, customer);
    expect_text(engine, 422, "POST", "/transactions", NULL, t.partner_key, body, "\"code\":\"account_not_validated\"");
    /* Validated by an outside service, it takes the debit. */
    char validate[512];
    snprintf(validate, sizeof validate,
             "{\"partner_id\":\"%s\",\"merchant_id\":\"%s\",\"method\":\"outside\",\"provider\":\"Acme Verify\","
             "\"reference\":\"c-1\"}",
             t.partner_id, t.merchant_id);
    snprintf(path, sizeof path, "/customers/%s/validations", customer);
    expect_text(engine, 201, "POST", path, NULL, t.partner_key, validate, "\"status\":\"validated\"");
    expect_text(engine, 201, "POST", "/transactions", NULL, t.partner_key, body, NULL);
    /* Micro-entries for the other account: a wrong pair is refused and counted. */
    snprintf(validate, sizeof validate, "{\"partner_id\":\"%s\",\"merchant_id\":\"%s\",\"method\":\"micro_entries\"}",
             t.partner_id, t.merchant_id);
    snprintf(path, sizeof path, "/customers/%s/validations", other);
    expect(engine, 201, "POST", path, NULL, t.partner_key, validate, "id", validation, sizeof validation);
    CHECK(strncmp(validation, "val_", 4) == 0);
    snprintf(path, sizeof path, "/customers/%s/validations/%s/confirm", other, validation);
    snprintf(body, sizeof body, "{\"partner_id\":\"%s\",\"amounts\":[\"1.00\",\"2.00\"]}", t.partner_id);
    expect_text(engine, 422, "POST", path, NULL, t.partner_key, body, "\"code\":\"invalid_amount\"");
    ach_engine_close(engine);
}

/* ------------------------------------------------------------------------ */
/* Fraud monitoring: a held entry, reviewed and released                     */

static void test_review(void) {
    AchEngine *engine = open_sandbox();
    struct partner_merchant t;
    char body[1024], path[200], held[64];
    AchBuffer out = {0};

    make_test_partner_merchant(engine, &t);
    snprintf(body, sizeof body,
             "{\"partner_id\":\"%s\",\"merchant_id\":\"%s\",\"amount\":\"5.00\",\"description\":\"C test\","
             "\"type\":\"debit\",\"standard_entry_class\":\"PPD\",\"customer\":{\"name\":\"Ada Lovelace\","
             "\"routing_number\":\"026009593\",\"account_number\":\"31415926\",\"account_type\":\"checking\"}}",
             t.partner_id, t.merchant_id);
    /* Ten entries to one account in a day pass; the eleventh is held. */
    for (int i = 0; i < 10; i++) {
        expect_text(engine, 201, "POST", "/transactions", NULL, t.partner_key, body, NULL);
    }
    expect_text(engine, 200, "GET", "/admin/reviews", NULL, OPERATOR_KEY, NULL, "\"reviews\":[]");
    expect(engine, 201, "POST", "/transactions", NULL, t.partner_key, body, "id", held, sizeof held);
    CHECK(request(engine, &out, "GET", "/admin/reviews", NULL, OPERATOR_KEY, NULL) == 200);
    CHECK(strstr((const char *)out.data, held) != NULL);
    CHECK(strstr((const char *)out.data, "\"rules\":[\"velocity\"]") != NULL);
    ach_buffer_free(out);
    /* The merchant hears of the hold. */
    CHECK(request(engine, &out, "GET", "/events", NULL, t.merchant_key, NULL) == 200);
    CHECK(count_of((const char *)out.data, "\"type\":\"transaction.held_for_review\"") == 1);
    ach_buffer_free(out);
    /* Released once; a second decision is a conflict. */
    snprintf(path, sizeof path, "/admin/reviews/%s/release", held);
    expect_text(engine, 200, "POST", path, NULL, OPERATOR_KEY, "{\"note\":\"confirmed by phone\"}",
                "\"status\":\"released\"");
    snprintf(path, sizeof path, "/admin/reviews/%s/reject", held);
    expect_text(engine, 409, "POST", path, NULL, OPERATOR_KEY, NULL, NULL);
    expect_text(engine, 200, "GET", "/admin/reviews", NULL, OPERATOR_KEY, NULL, "\"reviews\":[]");
    ach_engine_close(engine);
}

/* ------------------------------------------------------------------------ */
/* Threads                                                                    */

/* Sixteen threads, as a host's worker pool: their concurrent creates share
 * the engine's commits (group commit), and each must still get its own
 * answer and land exactly once. */
#define THREADS 16
#define WRITES_PER_THREAD 12

struct worker {
    AchEngine *engine;
    const struct partner_merchant *tenant;
    int index;
    int ok;          /* calls answered ACH_OK */
    int closed;      /* calls answered ACH_CLOSED */
    int other;       /* any other answer, or OK after CLOSED */
    int created;     /* 201s */
};

static pthread_mutex_t progress_lock = PTHREAD_MUTEX_INITIALIZER;
static int progress = 0;

static void *writer(void *arg) {
    struct worker *w = arg;
    char body[1024], amount[16];
    int i;
    const char *inline_customer = "{\"name\":\"Ada Lovelace\",\"routing_number\":\"021000021\","
                                  "\"account_number\":\"987654321\",\"account_type\":\"checking\"}";
    for (i = 0; i < WRITES_PER_THREAD; i++) {
        AchBuffer out = {0};
        snprintf(amount, sizeof amount, "%d.%02d", w->index + 1, i + 1);
        transaction_body(body, sizeof body, w->tenant, "debit", amount, inline_customer);
        if (request(w->engine, &out, "POST", "/transactions", NULL, w->tenant->partner_key, body) == 201) {
            w->created++;
        }
        ach_buffer_free(out);
    }
    return NULL;
}

/* Read until the engine is closed under us; count the answers. A reader
 * makes its second call only once every reader has made its first: calls
 * repeated without a pause could otherwise keep a lock one reader waits on
 * from it for good (valgrind runs one thread at a time), and the close,
 * which waits for every first call, would never come. */
static void *reader(void *arg) {
    struct worker *w = arg;
    char envelope[512];
    int i;
    snprintf(envelope, sizeof envelope,
             "{\"method\":\"GET\",\"path\":\"/status-changes/0\",\"query\":\"partner_id=%s\",\"api_key\":\"%s\"}",
             w->tenant->partner_id, w->tenant->partner_key);
    for (i = 0; i < 100000; i++) {
        AchBuffer out = {0};
        AchResult r = ach_engine_request(w->engine, envelope, &out);
        if (r == ACH_OK && w->closed == 0 && json_last_int((const char *)out.data, "status") == 200) {
            w->ok++;
        } else if (r == ACH_CLOSED) {
            w->closed++;
        } else {
            w->other++;
        }
        ach_buffer_free(out);
        if (i == 0) { /* count threads that have completed a call; wait for the others */
            pthread_mutex_lock(&progress_lock);
            progress++;
            pthread_mutex_unlock(&progress_lock);
            wait_for_count(&progress_lock, &progress, THREADS);
        }
        if (w->closed >= 3) {
            break;
        }
    }
    return NULL;
}

/* How many different "transaction_id" values a feed page holds. */
static int distinct_ids(const char *page) {
    static char seen[THREADS * WRITES_PER_THREAD][64];
    int count = 0;
    const char *at = page;
    while ((at = strstr(at, "\"transaction_id\":\"")) != NULL) {
        char id[64];
        int i, n = 0, known = 0;
        at += strlen("\"transaction_id\":\"");
        while (at[n] != '"' && at[n] != '\0' && n < 63) {
            id[n] = at[n];
            n++;
        }
        id[n] = '\0';
        for (i = 0; i < count; i++) {
            known |= strcmp(seen[i], id) == 0;
        }
        if (!known && count < THREADS * WRITES_PER_THREAD) {
            memcpy(seen[count++], id, (size_t)n + 1);
        }
        at += n;
    }
    return count;
}

static void test_threads(void) {
    AchEngine *engine = open_sandbox();
    struct partner_merchant t;
    struct worker workers[THREADS];
    pthread_t threads[THREADS];
    AchBuffer out = {0};
    char query[128];
    int i;

    make_test_partner_merchant(engine, &t);
    /* Concurrent writes on one engine: every one lands, none is lost. */
    for (i = 0; i < THREADS; i++) {
        memset(&workers[i], 0, sizeof workers[i]);
        workers[i].engine = engine;
        workers[i].tenant = &t;
        workers[i].index = i;
        CHECK(pthread_create(&threads[i], NULL, writer, &workers[i]) == 0);
    }
    for (i = 0; i < THREADS; i++) {
        pthread_join(threads[i], NULL);
        CHECK(workers[i].created == WRITES_PER_THREAD);
    }
    snprintf(query, sizeof query, "partner_id=%s", t.partner_id);
    CHECK(request(engine, &out, "GET", "/status-changes/0", query, t.partner_key, NULL) == 200);
    CHECK(count_of((const char *)out.data, "\"status\":\"A\"") == THREADS * WRITES_PER_THREAD);
    /* Every creation under its own id: no two answers shared one. */
    CHECK(distinct_ids((const char *)out.data) == THREADS * WRITES_PER_THREAD);
    ach_buffer_free(out);

    /* Concurrent reads, and a close while they run: each call either completes
     * normally or answers ACH_CLOSED, and once closed the handle stays closed. */
    progress = 0;
    for (i = 0; i < THREADS; i++) {
        memset(&workers[i], 0, sizeof workers[i]);
        workers[i].engine = engine;
        workers[i].tenant = &t;
        CHECK(pthread_create(&threads[i], NULL, reader, &workers[i]) == 0);
    }
    wait_for_count(&progress_lock, &progress, THREADS); /* every reader has completed a call */
    ach_engine_close(engine);
    for (i = 0; i < THREADS; i++) {
        pthread_join(threads[i], NULL);
        CHECK(workers[i].ok >= 1);
        CHECK(workers[i].closed == 3);
        CHECK(workers[i].other == 0);
    }
    CHECK_RESULT(ach_engine_request(engine, "{\"method\":\"GET\",\"path\":\"/\"}", &out), ACH_CLOSED);
}

int main(int argc, char **argv) {
    const char *tmp = argc > 1 ? argv[1] : "/tmp";
    char dir[512];

    snprintf(dir, sizeof dir, "%s/ach-c-test-XXXXXX", tmp);
    if (mkdtemp(dir) == NULL) {
        perror("mkdtemp");
        return 2;
    }
    setvbuf(stdout, NULL, _IONBF, 0);
    printf("libach %s (header %d.%d.%d)\n", ach_version(), ACH_VERSION_MAJOR, ACH_VERSION_MINOR,
           ACH_VERSION_PATCH);

    test_version_and_names();
    test_buffers_errors_and_panics();
    test_validate();
    test_open_errors(dir);
    test_file_database(dir);
    test_handles_and_envelopes();
    test_lifecycle();
    test_same_day();
    test_image_cash_letter();
    test_account_validation();
    test_review();
    test_threads();

    rmdir(dir);
    printf("%d passed, %d failed\n", checks_run - checks_failed, checks_failed);
    return checks_failed == 0 ? 0 : 1;
}
