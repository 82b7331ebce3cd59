/* Zarr v3 sharding_indexed: many inner chunks in one file, plus an index.
 *
 * The index holds, for every inner chunk in C order of the shard's chunk
 * grid, two uint64 values (offset of its encoded bytes in the shard file,
 * their length), both 2^64-1 for a chunk that is absent. It is encoded with
 * the index codecs - bytes (little or big endian) then crc32c, as
 * zarr-python writes it - and sits at the end of the file (default) or at
 * its start. Every offset/length read is checked against the file's size,
 * so a lying index gives a clear error, never an out-of-bounds read. */
#include "zarr_internal.h"

#include <stdlib.h>
#include <string.h>

static size_t index_bytes(const voxa_zarr *z, int64_t n) {
    return (size_t)n * 16 + 4 * (size_t)z->index_chain.nbb;
}

static uint64_t load64(const unsigned char *p, int big) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)p[big ? 7 - i : i] << (8 * i);
    return v;
}

static void store64(unsigned char *p, uint64_t v, int big) {
    for (int i = 0; i < 8; i++) p[big ? 7 - i : i] = (unsigned char)(v >> (8 * i));
}

size_t voxa__zarr_shard_index_bytes(const voxa_zarr *z, int64_t n) { return index_bytes(z, n); }

voxa_status voxa__zarr_shard_index(const voxa_zarr *z, const void *buf, size_t len,
                                   uint64_t *offs, uint64_t *lens, int64_t n, const char *name) {
    size_t ib = index_bytes(z, n);
    VOXA_FAIL_IF(len < ib, VOXA_EFORMAT,
                 "shard '%s' has %zu bytes, less than its index (%zu bytes): truncated", name,
                 len, ib);
    const unsigned char *idx = (const unsigned char *)buf + (z->index_at_start ? 0 : len - ib);
    return voxa__zarr_shard_index_at(z, idx, len, offs, lens, n, name);
}

voxa_status voxa__zarr_shard_index_at(const voxa_zarr *z, const void *index, size_t len,
                                      uint64_t *offs, uint64_t *lens, int64_t n,
                                      const char *name) {
    const unsigned char *idx = index;
    size_t ib = index_bytes(z, n), m = ib;
    for (int k = z->index_chain.nbb - 1; k >= 0; k--) { /* crc32c only (checked at parse) */
        m -= 4;
        uint32_t want = (uint32_t)idx[m] | (uint32_t)idx[m + 1] << 8 |
                        (uint32_t)idx[m + 2] << 16 | (uint32_t)idx[m + 3] << 24;
        VOXA_FAIL_IF(voxa__crc32c(idx, m) != want, VOXA_EFORMAT,
                     "shard '%s': index checksum mismatch (corrupt shard)", name);
    }
    int big = z->index_chain.big_endian;
    for (int64_t i = 0; i < n; i++) {
        uint64_t o = load64(idx + 16 * i, big), l = load64(idx + 16 * i + 8, big);
        if (o == UINT64_MAX && l == UINT64_MAX) {
            offs[i] = lens[i] = UINT64_MAX;
            continue;
        }
        VOXA_FAIL_IF(o > len || l > len - o, VOXA_EFORMAT,
                     "shard '%s': inner chunk %lld at offset %llu + %llu bytes lies outside the "
                     "file (%zu bytes)", name, (long long)i, (unsigned long long)o,
                     (unsigned long long)l, len);
        offs[i] = o;
        lens[i] = l;
    }
    return VOXA_OK;
}

voxa_status voxa__zarr_shard_build(const voxa_zarr *z, void *const *chunks, const size_t *lens,
                                   int64_t n, void **out, size_t *out_len, const char *name) {
    size_t ib = index_bytes(z, n), total = ib;
    for (int64_t i = 0; i < n; i++)
        if (chunks[i]) total += lens[i];
    unsigned char *buf = malloc(total);
    VOXA_FAIL_IF(!buf, VOXA_ENOMEM, "out of memory assembling shard '%s' (%zu bytes)", name,
                 total);
    size_t pos = z->index_at_start ? ib : 0;
    unsigned char *idx = buf + (z->index_at_start ? 0 : total - ib);
    int big = z->index_chain.big_endian;
    for (int64_t i = 0; i < n; i++) {
        if (!chunks[i]) {
            store64(idx + 16 * i, UINT64_MAX, big);
            store64(idx + 16 * i + 8, UINT64_MAX, big);
            continue;
        }
        memcpy(buf + pos, chunks[i], lens[i]);
        store64(idx + 16 * i, pos, big);
        store64(idx + 16 * i + 8, lens[i], big);
        pos += lens[i];
    }
    size_t m = (size_t)n * 16;
    for (int k = 0; k < z->index_chain.nbb; k++) {
        uint32_t v = voxa__crc32c(idx, m);
        for (int b = 0; b < 4; b++) idx[m + b] = (unsigned char)(v >> (8 * b));
        m += 4;
    }
    *out = buf;
    *out_len = total;
    return VOXA_OK;
}
