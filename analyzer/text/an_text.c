/* an_text: comment masking per file type and the text `pattern` rules. Strings are not masked: a CUDA wheel
 * index or `CUDA_VISIBLE_DEVICES=0` inside quotes is exactly what these rules look for. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "analyzer/text/an_text.h"
#include "analyzer/core/an_message.h"
#include "analyzer/core/an_suppress.h"
#include "analyzer/core/an_walk.h"
#include <ctype.h>
#include <fnmatch.h>
#include <pcre2.h>

static bool ends_with(const char *s, const char *suf) {
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

an_text_kind an_text_kind_for_path(const char *path) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (ends_with(base, ".sh") || ends_with(base, ".bash") || ends_with(base, ".zsh")) return AN_TEXT_SHELL;
    if (!strcmp(base, "Dockerfile") || !strncmp(base, "Dockerfile.", 11) || ends_with(base, ".dockerfile") ||
        !strcmp(base, "Containerfile") || !strncmp(base, "Containerfile.", 14))
        return AN_TEXT_DOCKER;
    if (ends_with(base, ".yml") || ends_with(base, ".yaml")) return AN_TEXT_YAML;
    if (ends_with(base, ".toml")) return AN_TEXT_TOML;
    if (ends_with(base, ".ini") || ends_with(base, ".cfg")) return AN_TEXT_INI;
    if ((!strncmp(base, "requirements", 12) && ends_with(base, ".txt")) || !strcmp(base, "constraints.txt"))
        return AN_TEXT_REQUIREMENTS;
    if (!strcmp(base, "CMakeLists.txt") || ends_with(base, ".cmake")) return AN_TEXT_CMAKE;
    if (!strcmp(base, "Makefile") || !strcmp(base, "GNUmakefile") || ends_with(base, ".mk")) return AN_TEXT_MAKE;
    return AN_TEXT_OTHER;
}

const char *an_text_kind_name(an_text_kind k) {
    static const char *const names[] = {"text", "shell", "dockerfile", "yaml", "toml", "ini", "requirements",
                                        "cmake", "make"};
    return k <= AN_TEXT_MAKE ? names[k] : "text";
}

typedef struct {
    char *m;
    const char *t;
    size_t n;
    an_text_ranges *out;
} masker;

/* comment [s, e): blanked, recorded */
static void comment(masker *k, size_t s, size_t e) {
    for (size_t i = s; i < e; i++)
        if (k->m[i] != '\n' && k->m[i] != '\r') k->m[i] = ' ';
    if (k->out) {
        an_text_range r = {(uint32_t)s, (uint32_t)e};
        ut_vec_push(k->out, r);
    }
}

static size_t eol(const masker *k, size_t i) {
    while (i < k->n && k->t[i] != '\n') i++;
    return i;
}

static size_t line_start(const masker *k, size_t i) {
    while (i > 0 && k->t[i - 1] != '\n') i--;
    return i;
}

static bool only_space_before(const masker *k, size_t i) {
    for (size_t j = line_start(k, i); j < i; j++)
        if (k->t[j] != ' ' && k->t[j] != '\t') return false;
    return true;
}

/* Shell: `#` starts a comment at the start of a word, outside quotes. */
static void mask_shell_line(masker *k, size_t i, size_t end, char *quote) {
    for (; i < end; i++) {
        char ch = k->t[i];
        if (*quote) {
            if (ch == '\\' && *quote == '"') { i++; continue; }
            if (ch == *quote) *quote = 0;
            continue;
        }
        if (ch == '\\') { i++; continue; }
        if (ch == '\'' || ch == '"') { *quote = ch; continue; }
        if (ch == '#') {
            char p = i ? k->t[i - 1] : '\n';
            if (p == ' ' || p == '\t' || p == '\n' || p == ';' || p == '&' || p == '|' || p == '(' || p == '\r') {
                comment(k, i, end);
                return;
            }
        }
    }
}

static void mask_shell(masker *k) {
    char quote = 0;
    for (size_t i = 0; i < k->n;) {
        size_t e = eol(k, i);
        mask_shell_line(k, i, e, &quote);
        i = e + 1;
    }
}

/* Dockerfile: a line whose first character is `#` is a comment; RUN lines follow shell rules. */
static void mask_docker(masker *k) {
    char quote = 0;
    for (size_t i = 0; i < k->n;) {
        size_t e = eol(k, i), s = i;
        while (s < e && (k->t[s] == ' ' || k->t[s] == '\t')) s++;
        if (s < e && k->t[s] == '#') {
            comment(k, s, e);
            quote = 0;
        } else {
            mask_shell_line(k, s, e, &quote);
            /* a backslash before the line end (CR LF or LF) continues the RUN line; a line of a lone CR has none
             * (looking one byte before it read before the buffer on a file opening with an empty CRLF line) */
            size_t last = e > s && k->t[e - 1] == '\r' ? e - 1 : e;
            if (!(last > s && k->t[last - 1] == '\\')) quote = 0;
        }
        i = e + 1;
    }
}

