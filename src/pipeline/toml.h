/* A strict parser for the TOML subset recipes use (not installed).
 *
 * Supported: comments, `key = value` with bare keys (A-Za-z0-9_-) or quoted
 * keys, `[table]` and `[[array of tables]]` headers of one key, basic
 * strings ("..." with TOML's escapes) and literal strings ('...'), decimal
 * integers (sign, '_' between digits), floats (fraction and/or exponent),
 * true/false, arrays (across lines, trailing comma, comments inside).
 * Anything else TOML has (dotted keys, inline tables, multi-line strings,
 * dates, hex/octal/binary, inf/nan) is refused with its name, as are
 * duplicate keys and tables: an error is "LINE:COL: what". */
#ifndef VOXA_PIPELINE_TOML_H
#define VOXA_PIPELINE_TOML_H

#include <stddef.h>
#include <stdint.h>

typedef enum vt_kind { VT_STRING, VT_INT, VT_FLOAT, VT_BOOL, VT_ARRAY, VT_TABLE } vt_kind;

typedef struct vt_node {
    vt_kind kind;
    int line, col;          /* where the value (or the table header) starts */
    char *key;              /* in a table: the key; NULL in an array */
    int key_line, key_col;  /* where the key starts */
    char *s;                /* VT_STRING (NUL-terminated; may hold no NUL) */
    int64_t i;              /* VT_INT, VT_BOOL */
    double f;               /* VT_FLOAT */
    struct vt_node **items; /* VT_ARRAY: elements; VT_TABLE: key/value nodes */
    int n, cap;
    int of_tables;          /* VT_ARRAY made by [[name]] headers */
    int defined;            /* VT_TABLE: its [header] was seen */
} vt_node;

/* Parse `len` bytes. On success *root is a VT_TABLE (free with vt_free) and
 * 0 is returned; on error -1 with "LINE:COL: message" in err (-2 when
 * the message is "out of memory"). */
int vt_parse(const char *text, size_t len, vt_node **root, char *err, size_t nerr);
void vt_free(vt_node *n);
/* The value of `key` in table t, or NULL. */
const vt_node *vt_get(const vt_node *t, const char *key);
/* "a string", "an integer", ...: for messages. */
const char *vt_kind_name(vt_kind k);

#endif
