/* Zarr array metadata: parse and write v2 `.zarray` and v3 `zarr.json`.
 *
 * Both are small JSON documents (cJSON). The parser checks every field it
 * uses - shape/chunks lengths and ranges, the dtype, the codec chain's order
 * (array->array, one array->bytes, bytes->bytes) - and names the field and
 * file in its message, so metadata that lies fails here, not in a chunk
 * loop. cJSON keeps numbers as doubles (its valueint saturates): integers
 * are read from valuedouble and must be exact (below 2^53). Fuzzed by
 * fuzz/fuzz_zarr_meta.c through voxa_zarr_parse_metadata. */
#include "zarr_internal.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAXINT53 9007199254740992.0

static const char *v3_names[VOXA_NDTYPES] = {"bool",   "uint8",  "int8",   "uint16",
                                             "int16",  "uint32", "int32",  "uint64",
                                             "int64",  "float32", "float64"};
static const char *v2_codes[VOXA_NDTYPES] = {"b1", "u1", "i1", "u2", "i2", "u4",
                                             "i4", "u8", "i8", "f4", "f8"};

static int get_int(const cJSON *j, int64_t *v) {
    if (!cJSON_IsNumber(j)) return 0;
    double d = j->valuedouble;
    if (!(d == floor(d)) || fabs(d) >= MAXINT53) return 0;
    *v = (int64_t)d;
    return 1;
}

/* A JSON array of ndim positive integers (or >= 0 when zero_ok). */
static voxa_status get_shape(const cJSON *j, int *ndim, int64_t *out, int zero_ok,
                             const char *field, const char *where) {
    VOXA_FAIL_IF(!cJSON_IsArray(j), VOXA_EFORMAT, "%s: '%s' is missing or not a list", where,
                 field);
    int n = cJSON_GetArraySize(j);
    VOXA_FAIL_IF(n > VOXA_MAXDIM, VOXA_EUNSUPPORTED, "%s: '%s' has %d axes (at most %d)", where,
                 field, n, VOXA_MAXDIM);
    if (*ndim >= 0)
        VOXA_FAIL_IF(n != *ndim, VOXA_EFORMAT, "%s: '%s' has %d entries, the shape has %d",
                     where, field, n, *ndim);
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, j) {
        int64_t v;
        VOXA_FAIL_IF(!get_int(e, &v) || v < (zero_ok ? 0 : 1), VOXA_EFORMAT,
                     "%s: '%s'[%d] is not a %s integer", where, field, i,
                     zero_ok ? "non-negative" : "positive");
        out[i++] = v;
    }
    *ndim = n;
    return VOXA_OK;
}

/* ---- fill value ---------------------------------------------------------- */