/* YAML: `#` at a line start or after white space, outside a quoted scalar (which opens only where a scalar can). */
static void mask_yaml(masker *k) {
    for (size_t i = 0; i < k->n;) {
        size_t e = eol(k, i);
        char quote = 0;
        char prev = 0; /* last non-space character before i on this line */
        for (size_t j = i; j < e; j++) {
            char ch = k->t[j];
            if (quote) {
                if (quote == '"' && ch == '\\') { j++; continue; }
                if (ch == quote) {
                    if (quote == '\'' && j + 1 < e && k->t[j + 1] == '\'') { j++; continue; }
                    quote = 0;
                }
                continue;
            }
            if ((ch == '"' || ch == '\'') && (!prev || strchr(":-[{,?", prev))) { quote = ch; continue; }
            if (ch == '#' && (j == i || k->t[j - 1] == ' ' || k->t[j - 1] == '\t')) { comment(k, j, e); break; }
            if (ch != ' ' && ch != '\t') prev = ch;
        }
        i = e + 1;
    }
}

/* TOML: `#` outside basic, literal and multi-line strings. */
static void mask_toml(masker *k) {
    const char *t = k->t;
    int str = 0; /* 0 none, 1 ", 2 ', 3 """, 4 ''' */
    for (size_t i = 0; i < k->n; i++) {
        char ch = t[i];
        if (str) {
            if ((str == 1 || str == 3) && ch == '\\') { i++; continue; }
            if (str == 1 && (ch == '"' || ch == '\n')) str = 0;
            else if (str == 2 && (ch == '\'' || ch == '\n')) str = 0;
            else if (str == 3 && i + 2 < k->n && !memcmp(t + i, "\"\"\"", 3)) str = 0, i += 2;
            else if (str == 4 && i + 2 < k->n && !memcmp(t + i, "'''", 3)) str = 0, i += 2;
            continue;
        }
        if (i + 2 < k->n && !memcmp(t + i, "\"\"\"", 3)) { str = 3; i += 2; continue; }
        if (i + 2 < k->n && !memcmp(t + i, "'''", 3)) { str = 4; i += 2; continue; }
        if (ch == '"') { str = 1; continue; }
        if (ch == '\'') { str = 2; continue; }
        if (ch == '#') {
            size_t e = eol(k, i);
            comment(k, i, e);
            i = e;
        }
    }
}

/* INI/cfg: whole-line comments (`#` or `;` first on the line), as configparser reads them. */
static void mask_ini(masker *k) {
    for (size_t i = 0; i < k->n;) {
        size_t e = eol(k, i), s = i;
        while (s < e && (k->t[s] == ' ' || k->t[s] == '\t')) s++;
        if (s < e && (k->t[s] == '#' || k->t[s] == ';')) comment(k, s, e);
        i = e + 1;
    }
}

/* requirements: `#` at a line start or after white space (pip); `#egg=` inside a URL is not one. */
static void mask_requirements(masker *k) {
    for (size_t i = 0; i < k->n;) {
        size_t e = eol(k, i);
        for (size_t j = i; j < e; j++)
            if (k->t[j] == '#' && (j == i || k->t[j - 1] == ' ' || k->t[j - 1] == '\t')) {
                comment(k, j, e);
                break;
            }
        i = e + 1;
    }
}

/* CMake: `#` outside quoted and bracket arguments; `#[[ ... ]]` (with = signs) bracket comments. */
static size_t bracket_close(const masker *k, size_t open, size_t *eq) {
    /* open points at `[`; returns the offset after the closing `]=*]`, or n */
    size_t j = open + 1;
    *eq = 0;
    while (j < k->n && k->t[j] == '=') (*eq)++, j++;
    if (j >= k->n || k->t[j] != '[') return 0;
    for (size_t p = j + 1; p < k->n; p++) {
        if (k->t[p] != ']') continue;
        size_t q = p + 1, c = 0;
        while (q < k->n && k->t[q] == '=') c++, q++;
        if (c == *eq && q < k->n && k->t[q] == ']') return q + 1;
    }
    return k->n;
}

static void mask_cmake(masker *k) {
    const char *t = k->t;
    for (size_t i = 0; i < k->n; i++) {
        char ch = t[i];
        if (ch == '"') {
            for (i++; i < k->n && t[i] != '"'; i++)
                if (t[i] == '\\') i++;
            continue;
        }
        if (ch == '[') {
            size_t eq, end = bracket_close(k, i, &eq);
            if (end) { i = end - 1; continue; }
        }
        if (ch == '#') {
            size_t eq, end = i + 1 < k->n && t[i + 1] == '[' ? bracket_close(k, i + 1, &eq) : 0;
            if (!end) end = eol(k, i);
            comment(k, i, end);
            i = end - (end > i);
        }
    }
}

