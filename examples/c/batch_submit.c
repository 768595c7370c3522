/*
 * batch_submit: submit a file of transactions through libach.
 *
 * Reads TRANSACTIONS_FILE (one transaction body, JSON, per line; blank lines are
 * skipped), opens an in-memory sandbox engine, has the operator create a partner,
 * the partner submit the merchant application MERCHANT_FILE (default
 * examples/requests/merchant.json; its sample partner id is replaced) and the
 * operator approve it; then submits each transaction for that merchant and prints
 * each answer: "line N: STATUS BODY". The lines carry no partner_id nor
 * merchant_id: they are passed in the query string (a member of the body would
 * win over the query's).
 *
 * Build: gcc -std=c99 -Iinclude examples/c/batch_submit.c -Ltarget/debug -lach
 * Run:   ./batch_submit examples/c/transactions.jsonl [examples/requests/merchant.json]
 * Exit:  0 when every line got an answer (accepted or refused), 1 otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ach.h"

#define OPERATOR_KEY "ok_batch_example_operator_key_000000"
#define SAMPLE_PARTNER_ID "par_0123456789abcdefghijKL"

/* The whole file as a NUL-terminated string (free it), or NULL. */
static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    char *text = NULL;
    long size;
    if (f == NULL) return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (text = malloc((size_t)size + 1)) != NULL) {
        size_t got = fread(text, 1, (size_t)size, f);
        text[got] = '\0';
    }
    fclose(f);
    return text;
}

/* Copy the string member `key` ("key":"value") of a compact JSON answer. */
static int json_string(const char *json, const char *key, char *out, size_t cap) {
    char pattern[64];
    const char *at;
    size_t n = 0;
    snprintf(pattern, sizeof pattern, "\"%s\":\"", key);
    out[0] = '\0';
    if ((at = strstr(json, pattern)) == NULL) return 0;
    at += strlen(pattern);
    while (at[n] != '\0' && at[n] != '"' && n + 1 < cap) {
        out[n] = at[n];
        n++;
    }
    out[n] = '\0';
    return 1;
}

/* The HTTP status at the end of an answer ({"body":...,"status":201}). */
static int answer_status(const char *answer) {
    const char *at = strstr(answer, ",\"status\":");
    const char *last = NULL;
    while (at != NULL) {
        last = at;
        at = strstr(at + 1, ",\"status\":");
    }
    return last ? atoi(last + strlen(",\"status\":")) : -1;
}

/* Send an envelope; print the library's detail and answer NULL on failure. The
 * answer is a new string (free it). */
static char *send(AchEngine *engine, const char *envelope) {
    AchBuffer out = {0};
    AchResult r = ach_engine_request(engine, envelope, &out);
    char *answer;
    if (r != ACH_OK) {
        AchBuffer detail = {0};
        ach_last_error(&detail);
        fprintf(stderr, "ach_engine_request: %s: %s\n", ach_result_name(r), (const char *)detail.data);
        ach_buffer_free(detail);
        return NULL;
    }
    answer = malloc(out.len + 1);
    if (answer != NULL) memcpy(answer, out.data, out.len + 1);
    ach_buffer_free(out);
    return answer;
}

/* Send method/path with an API key, an optional query and an optional JSON body. */
static char *call(AchEngine *engine, const char *method, const char *path, const char *key, const char *query,
                  const char *body) {
    size_t cap = 200 + strlen(path) + strlen(key) + (query ? strlen(query) : 0) + (body ? strlen(body) : 0);
    char *envelope = malloc(cap);
    char *answer;
    if (envelope == NULL) return NULL;
    snprintf(envelope, cap, "{\"method\":\"%s\",\"path\":\"%s\",\"api_key\":\"%s\",\"query\":\"%s\",\"body\":%s}",
             method, path, key, query ? query : "", body ? body : "null");
    answer = send(engine, envelope);
    free(envelope);
    return answer;
}

