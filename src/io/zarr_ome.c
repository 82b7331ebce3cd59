/* OME-Zarr (OME-NGFF multiscales): write images with axes and voxel scale,
 * read the scale back, and whole-array read/write for voxa_read/voxa_write.
 *
 * An OME-Zarr image is a group whose metadata lists `multiscales`: the axes
 * (name, type "space", unit) and the datasets "0", "1", ..., each with a
 * `scale` transform. OME-NGFF 0.4 lives in a v2 group's .zattrs; 0.5 under
 * attributes.ome in a v3 group's zarr.json. Levels after "0" halve every
 * axis (ceil): the mean of each 2x..x2 block (the voxels present at an odd
 * edge), rounded half to even for integers, for images; the block's first
 * voxel for labels (means would invent labels). The group metadata is
 * written last, so a folder without it is an incomplete output. */
#include "zarr_internal.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *axis_names3[3] = {"z", "y", "x"};

/* The `multiscales` list of the group at `path` (NULL if none); *root owns it. */
static voxa_status find_multiscales(const char *path, int format, cJSON **root,
                                    const cJSON **ms) {
    char meta[4096], *text = NULL;
    size_t len;
    *root = NULL;
    *ms = NULL;
    snprintf(meta, sizeof meta, "%s/%s", path, format == 3 ? "zarr.json" : ".zattrs");
    VOXA_CHECK(voxa__zarr_slurp(meta, &text, &len, 1));
    if (!text) return VOXA_OK;
    *root = cJSON_ParseWithLength(text, len);
    free(text);
    VOXA_FAIL_IF(!*root, VOXA_EFORMAT, "'%s' is not valid JSON", meta);
    const cJSON *attrs = format == 3 ? cJSON_GetObjectItemCaseSensitive(*root, "attributes") : *root;
    const cJSON *ome = cJSON_GetObjectItemCaseSensitive(attrs, "ome");
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(ome ? ome : attrs, "multiscales");
    if (cJSON_IsArray(m) && cJSON_GetArraySize(m) > 0) *ms = cJSON_GetArrayItem(m, 0);
    return VOXA_OK;
}

voxa_status voxa__zarr_ome_first(const char *group, int format, char *sub, size_t n) {
    cJSON *root;
    const cJSON *ms;
    VOXA_CHECK(find_multiscales(group, format, &root, &ms));
    const cJSON *ds = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(ms, "datasets"), 0);
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(ds, "path");
    voxa_status st = VOXA_OK;
    if (!cJSON_IsString(p) || !*p->valuestring || strstr(p->valuestring, ".."))
        st = voxa__error(VOXA_EFORMAT, "'%s' is a Zarr group without OME multiscales datasets "
                         "(open one of its arrays)", group);
    else snprintf(sub, n, "%s", p->valuestring);
    cJSON_Delete(root);
    return st;
}

/* Multiply `out` by the scale transforms in `list`; EFORMAT on a bad one. */
static int apply_scale(const cJSON *list, int ndim, double *out) {
    const cJSON *t;
    cJSON_ArrayForEach(t, list) {
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(t, "type");
        if (!cJSON_IsString(type) || strcmp(type->valuestring, "scale")) continue;
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(t, "scale");
        if (!cJSON_IsArray(s) || cJSON_GetArraySize(s) != ndim) return 0;
        int d = 0;
        const cJSON *v;
        cJSON_ArrayForEach(v, s) {
            if (!cJSON_IsNumber(v)) return 0;
            out[d++] *= v->valuedouble;
        }
    }
    return 1;
}

