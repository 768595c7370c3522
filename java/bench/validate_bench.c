/*
 * The C side of the Java binding's figure: ns per ach_validate("transaction",
 * json) call plus ach_buffer_free of its verdict, on a typical valid
 * transaction (the one java/bench/ach/ValidateBench.java times), after a
 * warm-up. Prints one line: "c ns_per_call <N>".
 *
 * Usage: validate_bench [SECONDS]   (default 2; the best of 5 rounds is kept)
 * Built by scripts/java-test: gcc -O2 -Iinclude ... -L<release> -lach.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ach.h"

/* Keep in step with ValidateBench.TRANSACTION. */
static const char *TRANSACTION =
    "{\"partner_id\":\"par_0123456789abcdefghijKL\",\"merchant_id\":\"mer_0123456789abcdefghijKL\","
    "\"amount\":\"125.50\",\"description\":\"Invoice 42\",\"type\":\"debit\",\"standard_entry_class\":\"PPD\","
    "\"customer\":{\"name\":\"Ada Lovelace\",\"routing_number\":\"021000021\",\"account_number\":\"123456789\","
    "\"account_type\":\"checking\"}}";

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* One call as a host makes it; answers the verdict's first byte (kept live). */
static int one_call(void) {
    AchBuffer out = {0};
    int first;
    if (ach_validate("transaction", TRANSACTION, &out) != ACH_OK) {
        fprintf(stderr, "ach_validate failed\n");
        exit(1);
    }
    first = out.data[0] + (int)out.len;
    ach_buffer_free(out);
    return first;
}

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 2.0;
    double best = 1e18;
    long sink = 0, calls = 1000;
    int round;
    AchBuffer out = {0};

    if (ach_validate("transaction", TRANSACTION, &out) != ACH_OK || strncmp((char *)out.data, "{\"valid\":true", 13) != 0) {
        fprintf(stderr, "the bench transaction is not valid: %s\n", out.data ? (char *)out.data : "(nothing)");
        return 1;
    }
    ach_buffer_free(out);
    /* Warm-up, and size a round at about seconds / 5. */
    for (;;) {
        double t0 = now_ns(), t;
        long i;
        for (i = 0; i < calls; i++) sink += one_call();
        t = now_ns() - t0;
        if (t > seconds * 1e9 / 5) break;
        calls *= 2;
    }
    for (round = 0; round < 5; round++) {
        double t0 = now_ns(), per;
        long i;
        for (i = 0; i < calls; i++) sink += one_call();
        per = (now_ns() - t0) / (double)calls;
        if (per < best) best = per;
    }
    printf("c ns_per_call %.0f\n", best);
    return sink == 42 ? 2 : 0;
}
