/* The recipe parser: a strict recursive-descent reader of a TOML subset.
 *
 * Debian has no C TOML library, and recipes need little: tables, arrays of
 * tables, strings, numbers, booleans, arrays. One pass over the text builds a
 * tree (vt_node); every node remembers its line and column so that the
 * recipe layer can name where a wrong key or value is. What TOML 1.0 allows
 * but recipes do not need is refused by name rather than misread. Nesting of
 * arrays is limited (32) so a hostile input cannot exhaust the stack; the
 * parser is fuzzed (fuzz/fuzz_recipe.c). Cost: linear in the text, plus a
 * linear scan per key for duplicates (recipes have few keys per table). */
#include "toml.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 32

typedef struct parser {
    const char *s;
    size_t len, pos;
    int line, col;
    char *err;
    size_t nerr;
    int failed;
    int nomem; /* the failure is "out of memory" */
} parser;

static int fail(parser *p, int line, int col, const char *fmt, ...) {
    if (p->failed) return -1;
    p->failed = 1;
    p->nomem = !strcmp(fmt, "out of memory");
    int k = snprintf(p->err, p->nerr, "%d:%d: ", line, col);
    va_list ap;
    va_start(ap, fmt);
    if (k >= 0 && (size_t)k < p->nerr) vsnprintf(p->err + k, p->nerr - (size_t)k, fmt, ap);
    va_end(ap);
    return -1;
}

static int peek(const parser *p) { return p->pos < p->len ? (unsigned char)p->s[p->pos] : -1; }
static int peek2(const parser *p) {
    return p->pos + 1 < p->len ? (unsigned char)p->s[p->pos + 1] : -1;
}

static void advance(parser *p) {
    if (p->pos >= p->len) return;
    if (p->s[p->pos] == '\n') {
        p->line++;
        p->col = 1;
    } else {
        p->col++;
    }
    p->pos++;
}

const char *vt_kind_name(vt_kind k) {
    switch (k) {
    case VT_STRING: return "a string";
    case VT_INT: return "an integer";
    case VT_FLOAT: return "a float";
    case VT_BOOL: return "a boolean";
    case VT_ARRAY: return "an array";
    case VT_TABLE: return "a table";
    }
    return "?";
}

void vt_free(vt_node *n) {
    if (!n) return;
    for (int i = 0; i < n->n; i++) vt_free(n->items[i]);
    free(n->items);
    free(n->key);
    free(n->s);
    free(n);
}

static vt_node *node_new(parser *p, vt_kind k, int line, int col) {
    vt_node *n = calloc(1, sizeof *n);
    if (!n) {
        fail(p, line, col, "out of memory");
        return NULL;
    }
    n->kind = k;
    n->line = line;
    n->col = col;
    return n;
}

static int push(parser *p, vt_node *parent, vt_node *child) {
    if (parent->n == parent->cap) {
        int cap = parent->cap ? 2 * parent->cap : 8;
        vt_node **items = realloc(parent->items, (size_t)cap * sizeof *items);
        if (!items) { /* the message reads child's position: free it after */
            int r = fail(p, child->line, child->col, "out of memory");
            vt_free(child);
            return r;
        }
        parent->items = items;
        parent->cap = cap;
    }
    parent->items[parent->n++] = child;
    return 0;
}

const vt_node *vt_get(const vt_node *t, const char *key) {
    if (!t || t->kind != VT_TABLE) return NULL;
    for (int i = 0; i < t->n; i++)
        if (!strcmp(t->items[i]->key, key)) return t->items[i];
    return NULL;
}

/* Spaces and tabs; with `newlines`, also newlines and comments. */
static void skip_ws(parser *p, int newlines) {
    for (;;) {
        int c = peek(p);
        if (c == ' ' || c == '\t') advance(p);
        else if (c == '\r' && peek2(p) == '\n' && newlines) advance(p);
        else if (c == '\n' && newlines) advance(p);
        else if (c == '#' && newlines) {
            while (peek(p) >= 0 && peek(p) != '\n') advance(p);
        } else break;
    }
}

/* After a value or header: optional spaces, an optional comment, then the
 * end of the line or of the text. */
static int end_of_line(parser *p) {
    skip_ws(p, 0);
    if (peek(p) == '#') {
        while (peek(p) >= 0 && peek(p) != '\n') {
            int c = peek(p);
            if ((c < 0x20 && c != '\t') || c == 0x7f)
                return fail(p, p->line, p->col, "control character in a comment");
            advance(p);
        }
    }
    if (peek(p) == '\r' && peek2(p) == '\n') advance(p);
    if (peek(p) < 0) return 0;
    if (peek(p) != '\n')
        return fail(p, p->line, p->col, "expected the end of the line, got '%c'", peek(p));
    advance(p);
    return 0;
}

