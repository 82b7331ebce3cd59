/* voxa label, the run path's union-find table: one entry per run, its
 * parent during the union, its label after the numbering. The entries are
 * uint32 when the run count allows (voxa__label_table_wide): half the
 * memory, and half the page faults of a fresh table, on noisy masks (~1
 * run per 4 voxels); int64 past that. One body serves both widths:
 * UF_WITH runs a statement with `par` typed at the table's width, and
 * uf_find / uf_link take their width from the pointer type. */
#ifndef VOXA_LABEL_UF_H
#define VOXA_LABEL_UF_H

#include <stdint.h>

/* find: the root, with path halving (parents only decrease). link: unite
 * run k's tree with the root ri (smaller index wins); returns the root of
 * the union. The early exit on par[k] == ri is the common case inside big
 * components. */
#define UF_FUNCS(T, W)                                                         \
    static inline int64_t uf_find##W(T *par, int64_t x) {                      \
        while ((int64_t)par[x] != x) {                                         \
            par[x] = par[par[x]];                                              \
            x = par[x];                                                        \
        }                                                                      \
        return x;                                                              \
    }                                                                          \
    static inline int64_t uf_link##W(T *par, int64_t ri, int64_t k) {          \
        int64_t rk = par[k];                                                   \
        if (rk == ri) return ri;                                               \
        rk = uf_find##W(par, rk);                                              \
        if (rk < ri) {                                                         \
            par[ri] = (T)rk;                                                   \
            return rk;                                                         \
        }                                                                      \
        if (ri < rk) par[rk] = (T)ri;                                          \
        return ri;                                                             \
    }
UF_FUNCS(int64_t, 64)
UF_FUNCS(uint32_t, 32)
#undef UF_FUNCS

#define uf_find(par, x) _Generic((par), int64_t *: uf_find64, uint32_t *: uf_find32)(par, x)
#define uf_link(par, ri, k)                                                    \
    _Generic((par), int64_t *: uf_link64, uint32_t *: uf_link32)(par, ri, k)

/* Run the statement(s) with `par` the table at its width. */
#define UF_WITH(wide, table, par, ...)                                         \
    do {                                                                       \
        if (wide) {                                                            \
            int64_t *par = (table);                                            \
            __VA_ARGS__                                                        \
        } else {                                                               \
            uint32_t *par = (table);                                           \
            __VA_ARGS__                                                        \
        }                                                                      \
    } while (0)

/* Every run its own root. */
static inline void uf_init(void *table, int wide, int64_t r0, int64_t r1) {
    UF_WITH(wide, table, par, for (int64_t r = r0; r < r1; r++) par[r] = r;);
}

#endif
