/* cf_config: loading, inheriting, overriding and applying `.xpuify.yml` files. */
#include "util/ut_yaml.h"
#include "config/cf_config.h"
#include "config/cf_confine.h"
#include "config/cf_toml.h"
#include "util/ut_hash.h"
#include "analyzer/core/an_suppress.h"
#include <cjson/cJSON.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

static const char *const key_names[CF__COUNT] = {
    "extend", "select", "ignore", "per-file-ignores", "exclude", "target", "torch-version",
    "device-priority", "helper-path", "rule-options", "rule-dirs", "fail-on"};

const char *cf_key_name(cf_key k) { return k < CF__COUNT ? key_names[k] : "?"; }

typedef struct {
    char *dir;
    cf_config *cfg;
} dir_entry;

typedef struct {
    cf_key key;
    char *value;
} override;

struct cf_store {
    UT_VEC(cf_config *) configs; /* every file loaded, plus the defaults */
    UT_VEC(char *) strings;      /* interned origin file names */
    dir_entry *dirs;             /* open-addressing cache: directory -> configuration */
    size_t dirs_cap, dirs_len;
    cf_config *defaults;
    char *forced;
    bool isolated;
    /* the directory part of the last file asked for (as given) and its configuration: a walk asks for the files of
     * one directory in a row */
    char *last_dir;
    size_t last_dir_len;
    const cf_config *last_cfg;
    UT_VEC(override) overrides;
    UT_VEC(char *) loading; /* extend chain being loaded (cycle detection) */
    char cwd[PATH_MAX];
};

static const char CMDLINE[] = "command line";

/* ---- paths --------------------------------------------------------------------------------------------------- */

