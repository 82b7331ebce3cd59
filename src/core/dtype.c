/* Dtype table: one row per dtype ("replace a switch by a table"). */
#include "internal.h"

#include <string.h>

static const struct {
    size_t size;
    const char *name;
    const char *alias;
    int is_float;
} table[VOXA_NDTYPES] = {
    [VOXA_BOOL] = {1, "bool", "b1", 0},
    [VOXA_U8] = {1, "uint8", "u8", 0},
    [VOXA_I8] = {1, "int8", "i8", 0},
    [VOXA_U16] = {2, "uint16", "u16", 0},
    [VOXA_I16] = {2, "int16", "i16", 0},
    [VOXA_U32] = {4, "uint32", "u32", 0},
    [VOXA_I32] = {4, "int32", "i32", 0},
    [VOXA_U64] = {8, "uint64", "u64", 0},
    [VOXA_I64] = {8, "int64", "i64", 0},
    [VOXA_F32] = {4, "float32", "f32", 1},
    [VOXA_F64] = {8, "float64", "f64", 1},
};

static int valid(voxa_dtype t) { return (unsigned)t < VOXA_NDTYPES; }

size_t voxa_dtype_size(voxa_dtype t) { return valid(t) ? table[t].size : 0; }

const char *voxa_dtype_name(voxa_dtype t) {
    return valid(t) ? table[t].name : "invalid";
}

int voxa_dtype_is_float(voxa_dtype t) { return valid(t) && table[t].is_float; }

voxa_status voxa_dtype_from_name(const char *name, voxa_dtype *out) {
    VOXA_FAIL_IF(!name || !out, VOXA_EINVAL, "dtype name: NULL argument");
    for (int t = 0; t < VOXA_NDTYPES; t++) {
        if (!strcmp(name, table[t].name) || !strcmp(name, table[t].alias)) {
            *out = (voxa_dtype)t;
            return VOXA_OK;
        }
    }
    return voxa__error(VOXA_EINVAL,
                       "unknown dtype '%s' (expected bool, uint8, int8, uint16, "
                       "int16, uint32, int32, uint64, int64, float32 or float64)",
                       name);
}