static voxa_status set_fill(voxa_zarr *z, const cJSON *j, const char *where) {
    double v = 0;
    memset(z->fill, 0, sizeof z->fill);
    if (!j || cJSON_IsNull(j)) { /* v2 null: uninitialised; read as 0 */
        z->fillv = 0;
        return VOXA_OK;
    }
    if (cJSON_IsBool(j)) v = cJSON_IsTrue(j);
    else if (cJSON_IsString(j)) {
        const char *s = j->valuestring;
        if (!strcmp(s, "NaN")) v = NAN;
        else if (!strcmp(s, "Infinity")) v = INFINITY;
        else if (!strcmp(s, "-Infinity")) v = -INFINITY;
        else if (s[0] == '0' && s[1] == 'x' && voxa_dtype_is_float(z->dtype)) {
            /* v3: the raw bits of a float, big-endian hex */
            char *end;
            errno = 0;
            unsigned long long bits = strtoull(s + 2, &end, 16);
            VOXA_FAIL_IF(*end || errno || strlen(s + 2) != 2 * z->es, VOXA_EFORMAT,
                         "%s: fill_value '%s' is not %zu hex digits", where, s, 2 * z->es);
            if (z->es == 4) {
                uint32_t b = (uint32_t)bits;
                float f;
                memcpy(&f, &b, 4);
                memcpy(z->fill, &f, 4);
                z->fillv = f;
            } else {
                double d;
                memcpy(&d, &bits, 8);
                memcpy(z->fill, &d, 8);
                z->fillv = d;
            }
            return VOXA_OK;
        } else
            return voxa__error(VOXA_EFORMAT, "%s: fill_value '%.40s' is not understood", where,
                               s);
    } else if (cJSON_IsNumber(j)) v = j->valuedouble;
    else return voxa__error(VOXA_EFORMAT, "%s: fill_value is not a number", where);
    if (!voxa_dtype_is_float(z->dtype)) {
        VOXA_FAIL_IF(v != floor(v) || fabs(v) >= MAXINT53, VOXA_EUNSUPPORTED,
                     "%s: fill_value %g is not an integer below 2^53 for dtype %s", where, v,
                     voxa_dtype_name(z->dtype));
    }
    if (!voxa_dtype_is_float(z->dtype) && z->dtype != VOXA_BOOL) {
        static const double lo[VOXA_NDTYPES] = {0, 0, -128, 0, -32768, 0, -2147483648.0, 0,
                                                -MAXINT53};
        static const double hi[VOXA_NDTYPES] = {1, 255, 127, 65535, 32767, 4294967295.0,
                                                2147483647.0, MAXINT53, MAXINT53};
        VOXA_FAIL_IF(v < lo[z->dtype] || v > hi[z->dtype], VOXA_EFORMAT,
                     "%s: fill_value %g does not fit dtype %s", where, v,
                     voxa_dtype_name(z->dtype));
    }
    z->fillv = v;
    int64_t iv = voxa_dtype_is_float(z->dtype) ? 0 : (int64_t)v;
    switch (z->dtype) {
    case VOXA_BOOL: z->fill[0] = v != 0; break;
    case VOXA_U8: case VOXA_I8: { uint8_t b = (uint8_t)iv; memcpy(z->fill, &b, 1); break; }
    case VOXA_U16: case VOXA_I16: { uint16_t b = (uint16_t)iv; memcpy(z->fill, &b, 2); break; }
    case VOXA_U32: case VOXA_I32: { uint32_t b = (uint32_t)iv; memcpy(z->fill, &b, 4); break; }
    case VOXA_U64: case VOXA_I64: { uint64_t b = (uint64_t)iv; memcpy(z->fill, &b, 8); break; }
    case VOXA_F32: { float f = (float)v; memcpy(z->fill, &f, 4); break; }
    case VOXA_F64: memcpy(z->fill, &v, 8); break;
    default: break;
    }
    return VOXA_OK;
}

/* ---- codecs -------------------------------------------------------------- */

static const char *str_of(const cJSON *o, const char *k) {
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(j) ? j->valuestring : NULL;
}

static int int_of(const cJSON *o, const char *k, int dflt) {
    int64_t v;
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(o, k);
    return j && get_int(j, &v) && v >= -1000 && v <= 1000000000 ? (int)v : dflt;
}