/* Makes p absolute (against cwd) and removes `.`, `..` and doubled slashes textually. */
static char *absolute(const char *cwd, const char *p) {
    ut_buf b;
    ut_buf_init(&b);
    if (p[0] != '/') ut_buf_printf(&b, "%s/", cwd);
    ut_buf_puts(&b, p);
    char *s = ut_buf_take(&b);
    UT_VEC(char *) parts = {0};
    for (char *save = NULL, *tok = strtok_r(s, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
        if (!strcmp(tok, ".")) continue;
        if (!strcmp(tok, "..")) { if (parts.len) parts.len--; continue; }
        ut_vec_push(&parts, tok);
    }
    ut_buf_init(&b);
    for (size_t i = 0; i < parts.len; i++) ut_buf_printf(&b, "/%s", parts.items[i]);
    if (!b.len) ut_buf_putc(&b, '/');
    ut_vec_free(&parts);
    ut_free(s);
    return ut_buf_take(&b);
}

static char *dirname_of(const char *abs) {
    const char *s = strrchr(abs, '/');
    if (!s || s == abs) return ut_strdup("/");
    return ut_strndup(abs, (size_t)(s - abs));
}

/* path relative to base when inside it, else NULL */
static const char *rel_to(const char *base, const char *abs) {
    size_t n = strlen(base);
    if (n == 1 && base[0] == '/') return abs + 1;
    if (strncmp(abs, base, n)) return NULL;
    if (abs[n] == '/') return abs + n + 1;
    if (!abs[n]) return "";
    return NULL;
}

/* ---- globs --------------------------------------------------------------------------------------------------- */

static bool match_parts(char **pat, size_t np, size_t pi, char **comp, size_t nc, size_t ci) {
    if (pi == np) return true; /* a pattern naming a directory covers what is below it */
    if (!strcmp(pat[pi], "**")) return match_parts(pat, np, pi + 1, comp, nc, ci) ||
                                       (ci < nc && match_parts(pat, np, pi, comp, nc, ci + 1));
    if (ci == nc) return false;
    return !fnmatch(pat[pi], comp[ci], FNM_PERIOD) && match_parts(pat, np, pi + 1, comp, nc, ci + 1);
}

static size_t split(char *s, char **out, size_t max) {
    size_t n = 0;
    for (char *save = NULL, *tok = strtok_r(s, "/", &save); tok && n < max; tok = strtok_r(NULL, "/", &save))
        if (strcmp(tok, ".")) out[n++] = tok;
    return n;
}

bool cf_glob_match(const char *pattern, const char *rel) {
    char *p = ut_strdup(pattern), *r = ut_strdup(rel);
    char *pp[128], *rc[256];
    bool anchored = strchr(pattern, '/') && strcmp(pattern + strlen(pattern) - 1, "/") != 0;
    /* "dir/" is anchored only when it has another slash: "build/" matches any build directory */
    if (!anchored) {
        size_t pl = strlen(pattern);
        anchored = pl > 1 && memchr(pattern, '/', pl - 1) != NULL;
    }
    size_t np = split(p, pp, 128), nc = split(r, rc, 256);
    bool hit = false;
    if (!anchored && np == 1) {
        for (size_t i = 0; i < nc && !hit; i++) hit = !fnmatch(pp[0], rc[i], FNM_PERIOD) || !strcmp(pp[0], "**");
    } else {
        hit = np && match_parts(pp, np, 0, rc, nc, 0);
    }
    ut_free(p);
    ut_free(r);
    return hit;
}

/* ---- values ---------------------------------------------------------------------------------------------------- */

static void strs_free(cf_strs *v) {
    for (size_t i = 0; i < v->len; i++) ut_free(v->items[i].text);
    ut_vec_free(v);
}

static void strs_copy(cf_strs *dst, const cf_strs *src) {
    for (size_t i = 0; i < src->len; i++) {
        cf_str s = {ut_strdup(src->items[i].text), src->items[i].origin};
        ut_vec_push(dst, s);
    }
}

static void pf_free(void *v_) {
    UT_VEC(cf_per_file) *v = v_;
    for (size_t i = 0; i < v->len; i++) {
        ut_free(v->items[i].pattern.text);
        ut_free(v->items[i].base);
        strs_free(&v->items[i].selectors);
    }
    ut_vec_free(v);
}

static void pf_copy(void *dst_, const void *src_) {
    UT_VEC(cf_per_file) *dst = dst_;
    const UT_VEC(cf_per_file) *src = src_;
    for (size_t i = 0; i < src->len; i++) {
        cf_per_file p = {{ut_strdup(src->items[i].pattern.text), src->items[i].pattern.origin},
                         ut_strdup(src->items[i].base), {0}};
        strs_copy(&p.selectors, &src->items[i].selectors);
        ut_vec_push(dst, p);
    }
}

static void ro_free(cf_config *c) {
    for (size_t i = 0; i < c->rule_options.len; i++) ut_free(c->rule_options.items[i].selector.text);
    ut_vec_free(&c->rule_options);
}

static void config_free(cf_config *c) {
    if (!c) return;
    ut_free(c->extend);
    strs_free(&c->select);
    strs_free(&c->ignore);
    pf_free(&c->per_file_ignores);
    pf_free(&c->exclude);
    ut_free(c->target);
    ut_free(c->torch_version);
    ut_free(c->device_priority);
    ut_free(c->helper_path);
    ro_free(c);
    strs_free(&c->rule_dirs);
    ut_free((char *)c->path);
    ut_free((char *)c->dir);
    ut_free(c);
}

static cf_config *config_defaults(void) {
    cf_config *c = ut_calloc(1, sizeof *c);
    c->target = ut_strdup("auto");
    c->device_priority = ut_strdup("cuda,xpu,mps,cpu");
    c->fail_on = AN_SEV_INFO;
    return c;
}

static cf_config *config_copy(const cf_config *b) {
    cf_config *c = ut_calloc(1, sizeof *c);
    memcpy(c->origin, b->origin, sizeof c->origin);
    c->extend = b->extend ? ut_strdup(b->extend) : NULL;
    strs_copy(&c->select, &b->select);
    c->select_set = b->select_set;
    strs_copy(&c->ignore, &b->ignore);
    pf_copy(&c->per_file_ignores, &b->per_file_ignores);
    pf_copy(&c->exclude, &b->exclude);
    c->target = ut_strdup(b->target);
    c->torch_version = b->torch_version ? ut_strdup(b->torch_version) : NULL;
    c->device_priority = ut_strdup(b->device_priority);
    c->helper_path = b->helper_path ? ut_strdup(b->helper_path) : NULL;
    for (size_t i = 0; i < b->rule_options.len; i++) {
        cf_rule_option o = b->rule_options.items[i];
        o.selector.text = ut_strdup(o.selector.text);
        ut_vec_push(&c->rule_options, o);
    }
    strs_copy(&c->rule_dirs, &b->rule_dirs);
    c->fail_on = b->fail_on;
    return c;
}

static const char *intern(cf_store *s, const char *str) {
    for (size_t i = 0; i < s->strings.len; i++)
        if (!strcmp(s->strings.items[i], str)) return s->strings.items[i];
    ut_vec_push(&s->strings, ut_strdup(str));
    return s->strings.items[s->strings.len - 1];
}

/* ---- YAML ------------------------------------------------------------------------------------------------------ */

typedef struct {
    cf_store *store;
    yaml_document_t *doc;
    const char *file; /* interned, for origins */
    const char *shown; /* as printed in messages */
    const char *dir;   /* absolute directory of the file */
    ut_buf *err;
    int nerr;
    const char *root;  /* its project (cf_project_root): what paths it names must stay inside */
} ld;

/* a text (a path, a message) as one line of an error message: control characters (a newline a YAML value folded in) as \xNN */
static char *one_line(const char *p) {
    ut_buf b;
    ut_buf_init(&b);
    for (const unsigned char *c = (const unsigned char *)p; *c; c++) {
        if (*c < 0x20 || *c == 0x7f) ut_buf_printf(&b, "\\x%02x", *c);
        else ut_buf_putc(&b, (char)*c);
    }
    if (!b.data) ut_buf_printf(&b, "%s", "");
    return ut_buf_take(&b);
}

static void lerr(ld *l, yaml_node_t *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void lerr(ld *l, yaml_node_t *n, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    ut_buf m;
    ut_buf_init(&m);
    ut_buf_vprintf(&m, fmt, ap);
    va_end(ap);
    /* one line per error: a value's control characters (a newline YAML folded in) shown as \xNN */
    char *o = one_line(m.data ? m.data : "");
    ut_buf_printf(l->err, "%s:%zu:%zu: %s\n", l->shown, n ? n->start_mark.line + 1 : 1, n ? n->start_mark.column + 1 : 1, o);
    ut_free(o);
    ut_buf_free(&m);
    l->nerr++;
}

static yaml_node_t *node(ld *l, int id) { return yaml_document_get_node(l->doc, id); }
static const char *scalar(yaml_node_t *n) { return ut_yaml_scalar(n); }
static cf_origin at(ld *l, yaml_node_t *n) {
    cf_origin o = {l->file, (int)n->start_mark.line + 1, (int)n->start_mark.column + 1};
    return o;
}

/* a list of strings, or one string of comma-separated items */
static bool str_list(ld *l, yaml_node_t *n, const char *key, cf_strs *out) {
    if (n->type == YAML_SCALAR_NODE) {
        const char *s = scalar(n);
        if (!*s) return true;
        char *copy = ut_strdup(s);
        for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            while (*tok == ' ') tok++;
            size_t tl = strlen(tok);
            while (tl && tok[tl - 1] == ' ') tok[--tl] = 0;
            if (!tl) continue;
            cf_str v = {ut_strdup(tok), at(l, n)};
            ut_vec_push(out, v);
        }
        ut_free(copy);
        return true;
    }
    if (n->type != YAML_SEQUENCE_NODE) { lerr(l, n, "`%s` must be a list of strings", key); return false; }
    bool ok = true;
    for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
        yaml_node_t *e = node(l, *it);
        const char *s = scalar(e);
        if (!s || !*s) { lerr(l, e, "`%s` items must be non-empty strings", key); ok = false; continue; }
        cf_str v = {ut_strdup(s), at(l, e)};
        ut_vec_push(out, v);
    }
    return ok;
}

