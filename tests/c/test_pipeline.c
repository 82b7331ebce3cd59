/* Tests of the pipeline layer: the TOML subset parser (values, positions,
 * every refusal with its line and column), recipe checks (messages naming
 * the line and key), and a small run: outputs equal to the ops run directly,
 * a second run skipping every step, run.json and a self-contained report. */
#include "vtest.h"
#include "../../src/pipeline/toml.h"

#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

static vt_node *parse_ok(const char *text) {
    vt_node *root = NULL;
    char err[256];
    int rc = vt_parse(text, strlen(text), &root, err, sizeof err);
    CHECK(rc == 0);
    if (rc) fprintf(stderr, "  parse error: %s\n", err);
    return root;
}

/* Parsing fails with "LINE:COL: ..." containing `needle`. */
static void parse_bad(const char *text, int line, int col, const char *needle) {
    vt_node *root = NULL;
    char err[256], want[32];
    CHECK(vt_parse(text, strlen(text), &root, err, sizeof err) == -1);
    CHECK(root == NULL);
    snprintf(want, sizeof want, "%d:%d: ", line, col);
    int ok = !strncmp(err, want, strlen(want)) && strstr(err, needle);
    CHECK(ok);
    if (!ok) fprintf(stderr, "  got '%s', want '%s...%s'\n", err, want, needle);
}

static void test_values(void) {
    vt_node *r = parse_ok("# comment\n"
                          "a = \"x\\ty\\u00e9\\\"\"  # trailing\n"
                          "b = 'C:\\raw'\n"
                          "\"q k\" = -1_000\n"
                          "c = [1, 2.5e-1, [true, false],\n  'z', # inside\n]\n"
                          "[t]\n"
                          "f = +0.5\n"
                          "[[s]]\nx = 1\n[[s]]\nx = 2\n");
    if (!r) return;
    const vt_node *a = vt_get(r, "a"), *b = vt_get(r, "b"), *q = vt_get(r, "q k"),
                  *c = vt_get(r, "c"), *t = vt_get(r, "t"), *s = vt_get(r, "s");
    CHECK(a && a->kind == VT_STRING && !strcmp(a->s, "x\ty\xc3\xa9\""));
    CHECK(a && a->line == 2 && a->col == 5 && a->key_line == 2 && a->key_col == 1);
    CHECK(b && !strcmp(b->s, "C:\\raw"));
    CHECK(q && q->kind == VT_INT && q->i == -1000);
    CHECK(c && c->kind == VT_ARRAY && c->n == 4);
    if (c && c->n == 4) {
        CHECK(c->items[0]->kind == VT_INT && c->items[0]->i == 1);
        CHECK(c->items[1]->kind == VT_FLOAT && c->items[1]->f == 0.25);
        CHECK(c->items[2]->kind == VT_ARRAY && c->items[2]->n == 2 && c->items[2]->items[0]->i == 1);
        CHECK(c->items[3]->kind == VT_STRING && c->items[3]->line == 6);
    }
    CHECK(t && t->kind == VT_TABLE && vt_get(t, "f") && vt_get(t, "f")->f == 0.5);
    CHECK(s && s->kind == VT_ARRAY && s->of_tables && s->n == 2 &&
          vt_get(s->items[1], "x")->i == 2 && s->items[1]->line == 12);
    CHECK(!vt_get(r, "x")); /* keys of [[s]] stay in their table */
    vt_free(r);
    vt_free(parse_ok(""));
    vt_free(parse_ok("\xef\xbb\xbf# bom\r\nk = 0\r\n"));
}

