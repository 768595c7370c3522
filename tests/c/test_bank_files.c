/*
 * The C test of libach's bank files: a sandbox runs a cut-off, the operator
 * lists and fetches the origination file it wrote, and the bank's answer (a
 * return file composed here, record by record, from the fixed NACHA layout) is
 * posted back: applied once, counted as already applied the second time, and
 * seen in the partner's status-changes feed as status R with its return code. A
 * malformed file is refused with 422 and changes nothing.
 *
 * Built twice by tests/c/run.sh (against libach.a and libach.so) and run under
 * valgrind. Usage: test_bank_files. Exit 0 when every check passes; prints
 * "N passed, N failed".
 */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

#define OPERATOR_KEY "ok_c_files_operator_key_0123456789abcdef"

/* NACHA: every record is 94 characters followed by "\n"; files come in blocks
 * of ten records. */
#define RECORD_LEN 94
#define LINE_LEN (RECORD_LEN + 1)
#define BLOCKING_FACTOR 10
#define MAX_RECORDS 200

/* The receiving bank answering the file: its routing number and the ODFI
 * identification (first 8 digits) of every return it sends. */
#define RDFI_ROUTING "021000021"
#define RDFI_ID "02100002"

/* The debits originated at the cut-off: distinct amounts, so each entry of the
 * file is found by its amount. The second one comes back R01. */
static const char *AMOUNTS[] = {"10.00", "20.00", "30.00"};
#define DEBITS 3
#define RETURNED 1
#define RETURNED_AMOUNT "0000002000" /* AMOUNTS[RETURNED] in the entry's 10-digit field */

/* ------------------------------------------------------------------------ */
/* Requests                                                                  */

/* The answer's body when the request answered `status`, else NULL (the answer
 * is printed). Free *out either way. */
static const char *answer(AchEngine *engine, AchBuffer *out, long status, const char *method, const char *path,
                          const char *query, const char *api_key, const char *body) {
    long got = request(engine, out, method, path, query, api_key, body);
    checks_run++;
    if (got != status) {
        checks_failed++;
        fprintf(stderr, "%s %s answered %ld, expected %ld: %s\n", method, path, got, status,
                out->data ? (const char *)out->data : "(nothing)");
        return NULL;
    }
    return (const char *)out->data;
}

/* Text as a JSON string literal (quotes included); NULL if out of memory. The
 * NACHA text holds printable ASCII and line feeds only. */
static char *json_quoted(const char *text) {
    size_t len = strlen(text), n = 0, i;
    char *out = malloc(2 * len + 3);
    if (out == NULL) {
        return NULL;
    }
    out[n++] = '"';
    for (i = 0; i < len; i++) {
        if (text[i] == '\n') {
            out[n++] = '\\';
            out[n++] = 'n';
        } else {
            if (text[i] == '"' || text[i] == '\\') out[n++] = '\\';
            out[n++] = text[i];
        }
    }
    out[n++] = '"';
    out[n] = '\0';
    return out;
}

/* The string member `key` of a JSON text, unescaped (\n, \", \\, \/), in a new
 * string; NULL if absent, if it holds another escape, or out of memory. */
static char *json_text(const char *json, const char *key) {
    char pattern[64];
    const char *at;
    char *out;
    size_t n = 0;
    snprintf(pattern, sizeof pattern, "\"%s\":\"", key);
    at = strstr(json, pattern);
    if (at == NULL || (out = malloc(strlen(at) + 1)) == NULL) {
        return NULL;
    }
    for (at += strlen(pattern); *at != '"'; at++) {
        if (*at == '\0') {
            free(out);
            return NULL;
        }
        if (*at == '\\') {
            at++;
            if (*at == 'n') {
                out[n++] = '\n';
            } else if (*at == '"' || *at == '\\' || *at == '/') {
                out[n++] = *at;
            } else {
                free(out);
                return NULL;
            }
        } else {
            out[n++] = *at;
        }
    }
    out[n] = '\0';
    return out;
}

/* ------------------------------------------------------------------------ */
/* The sandbox: a partner, an approved PPD merchant, debits                   */

static void debit(AchEngine *engine, const struct partner_merchant *t, const char *amount, char *id, size_t cap) {
    char body[1024];
    AchBuffer out = {0};
    const char *created;
    snprintf(body, sizeof body,
             "{\"partner_id\":\"%s\",\"merchant_id\":\"%s\",\"amount\":\"%s\",\"description\":\"C files\","
             "\"type\":\"debit\",\"standard_entry_class\":\"PPD\",\"customer\":{\"name\":\"Ada Lovelace\","
             "\"routing_number\":\"021000021\",\"account_number\":\"987654321\",\"account_type\":\"checking\"}}",
             t->partner_id, t->merchant_id, amount);
    created = answer(engine, &out, 201, "POST", "/transactions", NULL, t->partner_key, body);
    CHECK(created != NULL && json_string(created, "id", id, cap) && strncmp(id, "txn_", 4) == 0);
    ach_buffer_free(out);
}