static bool parse_severity(const char *s, an_severity *out) {
    if (!s) return false;
    if (!strcmp(s, "error")) *out = AN_SEV_ERROR;
    else if (!strcmp(s, "warning")) *out = AN_SEV_WARNING;
    else if (!strcmp(s, "info")) *out = AN_SEV_INFO;
    else return false;
    return true;
}

static bool valid_version(const char *s) {
    int a, b;
    char tail;
    return s && sscanf(s, "%d.%d%c", &a, &b, &tail) >= 2;
}

static bool valid_priority(const char *s) {
    char *copy = ut_strdup(s);
    bool ok = *s != 0;
    for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ') tok++;
        if (strcmp(tok, "cuda") && strcmp(tok, "xpu") && strcmp(tok, "mps") && strcmp(tok, "cpu")) ok = false;
    }
    ut_free(copy);
    return ok;
}

static char *join_strs(const cf_strs *v) {
    ut_buf b;
    ut_buf_init(&b);
    for (size_t i = 0; i < v->len; i++) ut_buf_printf(&b, "%s%s", i ? "," : "", v->items[i].text);
    if (!b.data) ut_buf_puts(&b, "");
    return ut_buf_take(&b);
}

static void parse_per_file(ld *l, yaml_node_t *v, cf_config *c, bool exclude) {
    if (exclude) {
        cf_strs pats = {0};
        if (!str_list(l, v, "exclude", &pats)) { strs_free(&pats); return; }
        pf_free(&c->exclude);
        for (size_t i = 0; i < pats.len; i++) {
            cf_per_file p = {pats.items[i], ut_strdup(l->dir), {0}};
            ut_vec_push(&c->exclude, p);
        }
        ut_vec_free(&pats);
        return;
    }
    if (v->type != YAML_MAPPING_NODE) { lerr(l, v, "`per-file-ignores` must map globs to lists of rules"); return; }
    pf_free(&c->per_file_ignores);
    for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
        yaml_node_t *k = node(l, p->key), *val = node(l, p->value);
        const char *pat = scalar(k);
        if (!pat || !*pat) { lerr(l, k, "`per-file-ignores` keys must be globs"); continue; }
        cf_per_file pf = {{ut_strdup(pat), at(l, k)}, ut_strdup(l->dir), {0}};
        str_list(l, val, "per-file-ignores", &pf.selectors);
        ut_vec_push(&c->per_file_ignores, pf);
    }
}

static void parse_rule_options(ld *l, yaml_node_t *v, cf_config *c) {
    if (v->type != YAML_MAPPING_NODE) { lerr(l, v, "`rule-options` must map rules to options"); return; }
    ro_free(c);
    for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
        yaml_node_t *k = node(l, p->key), *val = node(l, p->value);
        const char *sel = scalar(k);
        if (!sel || !*sel) { lerr(l, k, "`rule-options` keys must be rule codes, code prefixes or names"); continue; }
        if (val->type != YAML_MAPPING_NODE) { lerr(l, val, "options of `%s` must be a mapping (known: severity)", sel); continue; }
        cf_rule_option o = {{ut_strdup(sel), at(l, k)}, false, AN_SEV_WARNING};
        for (yaml_node_pair_t *q = val->data.mapping.pairs.start; q < val->data.mapping.pairs.top; q++) {
            yaml_node_t *ok = node(l, q->key), *ov = node(l, q->value);
            const char *okey = scalar(ok);
            if (okey && !strcmp(okey, "severity")) {
                if (parse_severity(scalar(ov), &o.severity)) o.has_severity = true;
                else lerr(l, ov, "`severity` must be one of: error, warning, info");
            } else {
                lerr(l, ok, "unknown rule option `%s` (known: severity)", okey ? okey : "?");
            }
        }
        ut_vec_push(&c->rule_options, o);
    }
}

static cf_config *load_file(cf_store *s, const char *abs, ut_buf *err, const char *from, yaml_node_t *from_node,
                            const char *from_shown);

/* The first key before p in the mapping spelled like p's, or NULL. */
static yaml_node_t *earlier_key(ld *l, yaml_node_t *map, yaml_node_pair_t *p) {
    const char *key = scalar(node(l, p->key));
    if (!key) return NULL;
    for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++) {
        const char *k = scalar(node(l, q->key));
        if (k && !strcmp(k, key)) return node(l, q->key);
    }
    return NULL;
}