/* A compressor (v2 `compressor` object or the configuration of a v3 codec). */
static voxa_status parse_bb(zbb *b, const char *id, const cJSON *cfg, size_t es, int v3,
                            const char *where) {
    memset(b, 0, sizeof *b);
    if (!strcmp(id, "blosc")) {
        b->kind = ZK_BLOSC;
        const char *cn = str_of(cfg, "cname");
        VOXA_FAIL_IF(!cn, VOXA_EFORMAT, "%s: blosc codec without 'cname'", where);
        VOXA_FAIL_IF(strcmp(cn, "lz4") && strcmp(cn, "lz4hc") && strcmp(cn, "zstd") &&
                         strcmp(cn, "zlib") && strcmp(cn, "blosclz") && strcmp(cn, "snappy"),
                     VOXA_EUNSUPPORTED, "%s: blosc cname '%.20s' is not supported", where, cn);
        snprintf(b->cname, sizeof b->cname, "%s", cn);
        b->level = int_of(cfg, "clevel", 5);
        const cJSON *sh = cJSON_GetObjectItemCaseSensitive(cfg, "shuffle");
        if (cJSON_IsString(sh)) {
            const char *s = sh->valuestring;
            b->shuffle = !strcmp(s, "noshuffle") ? 0 : !strcmp(s, "shuffle") ? 1
                       : !strcmp(s, "bitshuffle") ? 2 : -1;
        } else if (cJSON_IsNumber(sh)) {
            int s = int_of(cfg, "shuffle", -2);
            b->shuffle = s == -1 ? (es == 1 ? 2 : 1) /* numcodecs AUTOSHUFFLE */
                       : (s >= 0 && s <= 2) ? s : -1;
        } else b->shuffle = v3 ? -1 : 1;
        VOXA_FAIL_IF(b->shuffle < 0, VOXA_EFORMAT, "%s: blosc shuffle is not understood", where);
        b->typesize = int_of(cfg, "typesize", (int)es);
        b->blocksize = int_of(cfg, "blocksize", 0);
        VOXA_FAIL_IF(b->level < 0 || b->level > 9 || b->typesize < 1 || b->typesize > 255 ||
                         b->blocksize < 0,
                     VOXA_EFORMAT, "%s: blosc clevel/typesize/blocksize out of range", where);
    } else if (!strcmp(id, "zstd")) {
        b->kind = ZK_ZSTD;
        b->level = int_of(cfg, "level", 0);
    } else if (!strcmp(id, "gzip")) {
        b->kind = ZK_GZIP;
        b->level = int_of(cfg, "level", 6);
    } else if (!strcmp(id, "zlib") || !strcmp(id, "numcodecs.zlib")) {
        b->kind = ZK_ZLIB;
        b->level = int_of(cfg, "level", 6);
    } else if (!strcmp(id, "crc32c")) {
        b->kind = ZK_CRC32C;
    } else
        return voxa__error(VOXA_EUNSUPPORTED, "%s: codec '%.40s' is not supported", where, id);
    if (b->kind == ZK_GZIP || b->kind == ZK_ZLIB)
        VOXA_FAIL_IF(b->level < 0 || b->level > 9, VOXA_EFORMAT, "%s: %s level %d out of range",
                     where, id, b->level);
    return VOXA_OK;
}