/* UTF-8 encoding of code point u into out (at least 4 bytes); length. */
static int utf8(uint32_t u, char *out) {
    if (u < 0x80) { out[0] = (char)u; return 1; }
    if (u < 0x800) { out[0] = (char)(0xc0 | u >> 6); out[1] = (char)(0x80 | (u & 63)); return 2; }
    if (u < 0x10000) {
        out[0] = (char)(0xe0 | u >> 12); out[1] = (char)(0x80 | ((u >> 6) & 63));
        out[2] = (char)(0x80 | (u & 63));
        return 3;
    }
    out[0] = (char)(0xf0 | u >> 18); out[1] = (char)(0x80 | ((u >> 12) & 63));
    out[2] = (char)(0x80 | ((u >> 6) & 63)); out[3] = (char)(0x80 | (u & 63));
    return 4;
}

/* A basic ("...") or literal ('...') string on one line, into *out. */
static int string(parser *p, char **out) {
    int line = p->line, col = p->col;
    int quote = peek(p);
    if (peek2(p) == quote && p->pos + 2 < p->len && p->s[p->pos + 2] == quote)
        return fail(p, line, col, "multi-line strings are not supported");
    advance(p);
    size_t cap = 32, n = 0;
    char *buf = malloc(cap);
    if (!buf) return fail(p, line, col, "out of memory");
    for (;;) {
        int c = peek(p);
        if (c < 0 || c == '\n') {
            free(buf);
            return fail(p, line, col, "unterminated string");
        }
        if (n + 5 > cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                return fail(p, line, col, "out of memory");
            }
            buf = nb;
        }
        if (c == quote) {
            advance(p);
            break;
        }
        if ((c < 0x20 && c != '\t') || c == 0x7f) {
            free(buf);
            return fail(p, p->line, p->col, "control character in a string");
        }
        if (c == '\\' && quote == '"') {
            int el = p->line, ec = p->col;
            advance(p);
            int e = peek(p);
            const char *simple = strchr("btnfr\"\\", e > 0 ? e : '?');
            if (e > 0 && simple) {
                static const char map[] = "\b\t\n\f\r\"\\";
                buf[n++] = map[simple - "btnfr\"\\"];
                advance(p);
                continue;
            }
            if (e == 'u' || e == 'U') {
                int digits = e == 'u' ? 4 : 8;
                uint32_t u = 0;
                advance(p);
                for (int k = 0; k < digits; k++) {
                    int h = peek(p);
                    int v = h >= '0' && h <= '9' ? h - '0'
                            : h >= 'a' && h <= 'f' ? h - 'a' + 10
                            : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                                   : -1;
                    if (v < 0) {
                        free(buf);
                        return fail(p, el, ec, "\\%c needs %d hex digits", e, digits);
                    }
                    u = u * 16 + (uint32_t)v;
                    advance(p);
                }
                if (u > 0x10ffff || (u >= 0xd800 && u <= 0xdfff) || u == 0) {
                    free(buf);
                    return fail(p, el, ec, "\\%c: not a valid character", e);
                }
                n += (size_t)utf8(u, buf + n);
                continue;
            }
            free(buf);
            return fail(p, el, ec, "unknown escape '\\%c'", e > 0x20 && e < 0x7f ? e : '?');
        }
        buf[n++] = (char)c;
        advance(p);
    }
    buf[n] = '\0';
    *out = buf;
    return 0;
}

/* A key: bare (A-Za-z0-9_-) or quoted; dotted keys are refused. */
static int key(parser *p, char **out) {
    int line = p->line, col = p->col;
    int c = peek(p);
    if (c == '"' || c == '\'') {
        if (string(p, out) < 0) return -1;
    } else {
        size_t start = p->pos;
        while ((c = peek(p)) >= 0 && ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                                     (c >= '0' && c <= '9') || c == '_' || c == '-'))
            advance(p);
        if (p->pos == start) {
            if (c < 0) return fail(p, line, col, "expected a key");
            return fail(p, line, col, "expected a key, got '%c'", c);
        }
        *out = strndup(p->s + start, p->pos - start);
        if (!*out) return fail(p, line, col, "out of memory");
    }
    skip_ws(p, 0);
    if (peek(p) == '.') {
        free(*out);
        *out = NULL;
        return fail(p, p->line, p->col, "dotted keys are not supported (use a [table])");
    }
    return 0;
}

static int value(parser *p, vt_node **out, int depth);