voxa_status voxa_zarr_spacing(const char *path, int ndim, double *spacing, char *unit,
                              size_t unit_len) {
    VOXA_FAIL_IF(!path || !spacing || ndim < 1 || ndim > VOXA_MAXDIM, VOXA_EINVAL,
                 "zarr_spacing: bad argument");
    cJSON *root = NULL;
    const cJSON *ms = NULL;
    char meta[4096];
    snprintf(meta, sizeof meta, "%s/zarr.json", path);
    FILE *f = fopen(meta, "rb");
    int format = f ? 3 : 2;
    if (f) fclose(f);
    VOXA_CHECK(find_multiscales(path, format, &root, &ms));
    voxa_status st = VOXA_OK;
    VOXA_GOTO_IF(!ms, VOXA_EFORMAT, "'%s' has no OME-NGFF multiscales metadata", path);
    const cJSON *axes = cJSON_GetObjectItemCaseSensitive(ms, "axes");
    VOXA_GOTO_IF(cJSON_IsArray(axes) && cJSON_GetArraySize(axes) != ndim, VOXA_EFORMAT,
                 "'%s': OME axes list %d axes, the array has %d", path,
                 cJSON_GetArraySize(axes), ndim);
    if (unit && unit_len) {
        unit[0] = 0;
        const cJSON *a;
        cJSON_ArrayForEach(a, axes) {
            const cJSON *type = cJSON_GetObjectItemCaseSensitive(a, "type");
            const cJSON *u = cJSON_GetObjectItemCaseSensitive(a, "unit");
            if (cJSON_IsString(type) && !strcmp(type->valuestring, "space") && cJSON_IsString(u)) {
                snprintf(unit, unit_len, "%s", u->valuestring);
                break;
            }
        }
    }
    for (int d = 0; d < ndim; d++) spacing[d] = 1;
    const cJSON *ds = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(ms, "datasets"), 0);
    VOXA_GOTO_IF(!ds, VOXA_EFORMAT, "'%s': OME multiscales without datasets", path);
    VOXA_GOTO_IF(!apply_scale(cJSON_GetObjectItemCaseSensitive(ds, "coordinateTransformations"),
                              ndim, spacing) ||
                     !apply_scale(cJSON_GetObjectItemCaseSensitive(ms, "coordinateTransformations"),
                                  ndim, spacing),
                 VOXA_EFORMAT, "'%s': OME scale transform does not have %d numbers", path, ndim);
done:
    cJSON_Delete(root);
    return st;
}

/* ---- downsampling ---------------------------------------------------------------- */

static double get(const void *p, voxa_dtype t) {
    switch (t) {
    case VOXA_BOOL: case VOXA_U8: return *(const uint8_t *)p;
    case VOXA_I8: return *(const int8_t *)p;
    case VOXA_U16: return *(const uint16_t *)p;
    case VOXA_I16: return *(const int16_t *)p;
    case VOXA_U32: return *(const uint32_t *)p;
    case VOXA_I32: return *(const int32_t *)p;
    case VOXA_U64: return (double)*(const uint64_t *)p;
    case VOXA_I64: return (double)*(const int64_t *)p;
    case VOXA_F32: return *(const float *)p;
    default: return *(const double *)p;
    }
}

static void put(void *p, voxa_dtype t, double v) {
    if (!voxa_dtype_is_float(t)) v = rint(v);
    switch (t) {
    case VOXA_BOOL: case VOXA_U8: *(uint8_t *)p = (uint8_t)v; break;
    case VOXA_I8: *(int8_t *)p = (int8_t)v; break;
    case VOXA_U16: *(uint16_t *)p = (uint16_t)v; break;
    case VOXA_I16: *(int16_t *)p = (int16_t)v; break;
    case VOXA_U32: *(uint32_t *)p = (uint32_t)v; break;
    case VOXA_I32: *(int32_t *)p = (int32_t)v; break;
    case VOXA_U64: *(uint64_t *)p = (uint64_t)v; break;
    case VOXA_I64: *(int64_t *)p = (int64_t)v; break;
    case VOXA_F32: *(float *)p = (float)v; break;
    default: *(double *)p = v; break;
    }
}