/* A v3 codec list: transpose? , bytes | sharding_indexed, bytes->bytes*. */
static voxa_status parse_chain(voxa_zarr *z, zchain *c, const cJSON *list, int ndim,
                               int allow_shard, const char *where) {
    memset(c, 0, sizeof *c);
    VOXA_FAIL_IF(!cJSON_IsArray(list), VOXA_EFORMAT, "%s: 'codecs' is missing or not a list",
                 where);
    int stage = 0; /* 0: array->array, 1: after array->bytes */
    const cJSON *e;
    cJSON_ArrayForEach(e, list) {
        const char *name = cJSON_IsString(e) ? e->valuestring : str_of(e, "name");
        VOXA_FAIL_IF(!name, VOXA_EFORMAT, "%s: a codec has no 'name'", where);
        const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(e, "configuration");
        if (!strcmp(name, "transpose")) {
            VOXA_FAIL_IF(stage != 0, VOXA_EFORMAT, "%s: transpose after the array->bytes codec",
                         where);
            const cJSON *ord = cJSON_GetObjectItemCaseSensitive(cfg, "order");
            VOXA_FAIL_IF(!cJSON_IsArray(ord) || cJSON_GetArraySize(ord) != ndim, VOXA_EFORMAT,
                         "%s: transpose 'order' must list %d axes", where, ndim);
            int ident = 1, rev = 1, i = 0;
            const cJSON *o;
            cJSON_ArrayForEach(o, ord) {
                int64_t v;
                VOXA_FAIL_IF(!get_int(o, &v), VOXA_EFORMAT, "%s: transpose order entry", where);
                ident &= v == i;
                rev &= v == ndim - 1 - i;
                i++;
            }
            VOXA_FAIL_IF(!ident && !rev, VOXA_EUNSUPPORTED,
                         "%s: transpose orders other than C or F are not supported", where);
            c->fortran = !ident;
        } else if (!strcmp(name, "bytes") || !strcmp(name, "sharding_indexed")) {
            VOXA_FAIL_IF(stage != 0, VOXA_EFORMAT, "%s: two array->bytes codecs", where);
            stage = 1;
            if (!strcmp(name, "bytes")) {
                const char *en = str_of(cfg, "endian");
                VOXA_FAIL_IF(en && strcmp(en, "little") && strcmp(en, "big"), VOXA_EFORMAT,
                             "%s: bytes endian '%.20s'", where, en);
                VOXA_FAIL_IF(!en && z->es > 1, VOXA_EFORMAT,
                             "%s: bytes codec without 'endian' for a %zu-byte dtype", where, z->es);
                c->big_endian = en && !strcmp(en, "big");
                continue;
            }
            VOXA_FAIL_IF(!allow_shard, VOXA_EUNSUPPORTED, "%s: nested sharding is not supported",
                         where);
            VOXA_FAIL_IF(c->fortran, VOXA_EUNSUPPORTED,
                         "%s: transpose before sharding is not supported", where);
            int nd = ndim;
            int64_t inner[VOXA_MAXDIM];
            VOXA_CHECK(get_shape(cJSON_GetObjectItemCaseSensitive(cfg, "chunk_shape"), &nd, inner,
                                 0, "sharding chunk_shape", where));
            for (int d = 0; d < ndim; d++)
                VOXA_FAIL_IF(z->unit[d] % inner[d], VOXA_EFORMAT,
                             "%s: shard shape %lld is not a multiple of the inner chunk %lld "
                             "(axis %d)", where, (long long)z->unit[d], (long long)inner[d], d);
            memcpy(z->chunks, inner, sizeof inner);
            z->sharded = 1;
            VOXA_CHECK(parse_chain(z, &z->chain, cJSON_GetObjectItemCaseSensitive(cfg, "codecs"),
                                   ndim, 0, where));
            const cJSON *ic = cJSON_GetObjectItemCaseSensitive(cfg, "index_codecs");
            VOXA_CHECK(parse_chain(z, &z->index_chain, ic, 1, 0, where));
            for (int k = 0; k < z->index_chain.nbb; k++)
                VOXA_FAIL_IF(z->index_chain.bb[k].kind != ZK_CRC32C, VOXA_EUNSUPPORTED,
                             "%s: compressed shard indexes are not supported", where);
            const char *loc = str_of(cfg, "index_location");
            VOXA_FAIL_IF(loc && strcmp(loc, "start") && strcmp(loc, "end"), VOXA_EFORMAT,
                         "%s: index_location '%.20s'", where, loc);
            z->index_at_start = loc && !strcmp(loc, "start");
        } else {
            VOXA_FAIL_IF(stage != 1, VOXA_EFORMAT, "%s: codec '%.40s' before the bytes codec",
                         where, name);
            VOXA_FAIL_IF(c->nbb >= ZMAX_BB, VOXA_EUNSUPPORTED, "%s: too many codecs", where);
            VOXA_FAIL_IF(!strcmp(name, "zlib"), VOXA_EUNSUPPORTED,
                         "%s: codec 'zlib' is not a Zarr v3 codec", where);
            VOXA_CHECK(parse_bb(&c->bb[c->nbb], name, cfg, z->es, 1, where));
            int ncomp = 0;
            for (int k = 0; k <= c->nbb; k++) ncomp += c->bb[k].kind != ZK_CRC32C;
            VOXA_FAIL_IF(ncomp > 1, VOXA_EUNSUPPORTED,
                         "%s: more than one compressor in a codec chain is not supported", where);
            c->nbb++;
        }
    }
    VOXA_FAIL_IF(stage != 1, VOXA_EFORMAT, "%s: no array->bytes codec ('bytes')", where);
    return VOXA_OK;
}

/* ---- v2 / v3 ------------------------------------------------------------- */