static int array(parser *p, vt_node *arr, int depth) {
    if (depth >= MAX_DEPTH) return fail(p, p->line, p->col, "arrays nested too deeply");
    advance(p); /* '[' */
    for (;;) {
        skip_ws(p, 1);
        if (peek(p) < 0) return fail(p, arr->line, arr->col, "unterminated array");
        if (peek(p) == ']') {
            advance(p);
            return 0;
        }
        vt_node *v;
        if (value(p, &v, depth + 1) < 0) return -1;
        if (push(p, arr, v) < 0) return -1;
        skip_ws(p, 1);
        if (peek(p) == ',') {
            advance(p);
            continue;
        }
        if (peek(p) == ']') {
            advance(p);
            return 0;
        }
        if (peek(p) < 0) return fail(p, arr->line, arr->col, "unterminated array");
        return fail(p, p->line, p->col, "expected ',' or ']' in an array, got '%c'", peek(p));
    }
}

/* Integers and floats, by TOML's decimal rules (leading zeros refused,
 * '_' only between digits). */
static int number(parser *p, vt_node *v) {
    size_t start = p->pos;
    char buf[128];
    size_t n = 0;
    int is_float = 0, prev_digit = 0, seen_dot = 0, seen_exp = 0;
    int c = peek(p);
    if (c == '+' || c == '-') {
        buf[n++] = (char)c;
        advance(p);
    }
    size_t int_start = n;
    while ((c = peek(p)) >= 0) {
        if (c >= '0' && c <= '9') {
            prev_digit = 1;
        } else if (c == '_') {
            advance(p);
            if (!prev_digit || !(peek(p) >= '0' && peek(p) <= '9'))
                return fail(p, v->line, v->col, "'_' must be between digits");
            continue;
        } else if (c == '.' || c == 'e' || c == 'E') {
            if (!prev_digit || seen_exp || (c == '.' && seen_dot))
                return fail(p, v->line, v->col, "malformed number");
            seen_dot |= c == '.';
            seen_exp |= c != '.';
            is_float = 1;
            prev_digit = 0;
            if (n + 2 >= sizeof buf) return fail(p, v->line, v->col, "number too long");
            buf[n++] = (char)c;
            buf[n] = '\0';
            advance(p);
            if ((c == 'e' || c == 'E') && (peek(p) == '+' || peek(p) == '-')) {
                buf[n++] = (char)peek(p);
                advance(p);
            }
            continue;
        } else if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == ':' || c == '-' ||
                   c == '+') {
            return fail(p, v->line, v->col, "malformed number (hex, octal, binary, inf, nan "
                                            "and dates are not supported)");
        } else {
            break;
        }
        if (n + 2 >= sizeof buf) return fail(p, v->line, v->col, "number too long");
        buf[n++] = (char)c;
        buf[n] = '\0';
        advance(p);
    }
    buf[n] = '\0';
    if (!prev_digit || p->pos == start) return fail(p, v->line, v->col, "malformed number");
    /* leading zeros: "0" alone is fine, "01" is not */
    const char *d = buf + int_start;
    if (d[0] == '0' && d[1] >= '0' && d[1] <= '9')
        return fail(p, v->line, v->col, "leading zeros are not allowed");
    char *end;
    errno = 0;
    if (is_float) {
        v->kind = VT_FLOAT;
        v->f = strtod(buf, &end);
        if (*end || errno == ERANGE || !isfinite(v->f))
            return fail(p, v->line, v->col, "'%s': not a finite float", buf);
    } else {
        v->kind = VT_INT;
        long long x = strtoll(buf, &end, 10);
        if (*end || errno == ERANGE)
            return fail(p, v->line, v->col, "'%s': integer out of range", buf);
        v->i = x;
    }
    return 0;
}