static void test_refusals(void) {
    parse_bad("a.b = 1\n", 1, 2, "dotted keys");
    parse_bad("a = {x = 1}\n", 1, 5, "inline tables");
    parse_bad("a = \"\"\"x\"\"\"\n", 1, 5, "multi-line");
    parse_bad("a = 01\n", 1, 5, "leading zeros");
    parse_bad("a = 0x1f\n", 1, 5, "hex");
    parse_bad("a = inf\n", 1, 5, "expected a value");
    parse_bad("a = 1979-05-27\n", 1, 5, "malformed number");
    parse_bad("a = 1.\n", 1, 5, "malformed number");
    parse_bad("a = 1e\n", 1, 5, "malformed number");
    parse_bad("a = 1__0\n", 1, 5, "'_' must be between digits");
    parse_bad("a = 99999999999999999999\n", 1, 5, "out of range");
    parse_bad("a = 1e999\n", 1, 5, "not a finite float");
    parse_bad("a = 1\na = 2\n", 2, 1, "duplicate key 'a' (first at line 1)");
    parse_bad("[t]\n[t]\n", 2, 1, "already defined at line 1");
    parse_bad("[t]\n[[t]]\n", 2, 1, "already defined");
    parse_bad("a = \"open\n", 1, 5, "unterminated string");
    parse_bad("a = \"\\q\"\n", 1, 6, "unknown escape");
    parse_bad("a = \"\\uD800\"\n", 1, 6, "not a valid character");
    parse_bad("a 1\n", 1, 3, "expected '='");
    parse_bad("a =\n", 1, 4, "expected a value");
    parse_bad("a = [1 2]\n", 1, 8, "expected ',' or ']'");
    parse_bad("a = [1,\n", 1, 5, "unterminated array");
    parse_bad("a = 1 b = 2\n", 1, 7, "end of the line");
    parse_bad("a = yes\n", 1, 5, "expected a value");
    parse_bad("a = trueish\n", 1, 5, "strings need quotes");
    parse_bad("[t\n", 1, 3, "to close the header");
    parse_bad("= 1\n", 1, 1, "expected a key");
    parse_bad("a = \"x\x01\"\n", 1, 7, "control character");
    char deep[200] = "a = ";
    for (int i = 0; i < 40; i++) strcat(deep, "[");
    parse_bad(deep, 1, 5 + 32, "nested too deeply");
}

static char dir[256];

static void path_in(char *buf, size_t n, const char *name) { snprintf(buf, n, "%s/%s", dir, name); }

static voxa_status load(const char *text, voxa_pipeline **p) {
    return voxa_pipeline_load_text(text, strlen(text), "r.toml", dir, p);
}

static void test_recipe_errors(void) {
    static const struct { const char *text, *msg; } bad[] = {
        {"[inputs]\nm = 'm.npy'\n[[step]]\nop = 'nope'\ninput = 'm'\n", "r.toml:4:6: step #1: unknown op 'nope'"},
        {"[inputs]\nm = 'm.npy'\n[[step]]\nop = 'open'\ninput = 'm'\nball = 1\nzz = 2\n", "r.toml:7:1: step 'open': unknown key 'zz'"},
        {"[inputs]\nm = 'm.npy'\n[[step]]\nop = 'open'\ninput = 'm'\nball = true\n", "r.toml:6:8: step 'open': key 'ball': expected a number, got a boolean"},
        {"[inputs]\nm = 'm.npy'\n[[step]]\nop = 'label'\ninput = 'm'\ndtype = 'uint3'\n", "r.toml:6:9: step 'label': key 'dtype'"},
        {"[inputs]\nm = 'm.npy'\n[[step]]\nname='a'\nop = 'label'\ninput = 'b'\n[[step]]\nname='b'\nop = 'label'\ninput = 'a'\n", "cycle"},
        {"[inputs]\nm = 'missing.npy'\n[[step]]\nop = 'label'\ninput = 'm'\n", "r.toml:2:5: [inputs]: key 'm': missing input"},
        {"[inputs]\nm = 'm.npy'\n[[step]]\nop = 'preview'\n", "missing key 'image' (or 'labels')"},
        {"[inputs]\nm = 'm.npy'\n[[step]]\nop = 'preview'\nimage = 'm'\noutput = 'x.jpg'\n", "writes a .png file"},
        {"[inputs]\nm = 'm.npy'\n[[step]]\nop = 'label'\ninput = 'm'\noutput = 'm.npy'\n", "is also the input 'm'"},
        {"[pipeline]\nreport = 1\n[inputs]\nm = 'm.npy'\n[[step]]\nop = 'label'\ninput = 'm'\n", "r.toml:2:10: [pipeline]: key 'report': expected true or false"},
        {"x = 1\n", "r.toml:1:1: unknown key 'x' outside a table"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        voxa_pipeline *p = (voxa_pipeline *)1;
        CHECK_STATUS(load(bad[i].text, &p), VOXA_EINVAL);
        CHECK(p == NULL);
        CHECK_MSG(bad[i].msg);
    }
}

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) n = 0;
    if (s) s[n] = '\0';
    fclose(f);
    return s;
}

static int states(int index, int n, const char *step, const char *op, const char *state,
                  double seconds, void *user) {
    int *count = user;
    count[!strcmp(state, "skip")]++;
    return 0;
}

