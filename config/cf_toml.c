/* cf_toml: the `[tool.xpuify]` table of a pyproject.toml rewritten line for line into YAML (see cf_toml.h). */
#include "config/cf_toml.h"
#include <ctype.h>
#include <string.h>

static const char *skip_ws(const char *p, const char *e) {
    while (p < e && (*p == ' ' || *p == '\t')) p++;
    return p;
}

/* A table header `[a.b.c]` (not `[[array]]`) on the line [p, e): its dotted name in name (spaces dropped). */
static bool header(const char *p, const char *e, char *name, size_t sz) {
    p = skip_ws(p, e);
    if (p >= e || *p != '[' || (p + 1 < e && p[1] == '[')) return false;
    size_t n = 0;
    for (p++; p < e && *p != ']'; p++)
        if (*p != ' ' && *p != '\t' && *p != '"' && n + 1 < sz) name[n++] = *p;
    name[n] = 0;
    return p < e;
}

static bool is_xpuify(const char *name, const char **sub) {
    if (!strcmp(name, "tool.xpuify")) { *sub = NULL; return true; }
    if (!strncmp(name, "tool.xpuify.", 12)) { *sub = name + 12; return true; }
    return false;
}

bool cf_toml_has_xpuify(const char *text, size_t len) {
    const char *end = text + len, *sub;
    char name[256];
    for (const char *p = text; p < end;) {
        const char *e = memchr(p, '\n', (size_t)(end - p));
        if (!e) e = end;
        if (header(p, e, name, sizeof name) && is_xpuify(name, &sub)) return true;
        p = e + 1;
    }
    return false;
}

typedef struct {
    ut_buf *out;
    int depth;       /* open [ and { of a value that goes on over lines */
    bool in_value;   /* a value's continuation line */
    const char *why;
} tr;

/* Copies a value's text [p, e) in YAML flow syntax: strings as they are (TOML's basic strings escape as YAML's
 * double-quoted ones do; literal strings hold no quote), `=` inside an inline table as `:`, comments dropped. */
static bool value(tr *t, const char *p, const char *e) {
    for (; p < e; p++) {
        char c = *p;
        if (c == '"' || c == '\'') {
            if (p + 2 < e && p[1] == c && p[2] == c) { t->why = "multi-line strings are not supported here"; return false; }
            const char *q = p + 1;
            while (q < e && *q != c) q += (c == '"' && *q == '\\' && q + 1 < e) ? 2 : 1;
            if (q >= e) { t->why = "a string is not closed on its line"; return false; }
            ut_buf_append(t->out, p, (size_t)(q - p + 1));
            p = q;
            continue;
        }
        if (c == '#') break;
        if (c == '[' || c == '{') t->depth++;
        if (c == ']' || c == '}') t->depth--;
        if (c == '=') { ut_buf_putc(t->out, ':'); continue; }
        ut_buf_putc(t->out, c);
    }
    return true;
}

/* `key = value` at the given indentation, the value at its column in the TOML line where the indentation allows
 * (so that messages point at the same column); a dotted key is not supported. */
static bool pair(tr *t, const char *p, const char *e, int indent) {
    const char *line = p;
    size_t start = t->out->len;
    p = skip_ws(p, e);
    const char *k = p;
    if (p < e && (*p == '"' || *p == '\'')) {
        char q = *p;
        for (p++; p < e && *p != q; p++) {}
        if (p >= e) { t->why = "a quoted key is not closed"; return false; }
        p++;
    } else {
        while (p < e && (isalnum((unsigned char)*p) || *p == '_' || *p == '-')) p++;
    }
    const char *ke = p;
    p = skip_ws(p, e);
    if (ke == k || p >= e || *p != '=') {
        t->why = p < e && *p == '.' ? "dotted keys are not supported here: use a [tool.xpuify.X] table" : "expected `key = value`";
        return false;
    }
    for (int i = 0; i < indent; i++) ut_buf_putc(t->out, ' ');
    ut_buf_append(t->out, k, (size_t)(ke - k));
    ut_buf_putc(t->out, ':');
    const char *v = skip_ws(p + 1, e);
    do ut_buf_putc(t->out, ' ');
    while (t->out->len - start < (size_t)(v - line));
    t->depth = 0;
    if (!value(t, v, e)) return false;
    t->in_value = t->depth > 0;
    return true;
}

bool cf_toml_xpuify_yaml(const char *text, size_t len, ut_buf *out, int *line, const char **why) {
    const char *end = text + len, *sub = NULL;
    char name[256];
    bool inside = false;
    tr t = {out, 0, false, NULL};
    *line = 0;
    for (const char *p = text; p <= end;) {
        const char *e = memchr(p, '\n', (size_t)(end - p));
        if (!e) e = end;
        ++*line;
        const char *le = e > p && e[-1] == '\r' ? e - 1 : e; /* CRLF files: the CR is not part of the line */
        const char *s = skip_ws(p, le);
        if (t.in_value) {
            /* the rest of an array or inline table: indented under its key, as YAML's flow collections need */
            if (inside) {
                ut_buf_puts(out, "    ");
                if (!value(&t, s, le)) break;
                t.in_value = t.depth > 0;
            }
        } else if (s < le && *s == '[') {
            if (header(p, le, name, sizeof name) && is_xpuify(name, &sub)) {
                inside = true;
                if (sub) {
                    if (strchr(sub, '.')) { t.why = "a table below [tool.xpuify.X] is not supported: use an inline table"; break; }
                    ut_buf_printf(out, "%s:", sub);
                }
            } else {
                inside = false;
            }
        } else if (inside && s < le && *s != '#') {
            if (!pair(&t, p, le, sub ? 2 : 0)) break;
        }
        ut_buf_putc(out, '\n');
        if (e == end) break;
        p = e + 1;
    }
    if (t.why) { *why = t.why; return false; }
    if (t.in_value) { *why = "an array or inline table is not closed"; return false; }
    return true;
}
