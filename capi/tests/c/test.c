/*
 * The C ABI from C, as an engine uses it: build filters, insert and query keys (one at a
 * time and batched), unite two filters, save to bytes and read them back (a copy, a view of
 * the format, a view of bare lines, a split-block bitset view), the error codes and
 * messages, lookups from several threads, and every handle freed. tests/c_abi.rs compiles it
 * against include/linebloom.h and the built library, under AddressSanitizer (leaks
 * included) and UndefinedBehaviorSanitizer where the compiler has them.
 */
#include "linebloom.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define CHECK(cond)                                                                        \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "test.c:%d: check failed: %s (last error: %s)\n", __LINE__,  \
                    #cond, linebloom_last_error());                                        \
            failures++;                                                                    \
        }                                                                                  \
    } while (0)

#define OK(call) CHECK((call) == LINEBLOOM_STATUS_OK)

/* `call` fails with `want`, and the thread's message contains `needle`. */
#define FAILS(call, want, needle) expect_failure((call), (want), (needle), #call, __LINE__)

static void expect_failure(linebloom_status got, linebloom_status want, const char *needle,
                           const char *text, int line) {
    const char *message = linebloom_last_error();
    if (got != want) {
        fprintf(stderr, "test.c:%d: %s gave status %d, want %d (last error: %s)\n", line, text,
                (int)got, (int)want, message);
        failures++;
    } else if (message == NULL || strstr(message, needle) == NULL) {
        fprintf(stderr, "test.c:%d: %s: message \"%s\" lacks \"%s\"\n", line, text,
                message ? message : "(null)", needle);
        failures++;
    }
}

enum { ITEMS = 20000, PROBES = 100000 };

/* Key i as bytes: "key-<i>". */
static size_t key_of(uint32_t i, char *buf) {
    return (size_t)snprintf(buf, 32, "key-%u", i);
}

static const uint8_t *bytes_of(const char *s) {
    return (const uint8_t *)s;
}