static voxa_status parse_v2(voxa_zarr *z, const cJSON *root, const char *where) {
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(root, "dtype");
    VOXA_FAIL_IF(!cJSON_IsString(dt), VOXA_EUNSUPPORTED,
                 "%s: 'dtype' is missing or structured (not supported)", where);
    const char *s = dt->valuestring;
    char order = '|';
    if (*s == '<' || *s == '>' || *s == '|' || *s == '=') order = *s++;
    int t = -1;
    for (int i = 0; i < VOXA_NDTYPES; i++)
        if (!strcmp(s, v2_codes[i])) t = i;
    VOXA_FAIL_IF(t < 0, VOXA_EUNSUPPORTED, "%s: dtype '%.20s' is not supported", where,
                 dt->valuestring);
    z->dtype = (voxa_dtype)t;
    z->es = voxa_dtype_size(z->dtype);
    z->chain.big_endian = order == '>' && z->es > 1;
    z->ndim = -1;
    VOXA_CHECK(get_shape(cJSON_GetObjectItemCaseSensitive(root, "shape"), &z->ndim, z->shape, 1,
                         "shape", where));
    VOXA_CHECK(get_shape(cJSON_GetObjectItemCaseSensitive(root, "chunks"), &z->ndim, z->chunks,
                         0, "chunks", where));
    memcpy(z->unit, z->chunks, sizeof z->chunks);
    const char *ord = str_of(root, "order");
    VOXA_FAIL_IF(ord && strcmp(ord, "C") && strcmp(ord, "F"), VOXA_EFORMAT,
                 "%s: order '%.10s' is not C or F", where, ord);
    z->chain.fortran = ord && !strcmp(ord, "F");
    const cJSON *filt = cJSON_GetObjectItemCaseSensitive(root, "filters");
    VOXA_FAIL_IF(filt && !cJSON_IsNull(filt) && !(cJSON_IsArray(filt) && !cJSON_GetArraySize(filt)),
                 VOXA_EUNSUPPORTED, "%s: filters are not supported", where);
    const cJSON *comp = cJSON_GetObjectItemCaseSensitive(root, "compressor");
    if (comp && !cJSON_IsNull(comp)) {
        const char *id = str_of(comp, "id");
        VOXA_FAIL_IF(!id, VOXA_EFORMAT, "%s: compressor without 'id'", where);
        VOXA_CHECK(parse_bb(&z->chain.bb[0], id, comp, z->es, 0, where));
        z->chain.nbb = 1;
    }
    const char *sep = str_of(root, "dimension_separator");
    VOXA_FAIL_IF(sep && strcmp(sep, ".") && strcmp(sep, "/"), VOXA_EFORMAT,
                 "%s: dimension_separator '%.10s'", where, sep);
    z->sep = sep ? sep[0] : '.';
    z->v2_keys = 1;
    return set_fill(z, cJSON_GetObjectItemCaseSensitive(root, "fill_value"), where);
}

