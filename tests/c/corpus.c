/*
 * The shared case corpus through the C library.
 *
 * Reads the lines tests/c/corpus_lines.py writes (KIND<TAB>HEX of the body, one
 * case per line), validates each body with ach_validate (and, as a cross-check,
 * with ach_validate_bytes, which must print the same line) and prints each
 * verdict line. corpus_lines.py then compares the verdicts with the cases.
 *
 * Usage: corpus CASES_FILE > verdicts.txt
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ach.h"

static int hex_value(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Decode `len` hex digits into a new NUL-terminated buffer; its byte count in *out_len. */
static unsigned char *from_hex(const char *hex, size_t len, size_t *out_len) {
    unsigned char *bytes = malloc(len / 2 + 1);
    size_t i;
    if (bytes == NULL || len % 2 != 0) {
        free(bytes);
        return NULL;
    }
    for (i = 0; i < len / 2; i++) {
        int hi = hex_value(hex[2 * i]), lo = hex_value(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            free(bytes);
            return NULL;
        }
        bytes[i] = (unsigned char)(hi * 16 + lo);
    }
    bytes[len / 2] = '\0';
    *out_len = len / 2;
    return bytes;
}

static void print_last_error(const char *what) {
    AchBuffer detail = {0};
    ach_last_error(&detail);
    fprintf(stderr, "%s: %s\n", what, detail.data ? (const char *)detail.data : "");
    ach_buffer_free(detail);
}

int main(int argc, char **argv) {
    FILE *f;
    static char line[16 * 1024 * 1024];
    int failures = 0, cases = 0;

    if (argc != 2 || (f = fopen(argv[1], "r")) == NULL) {
        fprintf(stderr, "usage: corpus CASES_FILE\n");
        return 2;
    }
    while (fgets(line, sizeof line, f) != NULL) {
        char *tab = strchr(line, '\t');
        size_t hex_len, len = 0;
        unsigned char *body;
        AchBuffer verdict = {0}, again = {0};
        AchResult r;

        if (tab == NULL) {
            fprintf(stderr, "malformed line %d\n", cases + 1);
            failures++;
            continue;
        }
        *tab = '\0';
        hex_len = strcspn(tab + 1, "\r\n");
        body = from_hex(tab + 1, hex_len, &len);
        cases++;
        if (body == NULL) {
            fprintf(stderr, "case %d: bad hex\n", cases);
            failures++;
            continue;
        }
        r = ach_validate_bytes(line, body, len, &again);
        if (r != ACH_OK) {
            print_last_error("ach_validate_bytes");
            failures++;
        }
        if (strlen((const char *)body) == len) {
            /* No NUL inside: the string entry point must agree with the bytes one. */
            r = ach_validate(line, (const char *)body, &verdict);
            if (r != ACH_OK) {
                print_last_error("ach_validate");
                failures++;
            } else if (again.data == NULL || strcmp((const char *)verdict.data, (const char *)again.data) != 0) {
                fprintf(stderr, "case %d: ach_validate and ach_validate_bytes differ\n", cases);
                failures++;
            }
            fputs(verdict.data ? (const char *)verdict.data : "\n", stdout);
        } else {
            fputs(again.data ? (const char *)again.data : "\n", stdout);
        }
        ach_buffer_free(verdict);
        ach_buffer_free(again);
        free(body);
    }
    fclose(f);
    fprintf(stderr, "corpus: %d cases validated through libach, %d call failures\n", cases, failures);
    return failures == 0 ? 0 : 1;
}