/* A zeroed buffer at a 64-byte aligned address, as a view of linebloom's format needs. */
static uint8_t *aligned_buffer(size_t len) {
    size_t rounded = (len + LINEBLOOM_VIEW_ALIGN - 1) / LINEBLOOM_VIEW_ALIGN * LINEBLOOM_VIEW_ALIGN;
    uint8_t *buf = aligned_alloc(LINEBLOOM_VIEW_ALIGN, rounded);
    if (buf == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    memset(buf, 0, rounded);
    return buf;
}

/* The blocked hashes of keys 0..ITEMS (inserted) and ITEMS..2*ITEMS (never inserted). */
static uint64_t *blocked_hashes(uint64_t seed) {
    uint64_t *hashes = malloc(2 * ITEMS * sizeof *hashes);
    char key[32];
    for (uint32_t i = 0; i < 2 * ITEMS; i++) {
        size_t len = key_of(i, key);
        OK(linebloom_hash_bytes(bytes_of(key), len, seed, &hashes[i]));
    }
    return hashes;
}

/* Asks an owned blocked filter and a view about `n` hashes and checks they answer alike. */
static void same_answers_blocked_view(const linebloom_blocked *f, const linebloom_blocked_view *v,
                                      const uint64_t *hashes, size_t n) {
    bool *a = malloc(n), *b = malloc(n);
    OK(linebloom_blocked_contains_hashes(f, hashes, n, a));
    OK(linebloom_blocked_view_contains_hashes(v, hashes, n, b));
    CHECK(memcmp(a, b, n) == 0);
    for (size_t i = 0; i < n; i += 997) {
        bool one = false;
        OK(linebloom_blocked_view_contains_hash(v, hashes[i], &one));
        CHECK(one == a[i]);
    }
    free(a);
    free(b);
}

static void same_answers_blocked(const linebloom_blocked *f, const linebloom_blocked *g,
                                 const uint64_t *hashes, size_t n) {
    bool *a = malloc(n), *b = malloc(n);
    OK(linebloom_blocked_contains_hashes(f, hashes, n, a));
    OK(linebloom_blocked_contains_hashes(g, hashes, n, b));
    CHECK(memcmp(a, b, n) == 0);
    free(a);
    free(b);
}

static void test_blocked_keys(void) {
    linebloom_blocked *f = NULL;
    OK(linebloom_blocked_new_fpr(ITEMS, 0.01, &f));
    CHECK(f != NULL);
    char key[32];
    for (uint32_t i = 0; i < ITEMS; i++) {
        size_t len = key_of(i, key);
        OK(linebloom_blocked_insert(f, bytes_of(key), len));
    }
    /* No false negatives. */
    for (uint32_t i = 0; i < ITEMS; i++) {
        size_t len = key_of(i, key);
        bool found = false;
        OK(linebloom_blocked_contains(f, bytes_of(key), len, &found));
        CHECK(found);
    }
    /* False positives near 1 %: fewer than 2 % of keys never inserted. */
    uint32_t positives = 0;
    for (uint32_t i = ITEMS; i < ITEMS + PROBES; i++) {
        size_t len = key_of(i, key);
        bool found = true;
        OK(linebloom_blocked_contains(f, bytes_of(key), len, &found));
        positives += found;
    }
    CHECK(positives < PROBES / 50);
    CHECK(positives > 0);

    /* A key's hash answers as the key does. */
    linebloom_blocked_info info;
    OK(linebloom_blocked_get_info(f, &info));
    CHECK(info.seed == LINEBLOOM_DEFAULT_SEED);
    CHECK(info.hashes >= 1 && info.hashes <= 16);
    CHECK(info.placement == LINEBLOOM_PLACEMENT_SHIFTED);
    for (uint32_t i = 0; i < ITEMS + PROBES; i += 101) {
        size_t len = key_of(i, key);
        uint64_t h;
        bool by_key, by_hash;
        OK(linebloom_hash_bytes(bytes_of(key), len, info.seed, &h));
        OK(linebloom_blocked_contains(f, bytes_of(key), len, &by_key));
        OK(linebloom_blocked_contains_hash(f, h, &by_hash));
        CHECK(by_key == by_hash);
    }

    /* The empty key may come as a null pointer with length 0. */
    OK(linebloom_blocked_insert(f, NULL, 0));
    bool empty = false;
    OK(linebloom_blocked_contains(f, bytes_of(""), 0, &empty));
    CHECK(empty);
    linebloom_blocked_free(f);
}

static void test_blocked_batched(void) {
    linebloom_blocked *by_key = NULL, *batched = NULL;
    OK(linebloom_blocked_new_fpr(ITEMS, 0.01, &by_key));
    OK(linebloom_blocked_new_fpr(ITEMS, 0.01, &batched));
    uint64_t *hashes = blocked_hashes(LINEBLOOM_DEFAULT_SEED);
    char key[32];
    for (uint32_t i = 0; i < ITEMS; i++) {
        size_t len = key_of(i, key);
        OK(linebloom_blocked_insert(by_key, bytes_of(key), len));
    }
    OK(linebloom_blocked_insert_hashes(batched, hashes, ITEMS));

    /* The batched insert sets exactly the bits the keys set one at a time. */
    const uint8_t *a, *b;
    size_t a_len, b_len;
    OK(linebloom_blocked_lines(by_key, &a, &a_len));
    OK(linebloom_blocked_lines(batched, &b, &b_len));
    CHECK(a_len == b_len && memcmp(a, b, a_len) == 0);
    CHECK((uintptr_t)a % LINEBLOOM_VIEW_ALIGN == 0);

    /* The batched lookup answers as one lookup at a time, with no false negatives. */
    bool *out = malloc(2 * ITEMS);
    memset(out, 0x5a, 2 * ITEMS);
    OK(linebloom_blocked_contains_hashes(batched, hashes, 2 * ITEMS, out));
    for (uint32_t i = 0; i < 2 * ITEMS; i++) {
        bool one;
        OK(linebloom_blocked_contains_hash(batched, hashes[i], &one));
        CHECK(out[i] == one);
        if (i < ITEMS) CHECK(out[i]);
    }

    /* Empty batches may come as null pointers. */
    OK(linebloom_blocked_insert_hashes(batched, NULL, 0));
    OK(linebloom_blocked_contains_hashes(batched, NULL, 0, NULL));

    /* Answers written over the hashes they answer, or a misaligned hash array: refused. */
    FAILS(linebloom_blocked_contains_hashes(batched, hashes, 16, (bool *)hashes),
          LINEBLOOM_STATUS_INVALID_ARGUMENT, "overlap");
    const uint64_t *odd = (const uint64_t *)((const uint8_t *)hashes + 1);
    FAILS(linebloom_blocked_contains_hashes(batched, odd, 4, out), LINEBLOOM_STATUS_MISALIGNED,
          "8-byte aligned");
    FAILS(linebloom_blocked_insert_hashes(batched, odd, 4), LINEBLOOM_STATUS_MISALIGNED,
          "aligned");

    free(out);
    free(hashes);
    linebloom_blocked_free(by_key);
    linebloom_blocked_free(batched);
}

static void test_blocked_union(void) {
    linebloom_blocked *a = NULL, *b = NULL, *other_size = NULL, *other_seed = NULL, *same = NULL;
    OK(linebloom_blocked_new_bits_per_key(ITEMS, 10.0, &a));
    OK(linebloom_blocked_new_bits_per_key(ITEMS, 10.0, &b));
    uint64_t *hashes = blocked_hashes(LINEBLOOM_DEFAULT_SEED);
    OK(linebloom_blocked_insert_hashes(a, hashes, ITEMS / 2));
    OK(linebloom_blocked_insert_hashes(b, hashes + ITEMS / 2, ITEMS / 2));
    OK(linebloom_blocked_union(a, b));
    bool *out = malloc(ITEMS);
    OK(linebloom_blocked_contains_hashes(a, hashes, ITEMS, out));
    for (uint32_t i = 0; i < ITEMS; i++) CHECK(out[i]);

    /* A filter united with itself keeps its bits. */
    OK(linebloom_blocked_union(a, a));
    OK(linebloom_blocked_contains_hashes(a, hashes, ITEMS, out));
    for (uint32_t i = 0; i < ITEMS; i++) CHECK(out[i]);

    /* The same shape and seed spelled out unite; another size or seed does not. */
    OK(linebloom_blocked_new_with(ITEMS, 10.0, 0, LINEBLOOM_DEFAULT_SEED, &same));
    OK(linebloom_blocked_union(same, a));
    same_answers_blocked(same, a, hashes, 2 * ITEMS);
    OK(linebloom_blocked_new_bits_per_key(2 * ITEMS, 10.0, &other_size));
    FAILS(linebloom_blocked_union(a, other_size), LINEBLOOM_STATUS_INCOMPATIBLE, "incompatible");
    OK(linebloom_blocked_new_with(ITEMS, 10.0, 0, 42, &other_seed));
    FAILS(linebloom_blocked_union(a, other_seed), LINEBLOOM_STATUS_INCOMPATIBLE, "seed");
    FAILS(linebloom_blocked_union(NULL, b), LINEBLOOM_STATUS_NULL_POINTER, "into");
    FAILS(linebloom_blocked_union(a, NULL), LINEBLOOM_STATUS_NULL_POINTER, "other");

    free(out);
    free(hashes);
    linebloom_blocked_free(a);
    linebloom_blocked_free(b);
    linebloom_blocked_free(same);
    linebloom_blocked_free(other_size);
    linebloom_blocked_free(other_seed);
}

static void test_blocked_bytes_and_views(void) {
    linebloom_blocked *f = NULL;
    OK(linebloom_blocked_new_fpr(ITEMS, 0.01, &f));
    uint64_t *hashes = blocked_hashes(LINEBLOOM_DEFAULT_SEED);
    OK(linebloom_blocked_insert_hashes(f, hashes, ITEMS));
    linebloom_blocked_info info;
    OK(linebloom_blocked_get_info(f, &info));

    size_t size = 0;
    OK(linebloom_blocked_serialized_size(f, &size));
    CHECK(size == 64 + info.lines * 64 + 8);
    uint8_t *bytes = aligned_buffer(size);
    FAILS(linebloom_blocked_save(f, bytes, size - 1), LINEBLOOM_STATUS_BUFFER_TOO_SMALL,
          "needs");
    OK(linebloom_blocked_save(f, bytes, size));

    /* Load: an owned copy. */
    linebloom_blocked *loaded = NULL;
    OK(linebloom_blocked_load(bytes, size, &loaded));
    same_answers_blocked(f, loaded, hashes, 2 * ITEMS);

    /* Views of the format, checked and unchecked, read the bytes in place. */
    linebloom_blocked_view *view = NULL, *unverified = NULL;
    OK(linebloom_blocked_view_from_bytes(bytes, size, &view));
    OK(linebloom_blocked_view_from_bytes_unverified(bytes, size, &unverified));
    same_answers_blocked_view(f, view, hashes, 2 * ITEMS);
    same_answers_blocked_view(f, unverified, hashes, 2 * ITEMS);
    linebloom_blocked_info view_info;
    OK(linebloom_blocked_view_get_info(view, &view_info));
    CHECK(view_info.lines == info.lines && view_info.hashes == info.hashes &&
          view_info.seed == info.seed);
    char key[32];
    size_t len = key_of(7, key);
    bool found = false;
    OK(linebloom_blocked_view_contains(view, bytes_of(key), len, &found));
    CHECK(found);

    /* A view's copy no longer needs the bytes. */
    linebloom_blocked *copy = NULL;
    OK(linebloom_blocked_view_to_owned(view, &copy));
    same_answers_blocked(f, copy, hashes, 2 * ITEMS);

    /* A view needs a 64-byte boundary; a load takes any alignment. */
    uint8_t *shifted = aligned_buffer(size + 1);
    memcpy(shifted + 1, bytes, size);
    linebloom_blocked_view *refused = NULL;
    FAILS(linebloom_blocked_view_from_bytes(shifted + 1, size, &refused),
          LINEBLOOM_STATUS_MISALIGNED, "64-byte boundary");
    CHECK(refused == NULL);
    linebloom_blocked *from_shifted = NULL;
    OK(linebloom_blocked_load(shifted + 1, size, &from_shifted));
    same_answers_blocked(f, from_shifted, hashes, 2 * ITEMS);

    /* Damaged bytes: the checksum catches a flipped payload bit (the unchecked view, by
     * design, does not); a truncated, empty or foreign buffer is corrupt everywhere. */
    uint8_t *damaged = aligned_buffer(size);
    memcpy(damaged, bytes, size);
    damaged[64 + 5] ^= 1;
    FAILS(linebloom_blocked_view_from_bytes(damaged, size, &refused), LINEBLOOM_STATUS_CORRUPT,
          "checksum");
    FAILS(linebloom_blocked_load(damaged, size, &loaded), LINEBLOOM_STATUS_CORRUPT, "checksum");
    linebloom_blocked_view *trusting = NULL;
    OK(linebloom_blocked_view_from_bytes_unverified(damaged, size, &trusting));
    linebloom_blocked_view_free(trusting);
    FAILS(linebloom_blocked_view_from_bytes(bytes, size - 1, &refused), LINEBLOOM_STATUS_CORRUPT,
          "corrupt");
    FAILS(linebloom_blocked_view_from_bytes_unverified(bytes, size - 64, &refused),
          LINEBLOOM_STATUS_CORRUPT, "corrupt");
    FAILS(linebloom_blocked_view_from_bytes(NULL, 0, &refused), LINEBLOOM_STATUS_CORRUPT,
          "corrupt");
    FAILS(linebloom_blocked_load(NULL, 0, &loaded), LINEBLOOM_STATUS_CORRUPT, "corrupt");
    uint8_t *foreign = aligned_buffer(size);
    memset(foreign, 'x', size);
    FAILS(linebloom_blocked_view_from_bytes(foreign, size, &refused), LINEBLOOM_STATUS_CORRUPT,
          "corrupt");
    FAILS(linebloom_blocked_load(foreign, size, &loaded), LINEBLOOM_STATUS_CORRUPT, "corrupt");
    CHECK(refused == NULL);

    /* Bare lines an engine keeps in its own blocks, read with the filter's k and seed. */
    const uint8_t *lines;
    size_t lines_len;
    OK(linebloom_blocked_lines(f, &lines, &lines_len));
    CHECK(lines_len == info.lines * 64);
    uint8_t *block = aligned_buffer(lines_len);
    memcpy(block, lines, lines_len);
    CHECK(memcmp(block, bytes + 64, lines_len) == 0); /* the format's payload */
    linebloom_blocked_view *raw = NULL;
    OK(linebloom_blocked_view_from_raw_lines(block, lines_len, info.hashes, info.placement, info.seed,
                                             &raw));
    same_answers_blocked_view(f, raw, hashes, 2 * ITEMS);
    FAILS(linebloom_blocked_view_from_raw_lines(block, lines_len - 1, info.hashes, info.placement, info.seed,
                                                &refused),
          LINEBLOOM_STATUS_INVALID_ARGUMENT, "multiple of 64");
    FAILS(linebloom_blocked_view_from_raw_lines(block, 0, info.hashes, info.placement, info.seed, &refused),
          LINEBLOOM_STATUS_INVALID_ARGUMENT, "multiple of 64");
    FAILS(linebloom_blocked_view_from_raw_lines(block, lines_len, 0, info.placement, info.seed, &refused),
          LINEBLOOM_STATUS_INVALID_ARGUMENT, "probe count k");
    FAILS(linebloom_blocked_view_from_raw_lines(block, lines_len, 17, info.placement, info.seed, &refused),
          LINEBLOOM_STATUS_INVALID_ARGUMENT, "probe count k");
    FAILS(linebloom_blocked_view_from_raw_lines(block + 8, 64, info.hashes, info.placement, info.seed, &refused),
          LINEBLOOM_STATUS_MISALIGNED, "64-byte boundary");
    FAILS(linebloom_blocked_view_from_raw_lines(block, lines_len, info.hashes, 2, info.seed, &refused),
          LINEBLOOM_STATUS_INVALID_ARGUMENT, "placement");
    CHECK(refused == NULL);
    /* The seed is how keys are hashed: under another one the keys go missing. */
    linebloom_blocked_view *wrong_seed = NULL;
    OK(linebloom_blocked_view_from_raw_lines(block, lines_len, info.hashes, info.placement, info.seed + 1,
                                             &wrong_seed));
    uint32_t kept = 0;
    for (uint32_t i = 0; i < ITEMS; i++) {
        len = key_of(i, key);
        OK(linebloom_blocked_view_contains(wrong_seed, bytes_of(key), len, &found));
        kept += found;
    }
    CHECK(kept < ITEMS / 2);

    linebloom_blocked_view_free(view);
    linebloom_blocked_view_free(unverified);
    linebloom_blocked_view_free(raw);
    linebloom_blocked_view_free(wrong_seed);
    linebloom_blocked_free(copy);
    linebloom_blocked_free(loaded);
    linebloom_blocked_free(from_shifted);
    linebloom_blocked_free(f);
    free(block);
    free(foreign);
    free(damaged);
    free(shifted);
    free(bytes);
    free(hashes);
}

static void test_errors(void) {
    linebloom_blocked *f = NULL;
    FAILS(linebloom_blocked_new_fpr(1000, 1.5, &f), LINEBLOOM_STATUS_INVALID_ARGUMENT,
          "false-positive rate");
    FAILS(linebloom_blocked_new_fpr(1000, 0.0, &f), LINEBLOOM_STATUS_INVALID_ARGUMENT,
          "false-positive rate");
    FAILS(linebloom_blocked_new_fpr(1000, NAN, &f), LINEBLOOM_STATUS_INVALID_ARGUMENT,
          "false-positive rate");
    FAILS(linebloom_blocked_new_fpr(0, 0.01, &f), LINEBLOOM_STATUS_INVALID_ARGUMENT, "items");
    FAILS(linebloom_blocked_new_bits_per_key(1000, 0.5, &f), LINEBLOOM_STATUS_INVALID_ARGUMENT,
          "bits per key");
    FAILS(linebloom_blocked_new_with(1000, 10.0, 17, 0, &f), LINEBLOOM_STATUS_INVALID_ARGUMENT,
          "probe count k");
    FAILS(linebloom_blocked_new_fpr(1000, 0.01, NULL), LINEBLOOM_STATUS_NULL_POINTER, "out");
    /* Larger than any address space, and larger than this process can map. */
    FAILS(linebloom_blocked_new_bits_per_key(SIZE_MAX, 1000.0, &f),
          LINEBLOOM_STATUS_OUT_OF_MEMORY, "memory");
    FAILS(linebloom_blocked_new_bits_per_key((size_t)1 << 60, 10.0, &f),
          LINEBLOOM_STATUS_OUT_OF_MEMORY, "memory");
    CHECK(f == NULL); /* no output on failure */

    OK(linebloom_blocked_new_fpr(1000, 0.01, &f));
    uint64_t hashes[4] = {1, 2, 3, 4};
    bool out[4];
    bool found;
    size_t size;
    linebloom_blocked_info info;
    linebloom_blocked *none = NULL;
    linebloom_blocked_view *no_view = NULL;
    FAILS(linebloom_blocked_insert_hash(NULL, 1), LINEBLOOM_STATUS_NULL_POINTER, "filter");
    FAILS(linebloom_blocked_insert(f, NULL, 3), LINEBLOOM_STATUS_NULL_POINTER, "key");
    FAILS(linebloom_blocked_insert_hashes(f, NULL, 4), LINEBLOOM_STATUS_NULL_POINTER, "hashes");
    FAILS(linebloom_blocked_contains_hash(f, 1, NULL), LINEBLOOM_STATUS_NULL_POINTER, "out");
    FAILS(linebloom_blocked_contains_hash(NULL, 1, &found), LINEBLOOM_STATUS_NULL_POINTER,
          "filter");
    FAILS(linebloom_blocked_contains(f, NULL, 3, &found), LINEBLOOM_STATUS_NULL_POINTER, "key");
    FAILS(linebloom_blocked_contains_hashes(f, NULL, 4, out), LINEBLOOM_STATUS_NULL_POINTER,
          "hashes");
    FAILS(linebloom_blocked_contains_hashes(f, hashes, 4, NULL), LINEBLOOM_STATUS_NULL_POINTER,
          "out");
    FAILS(linebloom_blocked_get_info(f, NULL), LINEBLOOM_STATUS_NULL_POINTER, "info");
    FAILS(linebloom_blocked_lines(f, NULL, &size), LINEBLOOM_STATUS_NULL_POINTER, "lines");
    FAILS(linebloom_blocked_serialized_size(NULL, &size), LINEBLOOM_STATUS_NULL_POINTER,
          "filter");
    OK(linebloom_blocked_serialized_size(f, &size));
    FAILS(linebloom_blocked_save(f, NULL, size), LINEBLOOM_STATUS_NULL_POINTER, "buf");
    FAILS(linebloom_blocked_load(NULL, 10, &none), LINEBLOOM_STATUS_NULL_POINTER, "bytes");
    FAILS(linebloom_blocked_view_from_bytes(NULL, 128, &no_view), LINEBLOOM_STATUS_NULL_POINTER,
          "bytes");
    FAILS(linebloom_blocked_view_get_info(NULL, &info), LINEBLOOM_STATUS_NULL_POINTER, "view");
    FAILS(linebloom_blocked_view_to_owned(NULL, &none), LINEBLOOM_STATUS_NULL_POINTER, "view");
    FAILS(linebloom_hash_bytes(NULL, 1, 0, hashes), LINEBLOOM_STATUS_NULL_POINTER, "key");
    CHECK(none == NULL && no_view == NULL);

    /* A failure's message stays until the next failure on this thread. */
    FAILS(linebloom_blocked_new_fpr(0, 0.01, &none), LINEBLOOM_STATUS_INVALID_ARGUMENT, "items");
    OK(linebloom_blocked_insert_hash(f, 1));
    CHECK(strstr(linebloom_last_error(), "items") != NULL);

    /* Freeing null does nothing. */
    linebloom_blocked_free(NULL);
    linebloom_blocked_view_free(NULL);
    linebloom_split_block_free(NULL);
    linebloom_split_block_view_free(NULL);
    linebloom_blocked_free(f);
}

static void test_split_block_union(void) {
    linebloom_split_block *a = NULL, *b = NULL, *smaller = NULL;
    OK(linebloom_split_block_new_bits_per_key(ITEMS, 10.0, &a));
    OK(linebloom_split_block_new_bits_per_key(ITEMS, 10.0, &b));
    uint64_t *hashes = blocked_hashes(0);
    OK(linebloom_split_block_insert_hashes(a, hashes, ITEMS / 2));
    OK(linebloom_split_block_insert_hashes(b, hashes + ITEMS / 2, ITEMS / 2));
    OK(linebloom_split_block_union(a, b));
    OK(linebloom_split_block_union(a, a));
    bool *out = malloc(ITEMS);
    OK(linebloom_split_block_contains_hashes(a, hashes, ITEMS, out));
    for (uint32_t i = 0; i < ITEMS; i++) CHECK(out[i]);
    OK(linebloom_split_block_new_bits_per_key(ITEMS / 2, 10.0, &smaller));
    FAILS(linebloom_split_block_union(a, smaller), LINEBLOOM_STATUS_INCOMPATIBLE, "blocks");
    FAILS(linebloom_split_block_union(NULL, b), LINEBLOOM_STATUS_NULL_POINTER, "into");
    FAILS(linebloom_split_block_union(a, NULL), LINEBLOOM_STATUS_NULL_POINTER, "other");
    free(out);
    free(hashes);
    linebloom_split_block_free(a);
    linebloom_split_block_free(b);
    linebloom_split_block_free(smaller);
}

static void test_split_block(void) {
    /* Parquet's hash: XXH64 of the plain encoding, seed 0. */
    uint64_t h = 0;
    OK(linebloom_hash_xxh64(NULL, 0, &h));
    CHECK(h == UINT64_C(0xEF46DB3751D8E999));

    linebloom_split_block *s = NULL, *batched = NULL;
    OK(linebloom_split_block_new_fpr(ITEMS, 0.01, &s));
    OK(linebloom_split_block_new_bits_per_key(ITEMS, 10.0, &batched));
    uint64_t *hashes = malloc(2 * ITEMS * sizeof *hashes);
    char key[32];
    for (uint32_t i = 0; i < 2 * ITEMS; i++) {
        size_t len = key_of(i, key);
        OK(linebloom_hash_xxh64(bytes_of(key), len, &hashes[i]));
        if (i < ITEMS) OK(linebloom_split_block_insert(s, bytes_of(key), len));
    }
    OK(linebloom_split_block_insert_hashes(batched, hashes, ITEMS));
    OK(linebloom_split_block_insert_hash(batched, 12345));

    uint32_t positives = 0;
    for (uint32_t i = 0; i < 2 * ITEMS; i++) {
        size_t len = key_of(i, key);
        bool by_key, by_hash;
        OK(linebloom_split_block_contains(s, bytes_of(key), len, &by_key));
        OK(linebloom_split_block_contains_hash(s, hashes[i], &by_hash));
        CHECK(by_key == by_hash);
        if (i < ITEMS) CHECK(by_key);
        else positives += by_key;
    }
    CHECK(positives < ITEMS / 50);

    bool *a = malloc(2 * ITEMS), *b = malloc(2 * ITEMS);
    OK(linebloom_split_block_contains_hashes(batched, hashes, 2 * ITEMS, a));
    for (uint32_t i = 0; i < 2 * ITEMS; i++) {
        bool one;
        OK(linebloom_split_block_contains_hash(batched, hashes[i], &one));
        CHECK(a[i] == one);
        if (i < ITEMS) CHECK(a[i]);
    }
    bool extra = false;
    OK(linebloom_split_block_contains_hash(batched, 12345, &extra));
    CHECK(extra);

    /* The Parquet bitset, viewed in place at an odd address. */
    const uint8_t *bitset;
    size_t bitset_len;
    OK(linebloom_split_block_bitset(s, &bitset, &bitset_len));
    CHECK(bitset_len >= 32 && bitset_len % 32 == 0);
    uint8_t *page = malloc(bitset_len + 1);
    memcpy(page + 1, bitset, bitset_len);
    linebloom_split_block_view *view = NULL, *refused = NULL;
    OK(linebloom_split_block_view_from_bitset(page + 1, bitset_len, &view));
    OK(linebloom_split_block_contains_hashes(s, hashes, 2 * ITEMS, a));
    OK(linebloom_split_block_view_contains_hashes(view, hashes, 2 * ITEMS, b));
    CHECK(memcmp(a, b, 2 * ITEMS) == 0);
    size_t len = key_of(3, key);
    bool found = false, one = false;
    OK(linebloom_split_block_view_contains(view, bytes_of(key), len, &found));
    CHECK(found);
    OK(linebloom_split_block_view_contains_hash(view, hashes[3], &one));
    CHECK(one);
    linebloom_split_block *copy = NULL;
    OK(linebloom_split_block_view_to_owned(view, &copy));
    OK(linebloom_split_block_contains_hashes(copy, hashes, 2 * ITEMS, b));
    CHECK(memcmp(a, b, 2 * ITEMS) == 0);
    FAILS(linebloom_split_block_view_from_bitset(page + 1, 33, &refused), LINEBLOOM_STATUS_CORRUPT,
          "multiple of 32");
    FAILS(linebloom_split_block_view_from_bitset(NULL, 0, &refused), LINEBLOOM_STATUS_CORRUPT,
          "multiple of 32");
    FAILS(linebloom_split_block_view_from_bitset(NULL, 64, &refused),
          LINEBLOOM_STATUS_NULL_POINTER, "bytes");
    CHECK(refused == NULL);

    /* linebloom's format: save, load, damage. */
    size_t size = 0;
    OK(linebloom_split_block_serialized_size(s, &size));
    CHECK(size == 64 + bitset_len + 8);
    uint8_t *bytes = malloc(size);
    FAILS(linebloom_split_block_save(s, bytes, 10), LINEBLOOM_STATUS_BUFFER_TOO_SMALL, "needs");
    OK(linebloom_split_block_save(s, bytes, size));
    linebloom_split_block *loaded = NULL;
    OK(linebloom_split_block_load(bytes, size, &loaded));
    OK(linebloom_split_block_contains_hashes(loaded, hashes, 2 * ITEMS, b));
    CHECK(memcmp(a, b, 2 * ITEMS) == 0);
    /* A split-block filter's bytes are not a blocked filter's. */
    linebloom_blocked *wrong_kind = NULL;
    FAILS(linebloom_blocked_load(bytes, size, &wrong_kind), LINEBLOOM_STATUS_CORRUPT, "corrupt");
    bytes[size - 1] ^= 0xff;
    linebloom_split_block *none = NULL;
    FAILS(linebloom_split_block_load(bytes, size, &none), LINEBLOOM_STATUS_CORRUPT, "checksum");
    CHECK(none == NULL && wrong_kind == NULL);

    FAILS(linebloom_split_block_new_fpr(0, 0.01, &none), LINEBLOOM_STATUS_INVALID_ARGUMENT,
          "items");
    FAILS(linebloom_split_block_insert_hash(NULL, 1), LINEBLOOM_STATUS_NULL_POINTER, "filter");
    FAILS(linebloom_split_block_bitset(s, &bitset, NULL), LINEBLOOM_STATUS_NULL_POINTER, "len");

    free(bytes);
    free(page);
    free(a);
    free(b);
    free(hashes);
    linebloom_split_block_view_free(view);
    linebloom_split_block_free(copy);
    linebloom_split_block_free(loaded);
    linebloom_split_block_free(batched);
    linebloom_split_block_free(s);
}

/* Several threads share one filter and one view for lookups. */
struct shared {
    const linebloom_blocked *filter;
    const linebloom_blocked_view *view;
    const uint64_t *hashes;
    int failures;
};

static void *look_up(void *arg) {
    struct shared *s = arg;
    bool *out = malloc(ITEMS);
    for (int round = 0; round < 5; round++) {
        if (linebloom_blocked_contains_hashes(s->filter, s->hashes, ITEMS, out) !=
            LINEBLOOM_STATUS_OK)
            s->failures++;
        for (uint32_t i = 0; i < ITEMS; i++) s->failures += !out[i];
        if (linebloom_blocked_view_contains_hashes(s->view, s->hashes, ITEMS, out) !=
            LINEBLOOM_STATUS_OK)
            s->failures++;
        for (uint32_t i = 0; i < ITEMS; i++) s->failures += !out[i];
    }
    /* A failure's message belongs to the thread that failed. */
    if (linebloom_blocked_contains_hash(NULL, 1, out) != LINEBLOOM_STATUS_NULL_POINTER ||
        strstr(linebloom_last_error(), "filter") == NULL)
        s->failures++;
    free(out);
    return NULL;
}

static void test_threads(void) {
    linebloom_blocked *f = NULL;
    OK(linebloom_blocked_new_fpr(ITEMS, 0.01, &f));
    uint64_t *hashes = blocked_hashes(LINEBLOOM_DEFAULT_SEED);
    OK(linebloom_blocked_insert_hashes(f, hashes, ITEMS));
    const uint8_t *lines;
    size_t len;
    linebloom_blocked_info info;
    OK(linebloom_blocked_lines(f, &lines, &len));
    OK(linebloom_blocked_get_info(f, &info));
    linebloom_blocked_view *v = NULL;
    OK(linebloom_blocked_view_from_raw_lines(lines, len, info.hashes, info.placement, info.seed, &v));

    FAILS(linebloom_blocked_new_fpr(1000, 2.0, NULL), LINEBLOOM_STATUS_NULL_POINTER, "out");
    enum { THREADS = 4 };
    pthread_t threads[THREADS];
    struct shared shared[THREADS];
    for (int t = 0; t < THREADS; t++) {
        shared[t] = (struct shared){f, v, hashes, 0};
        CHECK(pthread_create(&threads[t], NULL, look_up, &shared[t]) == 0);
    }
    for (int t = 0; t < THREADS; t++) {
        CHECK(pthread_join(threads[t], NULL) == 0);
        CHECK(shared[t].failures == 0);
    }
    /* The other threads' failures left this thread's message alone. */
    CHECK(strstr(linebloom_last_error(), "out must not be null") != NULL);

    linebloom_blocked_view_free(v);
    linebloom_blocked_free(f);
    free(hashes);
}

int main(void) {
    const char *path = linebloom_simd_path();
    CHECK(path != NULL && strlen(path) > 0);
    CHECK(strlen(linebloom_version()) > 0);
    CHECK(strcmp(linebloom_last_error(), "") == 0);

    test_blocked_keys();
    test_blocked_batched();
    test_blocked_union();
    test_split_block_union();
    test_blocked_bytes_and_views();
    test_errors();
    test_split_block();
    test_threads();

    if (failures > 0) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("linebloom %s, SIMD path %s: all checks passed\n", linebloom_version(), path);
    return 0;
}