static voxa_status parse_v3(voxa_zarr *z, const cJSON *root, const char *where) {
    const char *nt = str_of(root, "node_type");
    VOXA_FAIL_IF(!nt || strcmp(nt, "array"), VOXA_EFORMAT, "%s: node_type is not 'array'",
                 where);
    const char *dt = str_of(root, "data_type");
    int t = -1;
    for (int i = 0; dt && i < VOXA_NDTYPES; i++)
        if (!strcmp(dt, v3_names[i])) t = i;
    VOXA_FAIL_IF(t < 0, VOXA_EUNSUPPORTED, "%s: data_type '%.30s' is not supported", where,
                 dt ? dt : "(missing)");
    z->dtype = (voxa_dtype)t;
    z->es = voxa_dtype_size(z->dtype);
    z->ndim = -1;
    VOXA_CHECK(get_shape(cJSON_GetObjectItemCaseSensitive(root, "shape"), &z->ndim, z->shape, 1,
                         "shape", where));
    const cJSON *grid = cJSON_GetObjectItemCaseSensitive(root, "chunk_grid");
    const char *gname = str_of(grid, "name");
    VOXA_FAIL_IF(!gname || strcmp(gname, "regular"), VOXA_EUNSUPPORTED,
                 "%s: chunk_grid '%.30s' is not supported (only 'regular')", where,
                 gname ? gname : "(missing)");
    VOXA_CHECK(get_shape(cJSON_GetObjectItemCaseSensitive(
                             cJSON_GetObjectItemCaseSensitive(grid, "configuration"),
                             "chunk_shape"),
                         &z->ndim, z->unit, 0, "chunk_shape", where));
    memcpy(z->chunks, z->unit, sizeof z->unit);
    const cJSON *kenc = cJSON_GetObjectItemCaseSensitive(root, "chunk_key_encoding");
    const char *kname = str_of(kenc, "name");
    VOXA_FAIL_IF(kname && strcmp(kname, "default") && strcmp(kname, "v2"), VOXA_EUNSUPPORTED,
                 "%s: chunk_key_encoding '%.30s' is not supported", where, kname);
    z->v2_keys = kname && !strcmp(kname, "v2");
    const char *sep = str_of(cJSON_GetObjectItemCaseSensitive(kenc, "configuration"), "separator");
    VOXA_FAIL_IF(sep && strcmp(sep, ".") && strcmp(sep, "/"), VOXA_EFORMAT,
                 "%s: chunk key separator '%.10s'", where, sep);
    z->sep = sep ? sep[0] : (z->v2_keys ? '.' : '/');
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(root, "storage_transformers");
    VOXA_FAIL_IF(st && !(cJSON_IsArray(st) && !cJSON_GetArraySize(st)), VOXA_EUNSUPPORTED,
                 "%s: storage_transformers are not supported", where);
    zchain outer;
    VOXA_CHECK(parse_chain(z, &outer, cJSON_GetObjectItemCaseSensitive(root, "codecs"), z->ndim,
                           1, where));
    if (z->sharded) {
        VOXA_FAIL_IF(outer.nbb, VOXA_EUNSUPPORTED,
                     "%s: codecs after sharding_indexed are not supported", where);
    } else
        z->chain = outer;
    return set_fill(z, cJSON_GetObjectItemCaseSensitive(root, "fill_value"), where);
}

voxa_status voxa__zarr_parse(voxa_zarr *z, const char *text, size_t len, const char *where) {
    voxa_status st = VOXA_OK;
    cJSON *root = cJSON_ParseWithLength(text, len);
    VOXA_GOTO_IF(!cJSON_IsObject(root), VOXA_EFORMAT, "%s: not a JSON object", where);
    int64_t fmt = 0;
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(root, "zarr_format");
    VOXA_GOTO_IF(!get_int(f, &fmt) || (fmt != 2 && fmt != 3), VOXA_EUNSUPPORTED,
                 "%s: zarr_format is missing or not 2 or 3", where);
    z->format = (int)fmt;
    st = fmt == 2 ? parse_v2(z, root, where) : parse_v3(z, root, where);
    if (st) goto done;
    /* Sizes must fit 64-bit byte offsets with room to spare. */
    double vox = 1, cvox = 1;
    for (int d = 0; d < z->ndim; d++) {
        VOXA_GOTO_IF(z->unit[d] < 1 || z->chunks[d] < 1, VOXA_EFORMAT,
                     "%s: chunk shape has a zero on axis %d", where, d);
        vox *= (double)z->shape[d];
        cvox *= (double)z->unit[d];
        z->grid[d] = (z->shape[d] + z->unit[d] - 1) / z->unit[d];
    }
    VOXA_GOTO_IF(vox * (double)z->es > 1e18, VOXA_EFORMAT, "%s: shape is too large", where);
    VOXA_GOTO_IF(cvox * (double)z->es > (double)((int64_t)1 << 40), VOXA_EUNSUPPORTED,
                 "%s: chunk/shard of %.0f bytes is too large", where, cvox * (double)z->es);
done:
    cJSON_Delete(root);
    return st;
}

/* ---- writing ------------------------------------------------------------- */

static cJSON *shape_json(int n, const int64_t *s) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber((double)s[i]));
    return a;
}

