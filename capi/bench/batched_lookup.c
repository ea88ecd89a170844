/*
 * The C side of the batched-lookup comparison: `linebloom_blocked_contains_hashes` on the
 * same filter and the same hashes as the crate's `contains_hashes` in
 * `examples/batched_lookup.rs`, so the two figures differ by the C boundary alone.
 *
 *   capi/bench/run.sh [ITEMS] [PROBES]
 *
 * builds the library, this program and the Rust example, and runs both. This program makes
 * the filter (ITEMS keys at 10 bits per key) and PROBES hashes (half of them inserted), writes
 * them to FILTER and HASHES for the Rust side, and prints the best of 7 passes as JSON.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "linebloom.h"

static uint64_t mix64(uint64_t x) {
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x *= UINT64_C(0xc4ceb9fe1a85ec53);
    return x ^ (x >> 33);
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

#define MUST(call)                                                                \
    do {                                                                          \
        if ((call) != LINEBLOOM_STATUS_OK) {                                      \
            fprintf(stderr, "%s: %s\n", #call, linebloom_last_error());           \
            return 1;                                                             \
        }                                                                         \
    } while (0)

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s ITEMS PROBES FILTER HASHES\n", argv[0]);
        return 2;
    }
    size_t items = strtoull(argv[1], NULL, 10), probes = strtoull(argv[2], NULL, 10);
    linebloom_blocked *filter = NULL;
    MUST(linebloom_blocked_new_bits_per_key(items, 10.0, &filter));
    uint64_t *hashes = malloc(probes * sizeof *hashes);
    bool *out = malloc(probes);
    if (hashes == NULL || out == NULL) return 1;
    for (size_t i = 0; i < probes; i++) hashes[i] = mix64(i % (2 * items));
    for (size_t i = 0; i < items; i++) {
        uint64_t h = mix64(i);
        MUST(linebloom_blocked_insert_hash(filter, h));
    }

    size_t size = 0;
    MUST(linebloom_blocked_serialized_size(filter, &size));
    uint8_t *bytes = malloc(size);
    if (bytes == NULL) return 1;
    MUST(linebloom_blocked_save(filter, bytes, size));
    FILE *f = fopen(argv[3], "wb");
    FILE *h = fopen(argv[4], "wb");
    if (f == NULL || h == NULL || fwrite(bytes, 1, size, f) != size
        || fwrite(hashes, sizeof *hashes, probes, h) != probes) {
        fprintf(stderr, "cannot write %s or %s\n", argv[3], argv[4]);
        return 1;
    }
    fclose(f);
    fclose(h);

    double best = 1e30;
    for (int pass = 0; pass < 7; pass++) {
        double t = now();
        MUST(linebloom_blocked_contains_hashes(filter, hashes, probes, out));
        double s = now() - t;
        if (s < best) best = s;
    }
    size_t yes = 0;
    for (size_t i = 0; i < probes; i++) yes += out[i];
    printf("{\"keys\": %zu, \"seconds\": %.6f, \"keys_per_s\": %.0f, \"yes\": %zu}\n", probes,
           best, (double)probes / best, yes);
    free(bytes);
    free(out);
    free(hashes);
    linebloom_blocked_free(filter);
    return 0;
}