/* make: `#` not escaped by a backslash; recipe lines (tab first) are shell. */
static void mask_make(masker *k) {
    for (size_t i = 0; i < k->n;) {
        size_t e = eol(k, i);
        if (k->t[i] == '\t') {
            char q = 0;
            mask_shell_line(k, i, e, &q);
        } else {
            for (size_t j = i; j < e; j++) {
                if (k->t[j] == '\\') { j++; continue; }
                if (k->t[j] == '#') { comment(k, j, e); break; }
            }
        }
        i = e + 1;
    }
}

static void mask_other(masker *k) {
    for (size_t i = 0; i < k->n;) {
        size_t e = eol(k, i), s = i;
        while (s < e && (k->t[s] == ' ' || k->t[s] == '\t')) s++;
        if (s < e && k->t[s] == '#' && only_space_before(k, s)) comment(k, s, e);
        i = e + 1;
    }
}

char *an_text_mask(an_text_kind kind, const char *text, size_t len, an_text_ranges *comments) {
    masker k = {ut_strndup(text, len), text, len, comments};
    switch (kind) {
    case AN_TEXT_SHELL: mask_shell(&k); break;
    case AN_TEXT_DOCKER: mask_docker(&k); break;
    case AN_TEXT_YAML: mask_yaml(&k); break;
    case AN_TEXT_TOML: mask_toml(&k); break;
    case AN_TEXT_INI: mask_ini(&k); break;
    case AN_TEXT_REQUIREMENTS: mask_requirements(&k); break;
    case AN_TEXT_CMAKE: mask_cmake(&k); break;
    case AN_TEXT_MAKE: mask_make(&k); break;
    default: mask_other(&k); break;
    }
    return k.m;
}

static bool rule_reads(const an_rule *r, const char *path) {
    if (!r->files.len) return true;
    for (size_t i = 0; i < r->files.len; i++)
        if (an_path_matches_glob(path, r->files.items[i])) return true;
    return false;
}

static char *squeeze(const char *s, size_t n, size_t max) {
    ut_buf b;
    ut_buf_init(&b);
    bool sp = false;
    for (size_t i = 0; i < n && b.len < max; i++) {
        if (isspace((unsigned char)s[i])) { sp = b.len > 0; continue; }
        if (sp) ut_buf_putc(&b, ' ');
        sp = false;
        ut_buf_putc(&b, s[i]);
    }
    if (b.len >= max) {
        /* never cut a character in two: the message must stay UTF-8 (found by fuzz/fz_text) */
        size_t j = b.len;
        while (j > 0 && ((unsigned char)b.data[j - 1] & 0xC0) == 0x80) j--;
        if (j > 0) {
            unsigned char lead = (unsigned char)b.data[j - 1];
            size_t want = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
            if (b.len - (j - 1) < want) b.len = j - 1;
        }
        ut_buf_puts(&b, "...");
    }
    return ut_buf_take(&b);
}

/* [s, e) on its line lies inside a quoted string of a shell line that installs nothing: test data, an argument of
 * printf or an assertion, not a requirement */
static bool quoted_outside_install(const char *t, size_t len, size_t s) {
    size_t ls = s, le = s;
    while (ls > 0 && t[ls - 1] != '\n') ls--;
    while (le < len && t[le] != '\n') le++;
    char q = 0;
    for (size_t i = ls; i < s; i++) {
        if (q) {
            if (t[i] == '\\' && q == '"') i++;
            else if (t[i] == q) q = 0;
        } else if (t[i] == '"' || t[i] == '\'') {
            q = t[i];
        }
    }
    if (!q) return false;
    static const char *const installs[] = {"pip install", "pip3 install", "uv pip", "uv add", "uv sync", "conda install",
                                           "mamba install", "-index-url", "--find-links", "-f https", NULL};
    for (int i = 0; installs[i]; i++)
        if (memmem(t + ls, le - ls, installs[i], strlen(installs[i]))) return false;
    return true;
}

/* The group a match belongs to for once_per_group rules: in TOML, the line of the key (or table header) whose
 * value holds it (an extra's array spans lines); elsewhere, the file. */
static size_t group_of(an_text_kind kind, const char *t, size_t s) {
    if (kind != AN_TEXT_TOML) return 0;
    size_t ls = s;
    while (ls > 0 && t[ls - 1] != '\n') ls--;
    for (;;) {
        size_t i = ls;
        while (t[i] == ' ' || t[i] == '\t') i++;
        if (isalpha((unsigned char)t[i]) || t[i] == '_' || t[i] == '[') return ls;
        if (ls == 0) return 0;
        ls--;
        while (ls > 0 && t[ls - 1] != '\n') ls--;
    }
}