/* ------------------------------------------------------------------------ */
/* NACHA records                                                              */

/* A file's records: pointers into its text, each RECORD_LEN characters. */
struct records {
    const char *at[MAX_RECORDS];
    int count;
};

/* Split a NACHA text into records, checking its shape: every line 94
 * characters followed by "\n", a multiple of ten lines. 1 if well-formed. */
static int split_records(const char *text, struct records *r) {
    const char *p = text;
    r->count = 0;
    while (*p != '\0') {
        const char *end = strchr(p, '\n');
        if (end == NULL || end - p != RECORD_LEN || r->count == MAX_RECORDS) {
            return 0;
        }
        r->at[r->count++] = p;
        p = end + 1;
    }
    return r->count > 0 && r->count % BLOCKING_FACTOR == 0;
}

/* Digits [from, from + len) of a record (1-based positions, as Nacha numbers
 * them) as a number. */
static uint64_t number_at(const char *record, int from, int len) {
    uint64_t n = 0;
    int i;
    for (i = 0; i < len; i++) {
        n = n * 10 + (uint64_t)(record[from - 1 + i] - '0');
    }
    return n;
}

/* The ABA check digit of an 8-digit routing prefix (weights 3, 7, 1). */
static char check_digit(const char *prefix8) {
    static const int weights[8] = {3, 7, 1, 3, 7, 1, 3, 7};
    int sum = 0, i;
    for (i = 0; i < 8; i++) {
        sum += weights[i] * (prefix8[i] - '0');
    }
    return (char)('0' + (10 - sum % 10) % 10);
}

/* Append one record, composed with a format, to `out` (checked to be 94
 * characters), followed by "\n". */
static void put_record(char *out, size_t cap, const char *fmt, ...) {
    char record[RECORD_LEN + 64];
    size_t used = strlen(out);
    int len;
    va_list ap;
    va_start(ap, fmt);
    len = vsnprintf(record, sizeof record, fmt, ap);
    va_end(ap);
    CHECK(len == RECORD_LEN);
    if (len != RECORD_LEN) {
        fprintf(stderr, "record of %d characters: %s\n", len, record);
    }
    if (used + (size_t)len + 2 <= cap) {
        memcpy(out + used, record, (size_t)len);
        out[used + (size_t)len] = '\n';
        out[used + (size_t)len + 1] = '\0';
    }
}

/* The bank's return file for `n` entries of an origination file (each the
 * 94-character entry record; its batch header for the company), every one
 * returned with `code`, dated `effective` (YYMMDD). One PPD batch of debit
 * returns (transaction code 26: the original's 27 less one) with addenda 99;
 * the controls computed here: counts, entry hash (the sum of the 8-digit
 * receiving DFI identifications, last 10 digits) and totals. Written to `out`. */
static void return_file(char *out, size_t cap, const char *const *entries, int n, const char *batch_header,
                        const char *code, const char *effective) {
    char odfi[9], nines[RECORD_LEN + 1];
    uint64_t hash = 0, debits = 0;
    int i, records;
    /* A return goes back to the originator's bank: its identification is the
     * receiving DFI of every return entry. */
    memcpy(odfi, batch_header + 79, 8);
    odfi[8] = '\0';
    out[0] = '\0';
    put_record(out, cap, "101 %s%c %s%s0900A094101%-23.23s%-23.23s%-8.8s", odfi, check_digit(odfi), RDFI_ROUTING,
               effective, "ACH SANDBOX", "RDFI", "");
    /* The original's company name, discretionary data, identification, class
     * and description (positions 5 to 63); the RDFI as the batch's ODFI. */
    put_record(out, cap, "5225%.59s%-6.6s%s   1%s%07d", batch_header + 4, "", effective, RDFI_ID, 1);
    for (i = 0; i < n; i++) {
        const char *e = entries[i];
        char trace[24];
        snprintf(trace, sizeof trace, "%s%07d", RDFI_ID, (i + 1) % 10000000);
        /* Account, amount, identification and name as the original had them. */
        put_record(out, cap, "626%s%c%.17s%.10s%.15s%.22s  1%s", odfi, check_digit(odfi), e + 12, e + 29, e + 39,
                   e + 54, trace);
        /* Return code, the original's trace, no date of death, the original's
         * receiving DFI, no information, the return's own trace. */
        put_record(out, cap, "799%-3.3s%.15s      %.8s%44s%s", code, e + 79, e + 3, "", trace);
        hash = (hash + number_at(odfi, 1, 8)) % 10000000000ULL;
        debits += number_at(e, 30, 10);
    }
    put_record(out, cap, "8225%06d%010llu%012llu%012llu%.10s%25s%s%07d", 2 * n, (unsigned long long)hash,
               (unsigned long long)debits, 0ULL, batch_header + 40, "", RDFI_ID, 1);
    records = 2 * n + 4;
    put_record(out, cap, "9%06d%06d%08d%010llu%012llu%012llu%39s", 1, (records + BLOCKING_FACTOR - 1) / BLOCKING_FACTOR,
               2 * n, (unsigned long long)hash, (unsigned long long)debits, 0ULL, "");
    memset(nines, '9', RECORD_LEN);
    nines[RECORD_LEN] = '\0';
    for (; records % BLOCKING_FACTOR != 0; records++) {
        put_record(out, cap, "%s", nines);
    }
}