static void parse_keys(ld *l, yaml_node_t *root, cf_config *c) {
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
        yaml_node_t *k = node(l, p->key), *v = node(l, p->value);
        const char *key = scalar(k);
        int idx = -1;
        for (int i = 0; key && i < CF__COUNT; i++)
            if (!strcmp(key, key_names[i])) idx = i;
        yaml_node_t *first = idx >= 0 ? earlier_key(l, root, p) : NULL;
        if (first) { /* YAML says keys are unique; silently taking the last would hide a mistake */
            if (idx != CF_EXTEND) /* said where `extend` is read */
                lerr(l, k, "duplicate key `%s` (first at line %zu)", key, first->start_mark.line + 1);
            continue;
        }
        if (idx < 0) {
            ut_buf known;
            ut_buf_init(&known);
            for (int i = 0; i < CF__COUNT; i++) ut_buf_printf(&known, "%s%s", i ? ", " : "", key_names[i]);
            lerr(l, k, "unknown key `%s` (known: %s)", key ? key : "?", known.data);
            ut_buf_free(&known);
            continue;
        }
        int before = l->nerr;
        const char *sv = scalar(v);
        switch ((cf_key)idx) {
        case CF_EXTEND: break; /* read first */
        case CF_SELECT: strs_free(&c->select); str_list(l, v, key, &c->select); c->select_set = true; break;
        case CF_IGNORE: strs_free(&c->ignore); str_list(l, v, key, &c->ignore); break;
        case CF_PER_FILE_IGNORES: parse_per_file(l, v, c, false); break;
        case CF_EXCLUDE: parse_per_file(l, v, c, true); break;
        case CF_TARGET:
            if (!sv || (strcmp(sv, "auto") && strcmp(sv, "accelerator") && strcmp(sv, "compat") && strcmp(sv, "none")))
                lerr(l, v, "`target` must be one of: auto, accelerator, compat, none");
            else ut_free(c->target), c->target = ut_strdup(sv);
            break;
        case CF_TORCH_VERSION:
            if (!valid_version(sv)) lerr(l, v, "`torch-version` must be a version like \"2.6\"");
            else ut_free(c->torch_version), c->torch_version = ut_strdup(sv);
            break;
        case CF_DEVICE_PRIORITY: {
            cf_strs items = {0};
            if (str_list(l, v, key, &items)) {
                char *j = join_strs(&items);
                if (!valid_priority(j)) lerr(l, v, "`device-priority` must list devices among: cuda, xpu, mps, cpu");
                else ut_free(c->device_priority), c->device_priority = ut_strdup(j);
                ut_free(j);
            }
            strs_free(&items);
            break;
        }
        case CF_HELPER_PATH:
            if (!sv || strlen(sv) < 4 || strcmp(sv + strlen(sv) - 3, ".py")) lerr(l, v, "`helper-path` must name a .py file");
            else {
                char *a = absolute(l->dir, sv);
                if (!cf_confined(l->root, a)) {
                    lerr(l, v, "`helper-path` must stay inside the project (%s): `%s` leaves it; refused", l->root, sv);
                    ut_free(a);
                } else {
                    ut_free(c->helper_path), c->helper_path = a;
                }
            }
            break;
        case CF_RULE_OPTIONS: parse_rule_options(l, v, c); break;
        case CF_RULE_DIRS: {
            cf_strs dirs = {0};
            str_list(l, v, key, &dirs);
            strs_free(&c->rule_dirs);
            for (size_t i = 0; i < dirs.len; i++) {
                char *a = absolute(l->dir, dirs.items[i].text);
                struct stat st;
                yaml_node_t fake = *v;
                fake.start_mark.line = (size_t)dirs.items[i].origin.line - 1;
                fake.start_mark.column = (size_t)dirs.items[i].origin.col - 1;
                if (!cf_confined(l->root, a))
                    lerr(l, &fake, "rule directory `%s` lies outside the project (%s); refused", dirs.items[i].text, l->root);
                else if (stat(a, &st) != 0 || !S_ISDIR(st.st_mode))
                    lerr(l, &fake, "rule directory `%s` does not exist", dirs.items[i].text);
                ut_free(dirs.items[i].text);
                dirs.items[i].text = a;
                ut_vec_push(&c->rule_dirs, dirs.items[i]);
            }
            ut_vec_free(&dirs);
            break;
        }
        case CF_FAIL_ON:
            if (!parse_severity(sv, &c->fail_on)) lerr(l, v, "`fail-on` must be one of: error, warning, info");
            break;
        default: break;
        }
        if (l->nerr == before) c->origin[idx] = at(l, k);
    }
}

/* how a path is shown in messages: relative to the working directory when inside it */
static const char *shown_path(cf_store *s, const char *abs) {
    const char *r = rel_to(s->cwd, abs);
    return intern(s, r && *r ? r : abs);
}

static void apply_overrides(cf_store *s, cf_config *c);

static bool cf_is_pyproject(const char *path) {
    const char *b = strrchr(path, '/');
    return !strcmp(b ? b + 1 : path, CF_PYPROJECT);
}

/* A pyproject.toml counts as a configuration only when it has a [tool.xpuify] table (as ruff reads [tool.ruff]). */
static bool pyproject_configures(const char *path) {
    size_t len;
    char *why = NULL;
    char *text = cf_read_regular(path, CF_MAX_CONFIG_BYTES, &len, &why);
    ut_free(why);
    bool yes = text && cf_toml_has_xpuify(text, len);
    ut_free(text);
    return yes;
}