static cJSON *fill_json(const voxa_zarr *z) {
    double v = z->fillv;
    if (z->dtype == VOXA_BOOL) return cJSON_CreateBool(v != 0);
    if (isnan(v)) return cJSON_CreateString("NaN");
    if (isinf(v)) return cJSON_CreateString(v > 0 ? "Infinity" : "-Infinity");
    return cJSON_CreateNumber(v);
}

static const char *shuffle_v3[3] = {"noshuffle", "shuffle", "bitshuffle"};

static cJSON *bb_json(const zbb *b, int v3) {
    cJSON *o = cJSON_CreateObject(), *cfg = o;
    const char *id = b->kind == ZK_BLOSC ? "blosc" : b->kind == ZK_ZSTD ? "zstd"
                   : b->kind == ZK_GZIP ? "gzip" : b->kind == ZK_ZLIB ? "zlib" : "crc32c";
    if (v3) {
        cJSON_AddStringToObject(o, "name", id);
        cfg = cJSON_AddObjectToObject(o, "configuration");
    } else
        cJSON_AddStringToObject(o, "id", id);
    switch (b->kind) {
    case ZK_BLOSC:
        cJSON_AddStringToObject(cfg, "cname", b->cname);
        cJSON_AddNumberToObject(cfg, "clevel", b->level);
        if (v3) {
            cJSON_AddStringToObject(cfg, "shuffle", shuffle_v3[b->shuffle]);
            cJSON_AddNumberToObject(cfg, "typesize", b->typesize);
        } else
            cJSON_AddNumberToObject(cfg, "shuffle", b->shuffle);
        cJSON_AddNumberToObject(cfg, "blocksize", b->blocksize);
        break;
    case ZK_ZSTD:
        cJSON_AddNumberToObject(cfg, "level", b->level);
        if (v3) cJSON_AddFalseToObject(cfg, "checksum");
        break;
    case ZK_GZIP:
    case ZK_ZLIB: cJSON_AddNumberToObject(cfg, "level", b->level); break;
    default: break;
    }
    return o;
}

static cJSON *chain_json(const zchain *c, int ndim, size_t es) {
    cJSON *list = cJSON_CreateArray();
    if (c->fortran && ndim > 1) {
        cJSON *t = cJSON_CreateObject();
        cJSON_AddStringToObject(t, "name", "transpose");
        cJSON *ord = cJSON_CreateArray();
        for (int d = 0; d < ndim; d++) cJSON_AddItemToArray(ord, cJSON_CreateNumber(ndim - 1 - d));
        cJSON_AddItemToObject(cJSON_AddObjectToObject(t, "configuration"), "order", ord);
        cJSON_AddItemToArray(list, t);
    }
    cJSON *b = cJSON_CreateObject();
    cJSON_AddStringToObject(b, "name", "bytes");
    if (es > 1)
        cJSON_AddStringToObject(cJSON_AddObjectToObject(b, "configuration"), "endian",
                                c->big_endian ? "big" : "little");
    cJSON_AddItemToArray(list, b);
    for (int k = 0; k < c->nbb; k++) cJSON_AddItemToArray(list, bb_json(&c->bb[k], 1));
    return list;
}