/* out (C-contiguous, ceil(in/2)) = 2x downsample of in (any strides). */
static void downsample(const voxa_array *in, voxa_array *out, int labels) {
    size_t es = voxa_dtype_size(in->dtype);
    int nd = in->ndim;
    int64_t n = voxa_array_size(out), idx[VOXA_MAXDIM] = {0};
    char *o = out->data;
    for (int64_t i = 0; i < n; i++, o += es) {
        int64_t src[VOXA_MAXDIM];
        for (int d = 0; d < nd; d++) src[d] = 2 * idx[d];
        const char *p0 = (const char *)in->data + voxa__offset(in, src);
        if (labels || in->dtype == VOXA_BOOL) memcpy(o, p0, es);
        else {
            double sum = 0;
            int cnt = 0;
            for (int k = 0; k < (1 << nd); k++) {
                int ok = 1;
                int64_t s[VOXA_MAXDIM];
                for (int d = 0; d < nd; d++) {
                    s[d] = src[d] + ((k >> d) & 1);
                    ok &= s[d] < in->shape[d];
                }
                if (!ok) continue;
                sum += get((const char *)in->data + voxa__offset(in, s), in->dtype);
                cnt++;
            }
            put(o, in->dtype, sum / cnt);
        }
        for (int d = nd - 1; d >= 0; d--) {
            if (++idx[d] < out->shape[d]) break;
            idx[d] = 0;
        }
    }
}

/* ---- writing ---------------------------------------------------------------------- */

static voxa_status write_level(const char *path, int k, const voxa_array *a,
                               const voxa_zarr_options *opts) {
    char sub[4096];
    snprintf(sub, sizeof sub, "%s/%d", path, k);
    voxa_zarr *z;
    VOXA_CHECK(voxa_zarr_create(sub, a->dtype, a->ndim, a->shape, opts, &z));
    int64_t lo[VOXA_MAXDIM] = {0};
    voxa_status st = voxa__zarr_set_dim_names(z, axis_names3 + 3 - a->ndim);
    if (!st) st = voxa_zarr_write(z, lo, a);
    voxa_zarr_close(z);
    return st;
}

static cJSON *multiscales_json(int ndim, const double *spacing, const char *unit, int levels,
                               const char *version) {
    cJSON *m = cJSON_CreateObject();
    if (version) cJSON_AddStringToObject(m, "version", version);
    cJSON_AddStringToObject(m, "name", "image");
    cJSON *axes = cJSON_AddArrayToObject(m, "axes");
    for (int d = 0; d < ndim; d++) {
        cJSON *a = cJSON_CreateObject();
        cJSON_AddStringToObject(a, "name", axis_names3[3 - ndim + d]);
        cJSON_AddStringToObject(a, "type", "space");
        cJSON_AddStringToObject(a, "unit", unit ? unit : "micrometer");
        cJSON_AddItemToArray(axes, a);
    }
    cJSON *ds = cJSON_AddArrayToObject(m, "datasets");
    for (int k = 0; k < levels; k++) {
        cJSON *d = cJSON_CreateObject();
        char p[16];
        snprintf(p, sizeof p, "%d", k);
        cJSON_AddStringToObject(d, "path", p);
        cJSON *t = cJSON_CreateObject();
        cJSON_AddStringToObject(t, "type", "scale");
        cJSON *s = cJSON_AddArrayToObject(t, "scale");
        for (int a = 0; a < ndim; a++)
            cJSON_AddItemToArray(s, cJSON_CreateNumber((spacing ? spacing[a] : 1.0) * ldexp(1, k)));
        cJSON *ct = cJSON_AddArrayToObject(d, "coordinateTransformations");
        cJSON_AddItemToArray(ct, t);
        cJSON_AddItemToArray(ds, d);
    }
    return m;
}