static cf_config *load_file(cf_store *s, const char *abs, ut_buf *err, const char *from, yaml_node_t *from_node,
                            const char *from_shown) {
    for (size_t i = 0; i < s->configs.len; i++)
        if (s->configs.items[i]->path && !strcmp(s->configs.items[i]->path, abs)) return s->configs.items[i];
    for (size_t i = 0; i < s->loading.len; i++)
        if (!strcmp(s->loading.items[i], abs)) {
            char *o = one_line(shown_path(s, abs));
            ut_buf_printf(err, "%s:%zu:%zu: `extend` makes a cycle through %s\n", from_shown,
                          from_node ? from_node->start_mark.line + 1 : 1, from_node ? from_node->start_mark.column + 1 : 1, o);
            ut_free(o);
            return NULL;
        }
    const char *shown = shown_path(s, abs);
    size_t len;
    char *why = NULL;
    char *text = cf_read_regular(abs, CF_MAX_CONFIG_BYTES, &len, &why);
    if (!text) {
        char *o = one_line(shown);
        if (from) ut_buf_printf(err, "%s:%zu:%zu: `extend`: cannot read %s: %s\n", from_shown, from_node->start_mark.line + 1,
                                from_node->start_mark.column + 1, o, why);
        else ut_buf_printf(err, "%s: cannot read the configuration: %s\n", o, why);
        ut_free(o);
        ut_free(why);
        return NULL;
    }
    if (cf_is_pyproject(abs)) {
        /* the [tool.xpuify] table, as the YAML of the same keys (line numbers kept) */
        ut_buf y;
        ut_buf_init(&y);
        int line;
        const char *twhy;
        if (!cf_toml_xpuify_yaml(text, len, &y, &line, &twhy)) {
            ut_buf_printf(err, "%s:%d: [tool.xpuify]: %s\n", shown, line, twhy);
            ut_buf_free(&y);
            ut_free(text);
            return NULL;
        }
        ut_free(text);
        len = y.len;
        if (!y.data) ut_buf_puts(&y, "");
        text = ut_buf_take(&y);
    }
    yaml_parser_t parser;
    yaml_document_t doc;
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &doc)) {
        ut_buf_printf(err, "%s:%zu:%zu: YAML error: %s\n", shown, parser.problem_mark.line + 1,
                      parser.problem_mark.column + 1, parser.problem ? parser.problem : "malformed");
        yaml_parser_delete(&parser);
        ut_free(text);
        return NULL;
    }
    char *dir = dirname_of(abs);
    char *root_dir = cf_project_root(abs, s->cwd);
    ld l = {s, &doc, intern(s, shown), shown, dir, err, 0, root_dir};
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    cf_config *c = NULL;
    if (root && root->type != YAML_MAPPING_NODE && !(root->type == YAML_SCALAR_NODE && !*scalar(root))) {
        lerr(&l, root, "the configuration must be a mapping of keys (see docs/ci.md)");
    } else {
        /* `extend` first: the inherited values are the base */
        cf_config *base = NULL;
        if (root && root->type == YAML_MAPPING_NODE)
            for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
                const char *key = scalar(node(&l, p->key));
                if (!key || strcmp(key, "extend")) continue;
                yaml_node_t *v = node(&l, p->value), *first = earlier_key(&l, root, p);
                if (first) {
                    lerr(&l, node(&l, p->key), "duplicate key `extend` (first at line %zu)", first->start_mark.line + 1);
                    continue;
                }
                const char *target = scalar(v);
                if (!target || !*target) { lerr(&l, v, "`extend` must be a path"); continue; }
                char *babs = absolute(dir, target);
                if (!cf_confined(root_dir, babs)) { /* never read: its lines would be echoed in errors */
                    lerr(&l, v, "`extend`: `%s` lies outside the project (%s); refused", target, root_dir);
                    ut_free(babs);
                    continue;
                }
                ut_vec_push(&s->loading, (char *)abs);
                int before = (int)err->len;
                base = load_file(s, babs, err, abs, v, shown);
                s->loading.len--;
                if (!base) {
                    if ((int)err->len == before) lerr(&l, v, "`extend`: cannot load %s", target);
                    l.nerr++;
                } else {
                    c = config_copy(base);
                    ut_free(c->extend);
                    c->extend = babs;
                    babs = NULL;
                    c->origin[CF_EXTEND] = at(&l, node(&l, p->key));
                }
                ut_free(babs);
            }
        if (!c) c = config_defaults();
        if (root && root->type == YAML_MAPPING_NODE) parse_keys(&l, root, c);
    }
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    ut_free(text);
    ut_free(root_dir);
    if (l.nerr || !c) {
        config_free(c);
        ut_free(dir);
        return NULL;
    }
    c->path = ut_strdup(abs);
    c->dir = dir;
    apply_overrides(s, c);
    ut_vec_push(&s->configs, c);
    return c;
}

/* ---- overrides ------------------------------------------------------------------------------------------------- */

static void apply_overrides(cf_store *s, cf_config *c) {
    cf_origin cli = {CMDLINE, 0, 0};
    bool select_cleared = false;
    for (size_t i = 0; i < s->overrides.len; i++) {
        override *o = &s->overrides.items[i];
        switch (o->key) {
        case CF_RULE_DIRS: {
            cf_str v = {absolute(s->cwd, o->value), cli};
            ut_vec_push(&c->rule_dirs, v);
            break;
        }
        case CF_SELECT:
        case CF_IGNORE: {
            cf_strs *dst = o->key == CF_SELECT ? &c->select : &c->ignore;
            if (o->key == CF_SELECT && !select_cleared) strs_free(dst), select_cleared = true, c->select_set = true;
            char *copy = ut_strdup(o->value);
            for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                while (*tok == ' ') tok++;
                size_t tl = strlen(tok);
                while (tl && tok[tl - 1] == ' ') tok[--tl] = 0;
                if (!tl) continue;
                cf_str v = {ut_strdup(tok), cli};
                ut_vec_push(dst, v);
            }
            ut_free(copy);
            break;
        }
        case CF_EXCLUDE: {
            cf_per_file p = {{ut_strdup(o->value), cli}, ut_strdup(s->cwd), {0}};
            ut_vec_push(&c->exclude, p);
            break;
        }
        case CF_TARGET: ut_free(c->target), c->target = ut_strdup(o->value); break;
        case CF_TORCH_VERSION: ut_free(c->torch_version), c->torch_version = ut_strdup(o->value); break;
        case CF_DEVICE_PRIORITY: ut_free(c->device_priority), c->device_priority = ut_strdup(o->value); break;
        case CF_HELPER_PATH: ut_free(c->helper_path), c->helper_path = absolute(s->cwd, o->value); break;
        case CF_FAIL_ON: parse_severity(o->value, &c->fail_on); break;
        default: continue;
        }
        c->origin[o->key] = cli;
    }
}

/* ---- the store --------------------------------------------------------------------------------------------------- */

cf_store *cf_store_new(void) {
    cf_store *s = ut_calloc(1, sizeof *s);
    if (!getcwd(s->cwd, sizeof s->cwd)) strcpy(s->cwd, "/");
    char real[PATH_MAX];
    if (realpath(s->cwd, real)) snprintf(s->cwd, sizeof s->cwd, "%s", real);
    return s;
}