int main(int argc, char **argv) {
    const char *merchant_file = argc > 2 ? argv[2] : "examples/requests/merchant.json";
    char partner_id[64], partner_key[128], merchant_id[64], path[128], query[256];
    char *application, *answer, *placeholder, *text, *line;
    AchEngine *engine = NULL;
    AchResult r;
    int number = 0, accepted = 0, refused = 0, failed = 0;

    if (argc < 2) {
        fprintf(stderr, "usage: batch_submit TRANSACTIONS_FILE [MERCHANT_APPLICATION_FILE]\n");
        return 2;
    }
    r = ach_engine_open("{\"sandbox\":true,\"operator_key\":\"" OPERATOR_KEY "\"}", &engine);
    if (r != ACH_OK) {
        fprintf(stderr, "ach_engine_open: %s\n", ach_result_name(r));
        return 1;
    }

    /* The operator creates a partner. */
    answer = call(engine, "POST", "/admin/partners", OPERATOR_KEY, NULL, "{\"name\":\"Batch Partner\"}");
    if (answer == NULL || !json_string(answer, "partner_id", partner_id, sizeof partner_id) ||
        !json_string(answer, "api_key", partner_key, sizeof partner_key)) {
        fprintf(stderr, "cannot create a partner: %s\n", answer ? answer : "");
        return 1;
    }
    free(answer);
    printf("partner %s\n", partner_id);

    /* The partner submits the merchant application (with its own partner id). */
    application = read_file(merchant_file);
    if (application == NULL) {
        fprintf(stderr, "cannot read %s\n", merchant_file);
        return 1;
    }
    placeholder = strstr(application, SAMPLE_PARTNER_ID);
    if (placeholder != NULL && strlen(partner_id) == strlen(SAMPLE_PARTNER_ID)) {
        memcpy(placeholder, partner_id, strlen(partner_id));
    }
    answer = call(engine, "POST", "/merchants", partner_key, NULL, application);
    free(application);
    if (answer == NULL || answer_status(answer) != 201 || !json_string(answer, "id", merchant_id, sizeof merchant_id)) {
        fprintf(stderr, "the merchant application was refused: %s\n", answer ? answer : "");
        return 1;
    }
    free(answer);
    printf("merchant %s\n", merchant_id);

    /* The operator approves it (limits from its application's velocities). */
    snprintf(path, sizeof path, "/admin/merchants/%s/approve", merchant_id);
    answer = call(engine, "POST", path, OPERATOR_KEY, NULL, "{}");
    if (answer == NULL || answer_status(answer) != 200) {
        fprintf(stderr, "approval failed: %s\n", answer ? answer : "");
        return 1;
    }
    free(answer);

    /* Each transaction of the file. */
    text = read_file(argv[1]);
    if (text == NULL) {
        fprintf(stderr, "cannot read %s\n", argv[1]);
        return 1;
    }
    snprintf(query, sizeof query, "partner_id=%s&merchant_id=%s", partner_id, merchant_id);
    for (line = strtok(text, "\n"); line != NULL; line = strtok(NULL, "\n")) {
        size_t len = strlen(line);
        char *body;
        number++;
        if (len > 0 && line[len - 1] == '\r') line[--len] = '\0';
        if (strspn(line, " \t") == len) continue;
        /* The line goes into the envelope as a JSON string of raw text, so even a
         * line that is not JSON reaches the engine (and gets its 400 answer). */
        body = malloc(6 * len + 3);
        if (body == NULL) return 1;
        {
            size_t i, n = 0;
            body[n++] = '"';
            for (i = 0; i < len; i++) {
                unsigned char c = (unsigned char)line[i];
                if (c < 0x20) {
                    n += (size_t)sprintf(body + n, "\\u%04x", c);
                    continue;
                }
                if (c == '"' || c == '\\') body[n++] = '\\';
                body[n++] = (char)c;
            }
            body[n++] = '"';
            body[n] = '\0';
        }
        answer = call(engine, "POST", "/transactions", partner_key, query, body);
        free(body);
        if (answer == NULL) {
            failed++;
            continue;
        }
        printf("line %d: %d %s\n", number, answer_status(answer), answer);
        if (answer_status(answer) == 201) {
            accepted++;
        } else {
            refused++;
        }
        free(answer);
    }
    free(text);
    ach_engine_close(engine);
    printf("%d accepted, %d refused, %d not submitted\n", accepted, refused, failed);
    return failed == 0 ? 0 : 1;
}