static voxa_status write_text(const char *path, const char *name, cJSON *j, int sync) {
    char meta[4096];
    snprintf(meta, sizeof meta, "%s/%s", path, name);
    char *text = cJSON_Print(j);
    cJSON_Delete(j);
    VOXA_FAIL_IF(!text, VOXA_ENOMEM, "zarr: out of memory formatting '%s'", meta);
    voxa_status st = voxa__zarr_write_file(meta, text, strlen(text), sync);
    free(text);
    return st;
}

voxa_status voxa_zarr_write_ome_metadata(const char *path, int format, int ndim,
                                         const double *spacing, const char *unit, int levels,
                                         int fsync) {
    VOXA_FAIL_IF(!path, VOXA_EINVAL, "zarr_write_ome: NULL path");
    VOXA_FAIL_IF(ndim != 2 && ndim != 3, VOXA_EUNSUPPORTED,
                 "zarr_write_ome: ndim %d (OME images here are 2-D or 3-D)", ndim);
    VOXA_FAIL_IF(levels < 1 || levels > 32, VOXA_EINVAL, "zarr_write_ome: levels %d", levels);
    VOXA_FAIL_IF(format != 2 && format != 3, VOXA_EINVAL, "zarr_write_ome: format %d", format);
    VOXA_FAIL_IF(unit && (!*unit || strlen(unit) > 64), VOXA_EINVAL,
                 "zarr_write_ome: unit '%.70s'", unit);
    for (int d = 0; spacing && d < ndim; d++)
        VOXA_FAIL_IF(!(spacing[d] > 0) || !isfinite(spacing[d]), VOXA_EINVAL,
                     "zarr_write_ome: spacing[%d] = %g (expected > 0)", d, spacing[d]);
    cJSON *list = cJSON_CreateArray();
    cJSON_AddItemToArray(list, multiscales_json(ndim, spacing, unit, levels,
                                                format == 2 ? "0.4" : NULL));
    if (format == 2) {
        cJSON *g = cJSON_CreateObject();
        cJSON_AddNumberToObject(g, "zarr_format", 2);
        voxa_status st = write_text(path, ".zgroup", g, fsync);
        cJSON *attrs = cJSON_CreateObject();
        cJSON_AddItemToObject(attrs, "multiscales", list);
        if (st) {
            cJSON_Delete(attrs);
            return st;
        }
        return write_text(path, ".zattrs", attrs, fsync);
    }
    cJSON *g = cJSON_CreateObject();
    cJSON_AddNumberToObject(g, "zarr_format", 3);
    cJSON_AddStringToObject(g, "node_type", "group");
    cJSON *ome = cJSON_AddObjectToObject(cJSON_AddObjectToObject(g, "attributes"), "ome");
    cJSON_AddStringToObject(ome, "version", "0.5");
    cJSON_AddItemToObject(ome, "multiscales", list);
    return write_text(path, "zarr.json", g, fsync);
}

voxa_status voxa_zarr_downsample(const voxa_array *in, voxa_array *out, int labels) {
    VOXA_FAIL_IF(!in || !out, VOXA_EINVAL, "zarr_downsample: NULL argument");
    VOXA_CHECK(voxa_array_check(in, "zarr_downsample in"));
    VOXA_CHECK(voxa_array_check(out, "zarr_downsample out"));
    VOXA_FAIL_IF(in->dtype != out->dtype || in->ndim != out->ndim || !voxa_array_is_c_contiguous(out),
                 VOXA_EINVAL, "zarr_downsample: out must be C-contiguous, in's dtype and ndim");
    for (int d = 0; d < in->ndim; d++)
        VOXA_FAIL_IF(out->shape[d] != (in->shape[d] + 1) / 2, VOXA_EINVAL,
                     "zarr_downsample: out.shape[%d] = %lld, expected %lld", d,
                     (long long)out->shape[d], (long long)((in->shape[d] + 1) / 2));
    if (voxa_array_size(out)) downsample(in, out, labels);
    return VOXA_OK;
}