void cf_store_free(cf_store *s) {
    if (!s) return;
    for (size_t i = 0; i < s->configs.len; i++) config_free(s->configs.items[i]);
    ut_vec_free(&s->configs);
    for (size_t i = 0; i < s->strings.len; i++) ut_free(s->strings.items[i]);
    ut_vec_free(&s->strings);
    for (size_t i = 0; i < s->dirs_cap; i++) ut_free(s->dirs[i].dir);
    ut_free(s->dirs);
    for (size_t i = 0; i < s->overrides.len; i++) ut_free(s->overrides.items[i].value);
    ut_vec_free(&s->overrides);
    ut_vec_free(&s->loading);
    ut_free(s->forced);
    ut_free(s->last_dir);
    ut_free(s);
}

void cf_store_force(cf_store *s, const char *path, bool isolated) {
    ut_free(s->forced);
    s->forced = path ? absolute(s->cwd, path) : NULL;
    s->isolated = isolated;
}

void cf_store_override(cf_store *s, cf_key key, const char *value) {
    override o = {key, ut_strdup(value)};
    ut_vec_push(&s->overrides, o);
}

static uint64_t fnv(const char *p) { return ut_fnv1a(UT_FNV_SEED, p, strlen(p)); }

static cf_config *dir_get(cf_store *s, const char *dir) {
    if (!s->dirs_cap) return NULL;
    for (size_t i = fnv(dir) & (s->dirs_cap - 1);; i = (i + 1) & (s->dirs_cap - 1)) {
        if (!s->dirs[i].dir) return NULL;
        if (!strcmp(s->dirs[i].dir, dir)) return s->dirs[i].cfg;
    }
}

static void dir_put(cf_store *s, const char *dir, cf_config *c) {
    if ((s->dirs_len + 1) * 2 > s->dirs_cap) {
        size_t ncap = s->dirs_cap ? s->dirs_cap * 2 : 64;
        dir_entry *old = s->dirs;
        size_t ocap = s->dirs_cap;
        s->dirs = ut_calloc(ncap, sizeof(dir_entry));
        s->dirs_cap = ncap;
        s->dirs_len = 0;
        for (size_t i = 0; i < ocap; i++)
            if (old[i].dir) {
                dir_put(s, old[i].dir, old[i].cfg);
                ut_free(old[i].dir);
            }
        ut_free(old);
    }
    size_t i = fnv(dir) & (s->dirs_cap - 1);
    while (s->dirs[i].dir) {
        if (!strcmp(s->dirs[i].dir, dir)) return;
        i = (i + 1) & (s->dirs_cap - 1);
    }
    s->dirs[i].dir = ut_strdup(dir);
    s->dirs[i].cfg = c;
    s->dirs_len++;
}

static cf_config *defaults(cf_store *s) {
    if (!s->defaults) {
        s->defaults = config_defaults();
        s->defaults->dir = ut_strdup(s->cwd);
        apply_overrides(s, s->defaults);
        ut_vec_push(&s->configs, s->defaults);
    }
    return s->defaults;
}

static const cf_config *for_path(cf_store *s, const char *path, bool is_file, ut_buf *err) {
    if (s->isolated) return defaults(s);
    if (s->forced) {
        cf_config *c = load_file(s, s->forced, err, NULL, NULL, NULL);
        if (c) {
            ut_free((char *)c->dir);
            c->dir = ut_strdup(s->cwd); /* a forced file governs everything it is given */
        }
        return c;
    }
    const char *slash = is_file ? strrchr(path, '/') : NULL;
    size_t dlen = slash ? (size_t)(slash - path) : 0;
    if (is_file && s->last_cfg && dlen == s->last_dir_len && !memcmp(path, s->last_dir, dlen)) return s->last_cfg;
    char *abs = absolute(s->cwd, path);
    struct stat st;
    char *dir = !is_file && stat(abs, &st) == 0 && S_ISDIR(st.st_mode) ? ut_strdup(abs) : dirname_of(abs);
    ut_free(abs);
    UT_VEC(char *) visited = {0};
    cf_config *found = NULL;
    bool failed = false;
    for (char *d = dir;;) {
        cf_config *c = dir_get(s, d);
        if (c) { found = c; ut_free(d); break; }
        ut_vec_push(&visited, d);
        char cand[PATH_MAX + 16];
        snprintf(cand, sizeof cand, "%s%s%s", d, strcmp(d, "/") ? "/" : "", CF_FILE_NAME);
        bool here = stat(cand, &st) == 0 && S_ISREG(st.st_mode);
        if (!here) {
            /* .xpuify.yml wins over pyproject.toml in the same directory; the closest directory wins over both */
            snprintf(cand, sizeof cand, "%s%s%s", d, strcmp(d, "/") ? "/" : "", CF_PYPROJECT);
            here = stat(cand, &st) == 0 && S_ISREG(st.st_mode) && pyproject_configures(cand);
        }
        if (here) {
            found = load_file(s, cand, err, NULL, NULL, NULL);
            if (!found) failed = true;
            break;
        }
        if (!strcmp(d, "/")) break;
        d = dirname_of(d);
    }
    if (!found && !failed) found = defaults(s);
    for (size_t i = 0; i < visited.len; i++) {
        if (found) dir_put(s, visited.items[i], found);
        ut_free(visited.items[i]);
    }
    ut_vec_free(&visited);
    if (is_file && found) {
        ut_free(s->last_dir);
        s->last_dir = ut_strndup(path, dlen);
        s->last_dir_len = dlen;
        s->last_cfg = found;
    }
    return found;
}

