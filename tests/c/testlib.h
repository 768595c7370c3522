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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Copy the string member `key` ("key":"...") of a JSON text into out;
 * 1 if found, 0 if not (out is then ""). With several members of that name the
 * first one wins. */
static int json_string(const char *json, const char *key, char *out, size_t cap) {
    char pattern[128];
    const char *at;
    size_t n = 0;
    out[0] = '\0';
    snprintf(pattern, sizeof pattern, "\"%s\":\"", key);
    at = strstr(json, pattern);
    if (at == NULL) {
        return 0;
    }
    at += strlen(pattern);
    while (at[n] != '\0' && at[n] != '"' && n + 1 < cap) {
        out[n] = at[n];
        n++;
    }
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

#endif /* ACH_TESTLIB_H */