/* ------------------------------------------------------------------------ */
/* The cut-off, its file, the bank's return file                              */

/* Post `file` (NACHA text) as the raw body of POST /admin/return-files;
 * answer the status and leave the response in *out. */
static long post_return_file(AchEngine *engine, AchBuffer *out, const char *file) {
    char *body = json_quoted(file);
    long status;
    if (body == NULL) {
        return -1;
    }
    status = request(engine, out, "POST", "/admin/return-files", NULL, OPERATOR_KEY, body);
    free(body);
    return status;
}

/* The ingestion counts of an answer: returns, notices, unmatched, already. */
static int counts_are(const char *json, long returns, long notices, long unmatched, long already) {
    return json != NULL && json_last_int(json, "returns") == returns &&
           json_last_int(json, "notices_of_change") == notices && json_last_int(json, "unmatched") == unmatched &&
           json_last_int(json, "already_applied") == already;
}

static void test_cutoff_file_and_returns(void) {
    AchEngine *engine = NULL;
    struct partner_merchant t;
    char ids[DEBITS][64], file_id[64], path[160], query[128], pointer[64], needle[160];
    char *text = NULL, *bank = NULL, *tampered = NULL;
    const char *body, *entries[DEBITS], *returned_entry = NULL, *returned_batch = NULL, *batch = NULL;
    struct records records;
    size_t bank_cap = (size_t)BLOCKING_FACTOR * LINE_LEN + 1;
    AchBuffer out = {0}, file = {0};
    int i, n_entries = 0;

    CHECK_RESULT(ach_engine_open("{\"operator_key\":\"" OPERATOR_KEY "\",\"sandbox\":true,"
                                 "\"start\":\"2026-11-23T10:00:00-05:00\"}",
                                 &engine),
                 ACH_OK);
    make_partner_merchant(engine, OPERATOR_KEY, "Files Payments", "[\"PPD\"]", &t);
    snprintf(query, sizeof query, "partner_id=%s", t.partner_id);
    for (i = 0; i < DEBITS; i++) {
        debit(engine, &t, AMOUNTS[i], ids[i], sizeof ids[i]);
    }

    /* No file before the cut-off. */
    body = answer(engine, &out, 200, "GET", "/admin/origination-files", NULL, OPERATOR_KEY, NULL);
    CHECK(body != NULL && strstr(body, "\"payload\":[]") != NULL);
    ach_buffer_free(out);

    /* 6 PM ET: the cut-off originates the debits and writes one file. */
    body = answer(engine, &out, 200, "POST", "/admin/clock", NULL, OPERATOR_KEY,
                  "{\"now\":\"2026-11-23T18:00:00-05:00\"}");
    CHECK(body != NULL && json_last_int(body, "originated") == DEBITS);
    ach_buffer_free(out);
    body = answer(engine, &out, 200, "GET", "/admin/origination-files", NULL, OPERATOR_KEY, NULL);
    CHECK(body != NULL && count_of(body, "\"id\":\"fil_") == 1);
    CHECK(body != NULL && json_last_int(body, "entries") == DEBITS);
    CHECK(body != NULL && strstr(body, "\"effective_date\":\"2026-11-24\"") != NULL);
    CHECK(body != NULL && json_string(body, "id", file_id, sizeof file_id));
    ach_buffer_free(out);

    /* Fetched: the NACHA text, checked here record by record. */
    snprintf(path, sizeof path, "/admin/origination-files/%s", file_id);
    body = answer(engine, &file, 200, "GET", path, NULL, OPERATOR_KEY, NULL);
    CHECK(body != NULL && json_last_int(body, "entries") == DEBITS);
    text = body != NULL ? json_text(body, "text") : NULL;
    CHECK(text != NULL);
    if (text == NULL || !split_records(text, &records)) {
        CHECK(0 && "every line 94 characters, a multiple of ten lines");
        goto done;
    }
    CHECK(strncmp(records.at[0], "101", 3) == 0);
    for (i = 0; i < records.count; i++) {
        const char *r = records.at[i];
        if (r[0] == '5') {
            batch = r;
            CHECK(strncmp(r + 50, "PPD", 3) == 0);
        } else if (r[0] == '6' && n_entries < DEBITS) {
            CHECK(strncmp(r + 1, "27", 2) == 0); /* a debit to checking */
            entries[n_entries++] = r;
            if (strncmp(r + 29, RETURNED_AMOUNT, 10) == 0) {
                returned_entry = r;
                returned_batch = batch;
            }
        }
    }
    CHECK(n_entries == DEBITS);
    CHECK(count_of(text, "\n6") == DEBITS);
    if (n_entries > 0) {
        char trace[16];
        CHECK(json_string(body, "first_trace", trace, sizeof trace) && strncmp(trace, entries[0] + 79, 15) == 0);
        CHECK(json_string(body, "last_trace", trace, sizeof trace) &&
              strncmp(trace, entries[n_entries - 1] + 79, 15) == 0);
    }
    if (returned_entry == NULL || returned_batch == NULL) {
        CHECK(0 && "the returned debit is in the file");
        goto done;
    }

    /* Two days on, the bank returns the 20.00 debit (R01). */
    body = answer(engine, &out, 200, "POST", "/admin/clock", NULL, OPERATOR_KEY,
                  "{\"now\":\"2026-11-25T09:00:00-05:00\"}");
    ach_buffer_free(out);
    bank = malloc(bank_cap);
    if (bank == NULL) {
        CHECK(0);
        goto done;
    }
    return_file(bank, bank_cap, &returned_entry, 1, returned_batch, "R01", "261125");
    CHECK(split_records(bank, &records) && records.count == BLOCKING_FACTOR);
    CHECK(post_return_file(engine, &out, bank) == 200);
    CHECK(counts_are((const char *)out.data, 1, 0, 0, 0));
    ach_buffer_free(out);
    /* The same file again: applied already, nothing changes. */
    CHECK(post_return_file(engine, &out, bank) == 200);
    CHECK(counts_are((const char *)out.data, 0, 0, 0, 1));
    ach_buffer_free(out);

    /* The partner's feed: the returned debit is R with R01, dated by the
     * return batch; the other two stay originated. */
    body = answer(engine, &out, 200, "GET", "/status-changes/0", query, t.partner_key, NULL);
    CHECK(body != NULL && count_of(body, "\"status\":\"A\"") == DEBITS);
    CHECK(body != NULL && count_of(body, "\"status\":\"B\"") == DEBITS);
    CHECK(body != NULL && count_of(body, "\"status\":\"R\"") == 1);
    CHECK(body != NULL && count_of(body, "\"return_code\":\"R01\",\"return_date\":\"2026-11-25\"") == 1);
    snprintf(needle, sizeof needle, "\"status\":\"R\",\"transaction_id\":\"%s\"", ids[RETURNED]);
    CHECK(body != NULL && strstr(body, needle) != NULL);
    CHECK(body != NULL && json_string(body, "new_pointer", pointer, sizeof pointer));
    ach_buffer_free(out);

    /* Malformed files are refused whole (422) and change nothing: not NACHA at
     * all, and the return file with its batch's entry hash off by one. */
    CHECK(request(engine, &out, "POST", "/admin/return-files", NULL, OPERATOR_KEY, "\"hello\"") == 422);
    CHECK(strstr((const char *)out.data, "\"success\":false") != NULL);
    ach_buffer_free(out);
    tampered = malloc(strlen(bank) + 1);
    if (tampered != NULL) {
        char *control;
        strcpy(tampered, bank);
        control = strstr(tampered, "\n8");
        CHECK(control != NULL);
        if (control != NULL) {
            control[20] = (char)(control[20] == '9' ? '0' : control[20] + 1); /* last digit of the hash */
        }
        CHECK(post_return_file(engine, &out, tampered) == 422);
        CHECK(strstr((const char *)out.data, "entry_hash") != NULL);
        ach_buffer_free(out);
    }
    snprintf(path, sizeof path, "/status-changes/%s", pointer);
    body = answer(engine, &out, 200, "GET", path, query, t.partner_key, NULL);
    CHECK(body != NULL && strstr(body, "\"changes\":[]") != NULL);
    ach_buffer_free(out);
    body = answer(engine, &out, 200, "GET", "/admin/origination-files", NULL, OPERATOR_KEY, NULL);
    CHECK(body != NULL && count_of(body, "\"id\":\"fil_") == 1);
    ach_buffer_free(out);

done:
    free(tampered);
    free(bank);
    free(text);
    ach_buffer_free(file);
    ach_engine_close(engine);
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    printf("libach %s: bank files\n", ach_version());
    test_cutoff_file_and_returns();
    printf("%d passed, %d failed\n", checks_run - checks_failed, checks_failed);
    return checks_failed == 0 ? 0 : 1;
}