voxa_status voxa__zarr_format_meta(const voxa_zarr *z, char **text) {
    cJSON *r = cJSON_CreateObject();
    if (z->format == 2) {
        cJSON_AddNumberToObject(r, "zarr_format", 2);
        cJSON_AddItemToObject(r, "shape", shape_json(z->ndim, z->shape));
        cJSON_AddItemToObject(r, "chunks", shape_json(z->ndim, z->chunks));
        char dt[8];
        snprintf(dt, sizeof dt, "%c%s", z->es == 1 ? '|' : z->chain.big_endian ? '>' : '<',
                 v2_codes[z->dtype]);
        cJSON_AddStringToObject(r, "dtype", dt);
        if (z->chain.nbb) cJSON_AddItemToObject(r, "compressor", bb_json(&z->chain.bb[0], 0));
        else cJSON_AddNullToObject(r, "compressor");
        cJSON_AddItemToObject(r, "fill_value", fill_json(z));
        cJSON_AddStringToObject(r, "order", z->chain.fortran ? "F" : "C");
        cJSON_AddNullToObject(r, "filters");
        char sep[2] = {z->sep, 0};
        cJSON_AddStringToObject(r, "dimension_separator", sep);
    } else {
        cJSON_AddNumberToObject(r, "zarr_format", 3);
        cJSON_AddStringToObject(r, "node_type", "array");
        cJSON_AddItemToObject(r, "shape", shape_json(z->ndim, z->shape));
        cJSON_AddStringToObject(r, "data_type", v3_names[z->dtype]);
        cJSON *g = cJSON_AddObjectToObject(r, "chunk_grid");
        cJSON_AddStringToObject(g, "name", "regular");
        cJSON_AddItemToObject(cJSON_AddObjectToObject(g, "configuration"), "chunk_shape",
                              shape_json(z->ndim, z->unit));
        cJSON *k = cJSON_AddObjectToObject(r, "chunk_key_encoding");
        cJSON_AddStringToObject(k, "name", z->v2_keys ? "v2" : "default");
        char sep[2] = {z->sep, 0};
        cJSON_AddStringToObject(cJSON_AddObjectToObject(k, "configuration"), "separator", sep);
        cJSON_AddItemToObject(r, "fill_value", fill_json(z));
        if (z->sharded) {
            cJSON *list = cJSON_CreateArray(), *s = cJSON_CreateObject();
            cJSON_AddStringToObject(s, "name", "sharding_indexed");
            cJSON *cfg = cJSON_AddObjectToObject(s, "configuration");
            cJSON_AddItemToObject(cfg, "chunk_shape", shape_json(z->ndim, z->chunks));
            cJSON_AddItemToObject(cfg, "codecs", chain_json(&z->chain, z->ndim, z->es));
            cJSON_AddItemToObject(cfg, "index_codecs", chain_json(&z->index_chain, 1, 8));
            cJSON_AddStringToObject(cfg, "index_location", z->index_at_start ? "start" : "end");
            cJSON_AddItemToArray(list, s);
            cJSON_AddItemToObject(r, "codecs", list);
        } else
            cJSON_AddItemToObject(r, "codecs", chain_json(&z->chain, z->ndim, z->es));
        cJSON_AddItemToObject(r, "attributes", cJSON_CreateObject());
        if (z->ndim && z->dim_names[0][0]) {
            cJSON *dn = cJSON_AddArrayToObject(r, "dimension_names");
            for (int d = 0; d < z->ndim; d++)
                cJSON_AddItemToArray(dn, cJSON_CreateString(z->dim_names[d]));
        }
    }
    *text = cJSON_Print(r);
    cJSON_Delete(r);
    VOXA_FAIL_IF(!*text, VOXA_ENOMEM, "zarr: out of memory formatting metadata");
    return VOXA_OK;
}

voxa_status voxa__zarr_slurp(const char *path, char **text, size_t *len, int missing_ok) {
    *text = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        if (errno == ENOENT && missing_ok) return VOXA_OK;
        return voxa__error(VOXA_EIO, "cannot open '%s': %s", path, strerror(errno));
    }
    voxa_status st = VOXA_OK;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    VOXA_GOTO_IF(!buf, VOXA_ENOMEM, "out of memory reading '%s'", path);
    for (;;) {
        if (n == cap) {
            VOXA_GOTO_IF(cap >= ZMAX_META, VOXA_EFORMAT, "'%s' is larger than %d bytes", path,
                         ZMAX_META);
            char *nb = realloc(buf, cap * 2 + 1);
            VOXA_GOTO_IF(!nb, VOXA_ENOMEM, "out of memory reading '%s'", path);
            buf = nb;
            cap *= 2;
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (r == 0) break;
    }
    VOXA_GOTO_IF(ferror(f), VOXA_EIO, "cannot read '%s'", path);
    buf[n] = 0;
    *text = buf;
    *len = n;
    buf = NULL;
done:
    free(buf);
    fclose(f);
    return st;
}