static int value(parser *p, vt_node **out, int depth) {
    *out = NULL;
    int line = p->line, col = p->col;
    int c = peek(p);
    vt_node *v = node_new(p, VT_STRING, line, col);
    if (!v) return -1;
    int rc;
    if (c == '"' || c == '\'') {
        rc = string(p, &v->s);
    } else if (c == '[') {
        v->kind = VT_ARRAY;
        rc = array(p, v, depth);
    } else if (c == '{') {
        rc = fail(p, line, col, "inline tables are not supported (use a [table])");
    } else if (p->len - p->pos >= 4 && !strncmp(p->s + p->pos, "true", 4)) {
        v->kind = VT_BOOL;
        v->i = 1;
        for (int k = 0; k < 4; k++) advance(p);
        rc = 0;
    } else if (p->len - p->pos >= 5 && !strncmp(p->s + p->pos, "false", 5)) {
        v->kind = VT_BOOL;
        for (int k = 0; k < 5; k++) advance(p);
        rc = 0;
    } else if (c == '+' || c == '-' || (c >= '0' && c <= '9')) {
        rc = number(p, v);
    } else if (c < 0 || c == '\n' || c == '#') {
        rc = fail(p, line, col, "expected a value");
    } else {
        rc = fail(p, line, col, "expected a value (a \"string\", number, true, false or "
                                "[array]), got '%c'", c);
    }
    if (rc == 0 && (c == 't' || c == 'f')) {
        int n = peek(p);
        if ((n >= 'A' && n <= 'Z') || (n >= 'a' && n <= 'z') || (n >= '0' && n <= '9') ||
            n == '_')
            rc = fail(p, line, col, "expected a value: strings need quotes");
    }
    if (rc < 0) {
        vt_free(v);
        return -1;
    }
    *out = v;
    return 0;
}

/* [name] or [[name]]: the table that later keys go into. */
static int header(parser *p, vt_node *root, vt_node **current) {
    int line = p->line, col = p->col;
    int twice = peek2(p) == '[';
    advance(p);
    if (twice) advance(p);
    skip_ws(p, 0);
    char *name = NULL;
    if (key(p, &name) < 0) return -1;
    skip_ws(p, 0);
    if (peek(p) != ']' || (twice && peek2(p) != ']')) {
        free(name);
        return fail(p, p->line, p->col, "expected '%s' to close the header", twice ? "]]" : "]");
    }
    advance(p);
    if (twice) advance(p);
    vt_node *existing = (vt_node *)vt_get(root, name);
    vt_node *table = node_new(p, VT_TABLE, line, col);
    if (!table) {
        free(name);
        return -1;
    }
    table->defined = 1;
    if (twice) {
        if (existing && !(existing->kind == VT_ARRAY && existing->of_tables)) {
            vt_free(table);
            int r = fail(p, line, col, "[[%s]]: '%s' is already defined at line %d", name, name,
                         existing->line);
            free(name);
            return r;
        }
        if (!existing) {
            existing = node_new(p, VT_ARRAY, line, col);
            if (!existing) {
                vt_free(table);
                free(name);
                return -1;
            }
            existing->of_tables = 1;
            existing->key = name;
            existing->key_line = line;
            existing->key_col = col;
            name = NULL;
            if (push(p, root, existing) < 0) {
                vt_free(table);
                return -1;
            }
        }
        free(name);
        if (push(p, existing, table) < 0) return -1;
    } else {
        if (existing) {
            vt_free(table);
            int r = fail(p, line, col, "[%s]: '%s' is already defined at line %d", name, name,
                         existing->line);
            free(name);
            return r;
        }
        table->key = name;
        table->key_line = line;
        table->key_col = col;
        if (push(p, root, table) < 0) return -1;
    }
    *current = table;
    return end_of_line(p);
}

int vt_parse(const char *text, size_t len, vt_node **root_out, char *err, size_t nerr) {
    parser p = {text, len, 0, 1, 1, err, nerr, 0, 0};
    if (nerr) err[0] = '\0';
    *root_out = NULL;
    vt_node *root = node_new(&p, VT_TABLE, 1, 1);
    if (!root) return -2;
    root->defined = 1;
    vt_node *current = root;
    if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3)) p.pos = 3; /* UTF-8 BOM */
    for (;;) {
        skip_ws(&p, 1);
        int c = peek(&p);
        if (c < 0) break;
        if (c == '[') {
            if (header(&p, root, &current) < 0) break;
            continue;
        }
        int kl = p.line, kc = p.col;
        char *k = NULL;
        if (key(&p, &k) < 0) break;
        skip_ws(&p, 0);
        if (peek(&p) != '=') {
            fail(&p, p.line, p.col, "expected '=' after the key '%s'", k);
            free(k);
            break;
        }
        advance(&p);
        skip_ws(&p, 0);
        const vt_node *dup = vt_get(current, k);
        if (dup) {
            fail(&p, kl, kc, "duplicate key '%s' (first at line %d)", k, dup->key_line);
            free(k);
            break;
        }
        vt_node *v;
        if (value(&p, &v, 0) < 0) {
            free(k);
            break;
        }
        v->key = k;
        v->key_line = kl;
        v->key_col = kc;
        if (push(&p, current, v) < 0) break;
        if (end_of_line(&p) < 0) break;
    }
    if (p.failed) {
        vt_free(root);
        return p.nomem ? -2 : -1;
    }
    *root_out = root;
    return 0;
}