const cf_config *cf_store_for_path(cf_store *s, const char *path, ut_buf *err) { return for_path(s, path, false, err); }
const cf_config *cf_store_for_file(cf_store *s, const char *path, ut_buf *err) { return for_path(s, path, true, err); }

size_t cf_store_count(const cf_store *s) { return s->configs.len; }
const cf_config *cf_store_at(const cf_store *s, size_t i) { return i < s->configs.len ? s->configs.items[i] : NULL; }

/* ---- meaning ---------------------------------------------------------------------------------------------------- */

const char *cf_origin_str(const cf_origin *o, char *buf, size_t sz) {
    if (!o->file) snprintf(buf, sz, "default");
    else if (!o->line) snprintf(buf, sz, "%s", o->file);
    else snprintf(buf, sz, "%s:%d:%d", o->file, o->line, o->col);
    return buf;
}

static bool apply_sels(const cf_strs *sels, const an_catalog *cat, bool *enabled, bool value, const char *key,
                       ut_buf *err) {
    bool ok = true;
    for (size_t i = 0; i < sels->len; i++) {
        bool hit = false;
        for (size_t r = 0; r < an_catalog_count(cat); r++) {
            const an_rule *ru = an_catalog_rule(cat, r);
            if (an_rule_matches_selector(ru, sels->items[i].text)) {
                if (enabled) enabled[r] = value;
                hit = true;
            }
        }
        if (!hit && err) {
            char o[512];
            cf_origin_str(&sels->items[i].origin, o, sizeof o);
            const char *near = an_catalog_suggest(cat, sels->items[i].text);
            char hint[160] = "";
            if (near) snprintf(hint, sizeof hint, "; did you mean `%s`?", near);
            if (sels->items[i].origin.file == CMDLINE)
                ut_buf_printf(err, "--%s: `%s` matches no rule code, code prefix or rule name%s (see `xpuify rule --all`)\n",
                              key, sels->items[i].text, hint);
            else
                ut_buf_printf(err, "%s: `%s`: `%s` matches no rule code, code prefix or rule name%s (see `xpuify rule --all`)\n",
                              o, key, sels->items[i].text, hint);
        }
        ok &= hit;
    }
    return ok;
}

bool cf_config_enabled(const cf_config *c, const an_catalog *cat, bool *enabled, ut_buf *err) {
    size_t n = an_catalog_count(cat);
    for (size_t i = 0; i < n; i++) enabled[i] = !c->select.len && !c->select_set;
    bool ok = apply_sels(&c->select, cat, enabled, true, "select", err);
    ok &= apply_sels(&c->ignore, cat, enabled, false, "ignore", err);
    for (size_t i = 0; i < c->per_file_ignores.len; i++)
        ok &= apply_sels(&c->per_file_ignores.items[i].selectors, cat, NULL, false, "per-file-ignores", err);
    for (size_t i = 0; i < c->rule_options.len; i++) {
        cf_strs one = {(cf_str *)&c->rule_options.items[i].selector, 1, 1};
        ok &= apply_sels(&one, cat, NULL, false, "rule-options", err);
    }
    return ok;
}

static char proc_cwd[PATH_MAX];
static pthread_once_t cwd_once = PTHREAD_ONCE_INIT;

static void read_cwd(void) {
    if (!getcwd(proc_cwd, sizeof proc_cwd)) strcpy(proc_cwd, "/");
    char real[PATH_MAX];
    if (realpath(proc_cwd, real)) snprintf(proc_cwd, sizeof proc_cwd, "%s", real);
}

/* xpuify never changes its working directory: read it once */
static char *abs_of(const char *p) {
    pthread_once(&cwd_once, read_cwd);
    return absolute(proc_cwd, p);
}

void cf_config_file_enabled(const cf_config *c, const an_catalog *cat, const char *path, bool *enabled) {
    if (!c->per_file_ignores.len) return;
    char *abs = abs_of(path);
    for (size_t i = 0; i < c->per_file_ignores.len; i++) {
        const cf_per_file *p = &c->per_file_ignores.items[i];
        const char *rel = rel_to(p->base, abs);
        if (!rel || !cf_glob_match(p->pattern.text, rel)) continue;
        apply_sels(&p->selectors, cat, enabled, false, "per-file-ignores", NULL);
    }
    ut_free(abs);
}

an_severity cf_config_severity(const cf_config *c, const an_rule *r) {
    an_severity s = r->severity;
    for (size_t i = 0; i < c->rule_options.len; i++) {
        const cf_rule_option *o = &c->rule_options.items[i];
        if (o->has_severity && an_rule_matches_selector(r, o->selector.text)) s = o->severity;
    }
    return s;
}

bool cf_config_excludes(const cf_config *c, const char *path, bool is_dir) {
    (void)is_dir;
    if (!c->exclude.len) return false;
    char *abs = abs_of(path);
    bool hit = false;
    for (size_t i = 0; i < c->exclude.len && !hit; i++) {
        const char *rel = rel_to(c->exclude.items[i].base, abs);
        hit = rel && *rel && cf_glob_match(c->exclude.items[i].pattern.text, rel);
    }
    ut_free(abs);
    return hit;
}

/* ---- printing ---------------------------------------------------------------------------------------------------- */

static void print_strs(FILE *fp, const cf_strs *v) {
    fputc('[', fp);
    for (size_t i = 0; i < v->len; i++) fprintf(fp, "%s%s", i ? ", " : "", v->items[i].text);
    fputc(']', fp);
}

static cJSON *json_strs(const cf_strs *v) {
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < v->len; i++) cJSON_AddItemToArray(a, cJSON_CreateString(v->items[i].text));
    return a;
}

static cJSON *json_pf(const void *v_, bool with_sels) {
    const UT_VEC(cf_per_file) *v = v_;
    cJSON *o = with_sels ? cJSON_CreateObject() : cJSON_CreateArray();
    for (size_t i = 0; i < v->len; i++) {
        if (with_sels) cJSON_AddItemToObject(o, v->items[i].pattern.text, json_strs(&v->items[i].selectors));
        else cJSON_AddItemToArray(o, cJSON_CreateString(v->items[i].pattern.text));
    }
    return o;
}