voxa_status voxa_zarr_write_ome(const char *path, const voxa_array *a, const double *spacing,
                                const char *unit, int levels, int labels,
                                const voxa_zarr_options *opts) {
    VOXA_FAIL_IF(!path || !a, VOXA_EINVAL, "zarr_write_ome: NULL argument");
    VOXA_CHECK(voxa_array_check(a, "zarr_write_ome"));
    int format = opts && opts->format ? opts->format : 3;
    /* the metadata's checks first: nothing is written for a bad request */
    VOXA_FAIL_IF(a->ndim != 2 && a->ndim != 3, VOXA_EUNSUPPORTED,
                 "zarr_write_ome: ndim %d (OME images here are 2-D or 3-D)", a->ndim);
    VOXA_FAIL_IF(levels < 1 || levels > 32, VOXA_EINVAL, "zarr_write_ome: levels %d", levels);
    VOXA_FAIL_IF(format != 2 && format != 3, VOXA_EINVAL, "zarr_write_ome: format %d", format);
    VOXA_FAIL_IF(unit && (!*unit || strlen(unit) > 64), VOXA_EINVAL,
                 "zarr_write_ome: unit '%.70s'", unit);
    for (int d = 0; spacing && d < a->ndim; d++)
        VOXA_FAIL_IF(!(spacing[d] > 0) || !isfinite(spacing[d]), VOXA_EINVAL,
                     "zarr_write_ome: spacing[%d] = %g (expected > 0)", d, spacing[d]);
    VOXA_CHECK(voxa__zarr_clear(path));
    voxa_status st = write_level(path, 0, a, opts);
    voxa_array prev = *a, cur;
    prev.owner = NULL;
    memset(&cur, 0, sizeof cur);
    for (int k = 1; k < levels && !st; k++) {
        int64_t sh[VOXA_MAXDIM];
        for (int d = 0; d < a->ndim; d++) sh[d] = (prev.shape[d] + 1) / 2;
        voxa_array next;
        if ((st = voxa_array_new(&next, a->dtype, a->ndim, sh))) break;
        downsample(&prev, &next, labels);
        voxa_array_free(&cur);
        cur = next;
        prev = cur;
        st = write_level(path, k, &cur, opts);
    }
    voxa_array_free(&cur);
    if (st) return st;
    return voxa_zarr_write_ome_metadata(path, format, a->ndim, spacing, unit, levels,
                                        opts ? opts->fsync : 0);
}

/* ---- whole arrays (voxa_read / voxa_write) ------------------------------------------------ */

voxa_status voxa_zarr_read_all(const char *path, voxa_array *out) {
    VOXA_FAIL_IF(!path || !out, VOXA_EINVAL, "zarr_read_all: NULL argument");
    voxa_zarr *z;
    VOXA_CHECK(voxa_zarr_open(path, 0, &z));
    voxa_array a;
    memset(&a, 0, sizeof a);
    int64_t lo[VOXA_MAXDIM] = {0};
    voxa_status st = voxa_array_new(&a, z->dtype, z->ndim, z->shape);
    if (!st) st = voxa_zarr_read(z, lo, &a);
    voxa_zarr_close(z);
    if (st) {
        if (a.owner) voxa_array_free(&a);
        return st;
    }
    *out = a;
    return VOXA_OK;
}

voxa_status voxa_zarr_write_all(const char *path, const voxa_array *a) {
    VOXA_FAIL_IF(!path || !a, VOXA_EINVAL, "zarr_write_all: NULL argument");
    VOXA_CHECK(voxa_array_check(a, "write"));
    if (a->ndim == 2 || a->ndim == 3) return voxa_zarr_write_ome(path, a, NULL, NULL, 1, 0, NULL);
    voxa_zarr *z;
    VOXA_CHECK(voxa_zarr_create(path, a->dtype, a->ndim, a->shape, NULL, &z));
    int64_t lo[VOXA_MAXDIM] = {0};
    voxa_status st = voxa_zarr_write(z, lo, a);
    voxa_zarr_close(z);
    return st;
}