/* once_per_group rules: the first finding of each group stays, its message counting the others */
static void keep_first_of_groups(an_text_kind kind, const char *t, an_diag_list *l, size_t from) {
    size_t n = l->len - from, w = from;
    size_t *groups = ut_malloc(n * sizeof *groups), *more = ut_calloc(n, sizeof *more);
    for (size_t i = from; i < l->len; i++) {
        size_t g = group_of(kind, t, l->items[i].start), k = 0;
        while (k < w - from && groups[k] != g) k++;
        if (k < w - from) {
            more[k]++;
            ut_free(l->items[i].message);
            continue;
        }
        groups[w - from] = g;
        l->items[w++] = l->items[i];
    }
    for (size_t k = 0; k < w - from; k++) {
        if (!more[k]) continue;
        an_diag *d = &l->items[from + k];
        ut_buf b;
        ut_buf_init(&b);
        ut_buf_printf(&b, "%s (and %zu more %s)", d->message, more[k], kind == AN_TEXT_TOML ? "under this key" : "in this file");
        ut_free(d->message);
        d->message = ut_buf_take(&b);
    }
    ut_free(groups), ut_free(more);
    l->len = w;
}

void an_text_analyze(const an_catalog *cat, const an_source *src, const bool *en, an_diag_list *out, char **why) {
    an_text_kind kind = an_text_kind_for_path(src->path);
    an_text_ranges comments = {0};
    char *masked = NULL;
    an_diag_list mine = {0};
    pcre2_match_data *md = NULL;
    for (size_t i = 0; i < an_catalog_count(cat); i++) {
        const an_rule *r = an_catalog_rule(cat, i);
        if (r->lang != AN_LANG_TEXT || !r->pattern || (en && !en[r->index]) || !rule_reads(r, src->path)) continue;
        const pcre2_code *re = an_catalog_pattern(cat, r);
        if (!re) continue;
        if (!masked) masked = an_text_mask(kind, src->text, src->len, &comments);
        if (!md) md = pcre2_match_data_create(16, NULL);
        int g = pcre2_substring_number_from_name(re, (PCRE2_SPTR) "report");
        uint32_t grp = g > 0 ? (uint32_t)g : 0;
        PCRE2_SIZE at = src->body;
        size_t first = mine.len;
        while (at <= src->len) {
            int rc = pcre2_match(re, (PCRE2_SPTR)masked, src->len, at, PCRE2_NO_UTF_CHECK, md, NULL);
            if (rc < PCRE2_ERROR_NOMATCH && why && !*why) *why = an_rule_match_error(r, rc, at);
            if (rc < 0) break;
            PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
            PCRE2_SIZE s = ov[2 * grp], e = ov[2 * grp + 1];
            if (s == PCRE2_UNSET) s = ov[0], e = ov[1];
            if (r->install_strings_only && kind == AN_TEXT_SHELL && quoted_outside_install(src->text, src->len, s)) {
                at = ov[1] > ov[0] ? ov[1] : ov[0] + 1;
                continue;
            }
            char *txt = squeeze(src->text + s, e - s, 60);
            an_message_vars v = {NULL, NULL, NULL, txt, NULL};
            an_diag d = {0};
            d.rule = r;
            d.origin = AN_ORIGIN_QUERY;
            d.start = (uint32_t)s, d.end = (uint32_t)e;
            d.message = an_message_format(r->message, &v);
            ut_free(txt);
            ut_vec_push(&mine, d);
            at = ov[1] > ov[0] ? ov[1] : ov[0] + 1;
        }
        if (r->once_per_group && mine.len - first > 1) keep_first_of_groups(kind, src->text, &mine, first);
    }
    if (md) pcre2_match_data_free(md);
    /* suppression comments: `# xpuify: ignore[...]` (`;` in INI files) */
    an_suppressions sup = {0};
    for (size_t i = 0; i < comments.len; i++) {
        uint32_t s = comments.items[i].start, e = comments.items[i].end;
        if (e - s > 8 && memmem(src->text + s, e - s, "xpuify:", 7))
            an_suppress_add_comment(&sup, src, s, e, src->text[s] == ';' ? ";" : "#");
    }
    an_suppress_finish(&sup, src, NULL);
    for (size_t i = 0; i < mine.len; i++) {
        an_diag *d = &mine.items[i];
        an_diag_locate(d, src);
        if (sup.items.len && an_suppress_hides(&sup, d)) {
            ut_free(d->message);
            continue;
        }
        ut_vec_push(out, *d);
    }
    an_suppress_free(&sup);
    an_diag_list_sort(out);
    ut_vec_free(&mine);
    ut_vec_free(&comments);
    ut_free(masked);
}