void cf_config_print(const cf_config *c, bool json, FILE *fp) {
    char o[1024];
    static const char *const sev[] = {"error", "warning", "info"};
    if (json) {
        cJSON *root = cJSON_CreateObject();
        cJSON_AddItemToObject(root, "file", c->path ? cJSON_CreateString(c->path) : cJSON_CreateNull());
        cJSON *vals = cJSON_AddObjectToObject(root, "settings");
        for (int k = 0; k < CF__COUNT; k++) {
            cJSON *e = cJSON_CreateObject();
            cJSON *v = NULL;
            switch ((cf_key)k) {
            case CF_EXTEND: v = c->extend ? cJSON_CreateString(c->extend) : cJSON_CreateNull(); break;
            case CF_SELECT: v = c->select_set ? json_strs(&c->select) : cJSON_CreateString("ALL"); break;
            case CF_IGNORE: v = json_strs(&c->ignore); break;
            case CF_PER_FILE_IGNORES: v = json_pf(&c->per_file_ignores, true); break;
            case CF_EXCLUDE: v = json_pf(&c->exclude, false); break;
            case CF_TARGET: v = cJSON_CreateString(c->target); break;
            case CF_TORCH_VERSION: v = c->torch_version ? cJSON_CreateString(c->torch_version) : cJSON_CreateNull(); break;
            case CF_DEVICE_PRIORITY: v = cJSON_CreateString(c->device_priority); break;
            case CF_HELPER_PATH: v = c->helper_path ? cJSON_CreateString(c->helper_path) : cJSON_CreateNull(); break;
            case CF_RULE_OPTIONS:
                v = cJSON_CreateObject();
                for (size_t i = 0; i < c->rule_options.len; i++) {
                    cJSON *x = cJSON_CreateObject();
                    if (c->rule_options.items[i].has_severity)
                        cJSON_AddStringToObject(x, "severity", sev[c->rule_options.items[i].severity]);
                    cJSON_AddItemToObject(v, c->rule_options.items[i].selector.text, x);
                }
                break;
            case CF_RULE_DIRS: v = json_strs(&c->rule_dirs); break;
            case CF_FAIL_ON: v = cJSON_CreateString(sev[c->fail_on]); break;
            default: v = cJSON_CreateNull();
            }
            cJSON_AddItemToObject(e, "value", v);
            cJSON_AddStringToObject(e, "origin", cf_origin_str(&c->origin[k], o, sizeof o));
            cJSON_AddItemToObject(vals, key_names[k], e);
        }
        char *s = cJSON_Print(root);
        fprintf(fp, "%s\n", s);
        cJSON_free(s);
        cJSON_Delete(root);
        return;
    }
    fprintf(fp, "# configuration file: %s%s\n", c->path ? c->path : "(none: built-in defaults)",
            c->path && cf_is_pyproject(c->path) ? " [tool.xpuify]" : "");
    fputs("# found as: the closest directory above the file with a .xpuify.yml or a pyproject.toml that has a\n"
          "# [tool.xpuify] table; in one directory .xpuify.yml wins over pyproject.toml\n", fp);
    for (int k = 0; k < CF__COUNT; k++) {
        fprintf(fp, "%s: ", key_names[k]);
        switch ((cf_key)k) {
        case CF_EXTEND: fputs(c->extend ? c->extend : "null", fp); break;
        case CF_SELECT: if (c->select_set) print_strs(fp, &c->select); else fputs("[ALL]", fp); break;
        case CF_IGNORE: print_strs(fp, &c->ignore); break;
        case CF_PER_FILE_IGNORES:
            fputc('{', fp);
            for (size_t i = 0; i < c->per_file_ignores.len; i++) {
                fprintf(fp, "%s\"%s\": ", i ? ", " : "", c->per_file_ignores.items[i].pattern.text);
                print_strs(fp, &c->per_file_ignores.items[i].selectors);
            }
            fputc('}', fp);
            break;
        case CF_EXCLUDE:
            fputc('[', fp);
            for (size_t i = 0; i < c->exclude.len; i++) fprintf(fp, "%s\"%s\"", i ? ", " : "", c->exclude.items[i].pattern.text);
            fputc(']', fp);
            break;
        case CF_TARGET: fputs(c->target, fp); break;
        case CF_TORCH_VERSION: fputs(c->torch_version ? c->torch_version : "null", fp); break;
        case CF_DEVICE_PRIORITY: fprintf(fp, "[%s]", c->device_priority); break;
        case CF_HELPER_PATH: fputs(c->helper_path ? c->helper_path : "null", fp); break;
        case CF_RULE_OPTIONS:
            fputc('{', fp);
            for (size_t i = 0; i < c->rule_options.len; i++) {
                const cf_rule_option *r = &c->rule_options.items[i];
                fprintf(fp, "%s%s: {", i ? ", " : "", r->selector.text);
                if (r->has_severity) fprintf(fp, "severity: %s", sev[r->severity]);
                fputc('}', fp);
            }
            fputc('}', fp);
            break;
        case CF_RULE_DIRS: print_strs(fp, &c->rule_dirs); break;
        case CF_FAIL_ON: fputs(sev[c->fail_on], fp); break;
        default: break;
        }
        const char *note = "";
        if (k == CF_TORCH_VERSION && !c->torch_version) note = " (null: read from the project's requirements)";
        if (k == CF_HELPER_PATH && !c->helper_path) note = " (null: beside scripts, or in the top-level package)";
        fprintf(fp, "  # %s%s\n", cf_origin_str(&c->origin[k], o, sizeof o), note);
    }
}