static void test_run(void) {
    int64_t shape[3] = {9, 20, 17};
    voxa_array m = {0};
    CHECK_OK(voxa_array_new(&m, VOXA_BOOL, 3, shape));
    uint32_t x = 12345;
    for (int64_t i = 0; i < voxa_array_size(&m); i++) {
        x = x * 1103515245u + 12345u;
        ((uint8_t *)m.data)[i] = (x >> 16) % 13 == 0;
    }
    char path[512];
    path_in(path, sizeof path, "m.npy");
    CHECK_OK(voxa_write(path, &m));
    const char *text = "[pipeline]\nmem_limit = \"20K\"\n[inputs]\nm = \"m.npy\"\n"
                       "[[step]]\nname = \"lab\"\nop = \"label\"\ninput = \"d\"\n"
                       "[[step]]\nname = \"d\"\nop = \"dilate\"\ninput = \"m\"\nbox = [1, 3, 3]\n"
                       "[[step]]\nname = \"t\"\nop = \"measure\"\nlabels = \"lab\"\n";
    voxa_pipeline *p = NULL;
    CHECK_OK(load(text, &p));
    if (!p) return;
    CHECK(voxa_pipeline_nsteps(p) == 3);
    CHECK(!strcmp(voxa_pipeline_step(p, 0, "name"), "d"));
    int counts[2] = {0, 0};
    voxa_pipeline_options o = {0};
    o.on_step = states;
    o.user = counts;
    CHECK_OK(voxa_pipeline_run(p, &o));
    CHECK(counts[0] == 6 && counts[1] == 0); /* run + done, three times */
    /* the same ops, directly */
    voxa_args a;
    voxa_array d = {0}, lab = {0}, got = {0};
    int64_t n = -1, n2 = -1;
    CHECK_OK(voxa_args_init(&a, voxa_op_find("dilate")));
    CHECK_OK(voxa_args_parse(&a, "box", "1,3,3"));
    CHECK_OK(voxa_array_new(&d, VOXA_BOOL, 3, shape));
    CHECK_OK(voxa_op_run(&a, &m, &d, NULL, NULL));
    voxa_args_free(&a);
    CHECK_OK(voxa_args_init(&a, voxa_op_find("label")));
    CHECK_OK(voxa_array_new(&lab, VOXA_I32, 3, shape));
    CHECK_OK(voxa_op_run(&a, &d, &lab, NULL, &n));
    voxa_args_free(&a);
    path_in(path, sizeof path, "out/lab.npy");
    CHECK_OK(voxa_read(path, &got));
    CHECK(got.dtype == VOXA_I32 && voxa_array_size(&got) == voxa_array_size(&lab) &&
          !memcmp(got.data, lab.data, (size_t)voxa_array_size(&lab) * 4));
    voxa_table t = {0};
    path_in(path, sizeof path, "out/t.csv");
    CHECK_OK(voxa_csv_read(path, &t));
    CHECK(t.nrows == n && n > 1);
    if (t.nrows != n) fprintf(stderr, "  rows %lld, count %lld\n", (long long)t.nrows, (long long)n);
    voxa_table_free(&t);
    path_in(path, sizeof path, "out/run.json");
    char *json = slurp(path);
    CHECK(json && strstr(json, "\"status\":\t\"complete\"") && strstr(json, "\"box\":\t[1, 3, 3]"));
    free(json);
    path_in(path, sizeof path, "out/report.html");
    char *html = slurp(path);
    CHECK(html && strstr(html, "data:image/png;base64,") && !strstr(html, "http:") &&
          !strstr(html, "https:") && !strstr(html, "<script"));
    free(html);
    voxa_pipeline_free(p);
    /* again: every step skipped */
    CHECK_OK(load(text, &p));
    counts[0] = counts[1] = 0;
    CHECK_OK(voxa_pipeline_run(p, &o));
    CHECK(counts[0] == 0 && counts[1] == 3);
    voxa_pipeline_free(p);
    /* a dry run with --force decides, runs nothing */
    CHECK_OK(load(text, &p));
    o.force = o.dry_run = 1;
    CHECK_OK(voxa_pipeline_run(p, &o));
    char plan[4096];
    CHECK_OK(voxa_pipeline_plan_text(p, plan, sizeof plan));
    CHECK(strstr(plan, "1. d (dilate) -> ") && strstr(plan, "run (forced)") && strstr(plan, "blocks:"));
    voxa_pipeline_free(p);
    (void)n2;
    voxa_array_free(&m);
    voxa_array_free(&d);
    voxa_array_free(&lab);
    voxa_array_free(&got);
}

int main(void) {
    snprintf(dir, sizeof dir, "/tmp/voxa-test-pipeline-%d", (int)getpid());
    mkdir(dir, 0777);
    RUN(test_values);
    RUN(test_refusals);
    RUN(test_run); /* writes m.npy */
    RUN(test_recipe_errors);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    VTEST_END();
}
