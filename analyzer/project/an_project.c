/* an_project: the project model (see an_project.h): the scan, the ways each file is imported, helper placement. */
#include "analyzer/project/an_project.h"
#include "analyzer/project/an_pystdlib.h"
#include "util/ut_find.h"
#include "analyzer/core/an_cache.h"
#include "analyzer/core/an_engine.h"
#include "util/ut_buf.h"
#include "util/ut_hash.h"
#include "util/ut_mem.h"
#include "util/ut_smap.h"
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- a string set / map (open addressing) ------------------------------------------------------------------ */

typedef struct {
    char *key; /* the map's copy of the key */
    unsigned flags;
    char *tops; /* files: ",a,b," the top-level names the file imports absolutely; names: the directories of
                 * the files that import it ("\n"-separated, each once) */
    char *common; /* names: the deepest directory above every importer */
    size_t tlen, tcap; /* names: tops' length and capacity */
} slot;

typedef ut_smap smap; /* key -> slot (val) */

static slot *smap_find(const smap *m, const char *k, size_t n) {
    ut_smap_slot *s = ut_smap_find(m, k, n);
    return s ? s->val : NULL;
}

/* the slot of k[0..n), made empty (its key the map's copy) if absent; it stays where it is as the map grows */
static slot *smap_put(smap *m, const char *k, size_t n) {
    ut_smap_slot *s = ut_smap_put(m, k, n, NULL);
    if (!s->val) {
        slot *x = ut_calloc(1, sizeof *x);
        x->key = s->key;
        s->val = x;
    }
    return s->val;
}

static void slot_free(void *v) {
    slot *x = v;
    ut_free(x->tops), ut_free(x->common), ut_free(x);
}

static void smap_free(smap *m) { ut_smap_free(m, slot_free); }

/* ---- the model ------------------------------------------------------------------------------------------------ */

enum {
    F_MAIN = 1,       /* `if __name__ == "__main__":` */
    F_SHEBANG = 2,    /* #! first line */
    F_RELATIVE = 4,   /* uses relative imports itself */
    F_ASSIGNS = 8,    /* its top level holds only assignments, imports, comments and docstrings */
};

typedef struct summary summary;
typedef struct {
    char *rel, *res; /* the file's path from the root; where its absolute imports resolve from (see walk) */
    an_stamp st;     /* its stamp when the walk saw it */
    const summary *sum;
} pending;

struct an_project {
    char *root;     /* absolute, no trailing slash */
    smap names;     /* dotted names the project imports absolutely, and every prefix of them */
    smap files;     /* path relative to root -> flags, tops */
    smap main_dirs; /* directories (relative) holding a file with a __main__ block or a shebang */
    smap pairs;     /* "directory\x01name": the importers already noted in names' tops */
    size_t nfiles;
    UT_VEC(pending) todo; /* the walk's .py files, in its order, until their summaries are replayed */
    char pkg_root[256]; /* the packaging metadata's package directory ("src" by default), relative to root */
    int max_depth;      /* how deep the walk goes below root (0: the root directory only) */
    smap comps;         /* every directory name and .py file stem of the project: its own module names */
    uint64_t comps_hash; /* the sum of their hashes (an order-free hash of the set) */
    char *cuda_unlike;  /* "path:line" of the first class whose own `cuda` method `.to()` may not replace */
    bool cuda_ext;      /* its setup.py builds a CUDA extension (CUDAExtension): compiled ops with CPU/CUDA kernels */
    smap cuda_exts;     /* the module names (dotted, as built) of the extensions any setup.py of it builds with CUDA */
    uint64_t cuda_exts_hash;
};

const char *an_project_root(const an_project *p) { return p->root; }
size_t an_project_file_count(const an_project *p) { return p->nfiles; }

static bool ident_start(char c) { return isalpha((unsigned char)c) || c == '_' || (unsigned char)c >= 0x80; }
static bool ident_char(char c) { return isalnum((unsigned char)c) || c == '_' || (unsigned char)c >= 0x80; }

/* What the scan of one file records, whatever the project root: the names it notes (each once, in order; replayed
 * into the model with the directory its imports resolve from) beside its flags and top-level imports (slot f). */
typedef struct {
    smap seen;
    ut_buf names; /* each name '\n'-terminated */
} scan_out;

static void note(scan_out *o, const char *s, size_t n) {
    slot *sl = smap_put(&o->seen, s, n);
    if (sl->flags) return;
    sl->flags = 1;
    ut_buf_append(&o->names, s, n);
    ut_buf_putc(&o->names, '\n');
}

static void note_importer(smap *pairs, slot *sl, const char *dir) {
    if (!sl->common) {
        sl->common = ut_strdup(dir);
    } else {
        /* the longest common prefix that ends at a path boundary of both */
        size_t k = 0, last = 0;
        for (;;) {
            char x = sl->common[k], y = dir[k];
            if ((x == 0 || x == '/') && (y == 0 || y == '/')) {
                last = k;
                if (!x || !y) break;
            }
            if (x != y || !x) break;
            k++;
        }
        sl->common[last] = 0;
    }
    /* each directory once per name: a set of the pairs seen, and the list grown in place (a name such as `torch`
     * is imported from thousands of directories); the files of one directory come together, so the last one
     * noted answers most */
    size_t dl = strlen(dir), nl = strlen(sl->key);
    if (sl->tlen > dl + 1 && sl->tops[sl->tlen - dl - 2] == '\n' && !memcmp(sl->tops + sl->tlen - dl - 1, dir, dl)) return;
    if (sl->tlen == dl + 1 && !memcmp(sl->tops, dir, dl)) return;
    char stack[1024], *k = dl + nl + 2 <= sizeof stack ? stack : ut_malloc(dl + nl + 2);
    memcpy(k, dir, dl);
    k[dl] = '\x01';
    memcpy(k + dl + 1, sl->key, nl);
    slot *seen = smap_put(pairs, k, dl + nl + 1);
    if (k != stack) ut_free(k);
    if (seen->flags) return;
    seen->flags = 1;
    if (sl->tlen + dl + 2 > sl->tcap) {
        sl->tcap = (sl->tlen + dl + 2) * 2;
        sl->tops = ut_realloc(sl->tops, sl->tcap);
    }
    memcpy(sl->tops + sl->tlen, dir, dl);
    sl->tlen += dl;
    sl->tops[sl->tlen++] = '\n';
    sl->tops[sl->tlen] = 0;
}

static void add_name(scan_out *p, const char *s, size_t n) {
    if (!n) return;
    for (size_t i = 0; i <= n; i++)
        if (i == n || s[i] == '.') note(p, s, i);
}

/* a dotted name at *q (advanced past it); 0 when there is none */
static size_t dotted(const char **q, const char *e) {
    const char *s = *q;
    while (s < e && (*s == ' ' || *s == '\t')) s++;
    const char *b = s;
    while (s < e && (ident_char(*s) || (*s == '.' && s > b && s + 1 < e && ident_start(s[1])))) s++;
    if (s == b || !ident_start(*b)) { *q = b; return 0; }
    *q = s;
    return (size_t)(s - b);
}

static void add_top(slot *f, const char *s, size_t n) {
    size_t t = 0;
    while (t < n && s[t] != '.') t++;
    char key[256];
    if (t + 3 > sizeof key) return;
    key[0] = ',';
    memcpy(key + 1, s, t);
    key[t + 1] = ',', key[t + 2] = 0;
    if (f->tops && strstr(f->tops, key)) return;
    ut_buf b;
    ut_buf_init(&b);
    ut_buf_puts(&b, f->tops ? f->tops : ",");
    ut_buf_append(&b, key + 1, t + 1);
    ut_free(f->tops);
    f->tops = ut_buf_take(&b);
}

static bool word_at(const char *s, const char *e, const char *w) {
    size_t n = strlen(w);
    return (size_t)(e - s) >= n && !memcmp(s, w, n) && (s + n == e || !ident_char(s[n]));
}

/* One import line (from its first non-blank byte to the end of the line; continued into following lines when a
 * parenthesis opens the imported names). */
static const char *scan_import(scan_out *p, slot *f, const char *s, const char *end, bool top) {
    const char *e = memchr(s, '\n', (size_t)(end - s));
    if (!e) e = end;
    if (word_at(s, e, "import")) {
        const char *q = s + 6;
        for (;;) {
            const char *b = q;
            size_t n = dotted(&q, e);
            if (!n) break;
            b = q - n;
            add_name(p, b, n);
            if (top) add_top(f, b, n);
            while (q < e && *q != ',' && *q != '#' && *q != ';') q++;
            if (q >= e || *q != ',') break;
            q++;
        }
        return e;
    }
    if (!word_at(s, e, "from")) return e;
    const char *q = s + 4;
    while (q < e && (*q == ' ' || *q == '\t')) q++;
    if (q < e && *q == '.') { f->flags |= F_RELATIVE; return e; }
    size_t n = dotted(&q, e);
    if (!n) return e;
    const char *mod = q - n;
    add_name(p, mod, n);
    if (top) add_top(f, mod, n);
    while (q < e && (*q == ' ' || *q == '\t')) q++;
    if (!word_at(q, e, "import")) return e;
    q += 6;
    while (q < e && (*q == ' ' || *q == '\t')) q++;
    bool paren = q < e && *q == '(';
    if (paren) e = memchr(q, ')', (size_t)(end - q)) ? memchr(q, ')', (size_t)(end - q)) : end, q++;
    /* `from a.b import c, d`: a.b.c and a.b.d may be submodules */
    char buf[512];
    while (q < e) {
        while (q < e && !ident_start(*q) && *q != '#') q++;
        if (q >= e || *q == '#') break;
        const char *b = q;
        while (q < e && ident_char(*q)) q++;
        if (n + 1 + (size_t)(q - b) < sizeof buf) {
            memcpy(buf, mod, n);
            buf[n] = '.';
            memcpy(buf + n + 1, b, (size_t)(q - b));
            note(p, buf, n + 1 + (size_t)(q - b));
        }
        while (q < e && (*q == ' ' || *q == '\t')) q++;
        if (word_at(q, e, "as")) { /* skip the alias */
            q += 2;
            while (q < e && (*q == ' ' || *q == '\t')) q++;
            while (q < e && ident_char(*q)) q++;
        }
        while (q < e && *q != ',' && *q != '\n' && *q != '#') q++;
        if (q < e && *q == '#') { const char *nl = memchr(q, '\n', (size_t)(e - q)); q = nl ? nl : e; }
        if (q < e) q++;
    }
    return e;
}

/* `importlib.import_module("a.b")` with a literal name */
static void scan_import_module(scan_out *p, const char *s, const char *end) {
    for (const char *q = s; (q = ut_memmem(q, (size_t)(end - q), "import_module(", 14));) {
        q += 14;
        if (q < end && (*q == '"' || *q == '\'')) {
            const char *b = ++q;
            while (q < end && (ident_char(*q) || *q == '.')) q++;
            if (q < end && q[0] == b[-1] && q > b && b[0] != '.') add_name(p, b, (size_t)(q - b));
        }
    }
}

/* Is a top-level statement starting at s (column 0) one a config file may hold? */
static bool config_statement(const char *s, const char *e) {
    if (s >= e || *s == '#' || *s == '\n' || *s == '\r') return true;
    if (*s == '"' || *s == '\'' || *s == ')' || *s == ']' || *s == '}') return true; /* docstring, closers */
    if (word_at(s, e, "import") || word_at(s, e, "from")) return true;
    if (!ident_start(*s)) return false;
    const char *q = s;
    while (q < e && (ident_char(*q) || *q == '.' || *q == ' ' || *q == ',' || *q == '[' || *q == ']' || *q == '\'' || *q == '"'))
        q++;
    if (q < e && *q == ':') { /* an annotated assignment */
        while (q < e && *q != '=' && *q != '\n') q++;
    }
    static const char *const kw[] = {"if", "for", "while", "with", "def", "class", "try", "async", "assert", "del",
                                     "print", "raise", "return", "global", NULL};
    for (int i = 0; kw[i]; i++)
        if (word_at(s, e, kw[i])) return false;
    return q < e && (*q == '=' && q[1] != '=') ? true : (q + 1 < e && strchr("+-*/|&", *q) && q[1] == '=');
}

static void scan_full(scan_out *p, slot *f, const char *text, const char *end);

static bool in_config_dir(const char *rel) {
    for (const char *q = rel; (q = strstr(q, "onfig")); q++) {
        if (q == rel || (q[-1] != 'c' && q[-1] != 'C') || (q - 1 != rel && q[-2] != '/')) continue;
        if (q[5] == '/' || (q[5] == 's' && q[6] == '/')) return true;
    }
    return false;
}

/* The lines that can import (those holding "import") and the `if __name__ == "__main__":` line, found with memmem:
 * most of a file is never looked at (a word in a docstring may add a name: harmless, names only deepen roots). */
static void scan_fast(scan_out *p, slot *f, const char *text, const char *end) {
    const char *done = text; /* lines before this were scanned */
    for (const char *q = text; q < end && (q = ut_memmem(q, (size_t)(end - q), "import", 6)); q += 6) {
        if (q < done) continue;
        const char *ls = q;
        while (ls > text && ls[-1] != '\n') ls--;
        const char *b = ls;
        while (b < q && (*b == ' ' || *b == '\t')) b++;
        if (*b != 'i' && *b != 'f') continue;
        done = scan_import(p, f, b, end, b == ls);
    }
}

static size_t indent_of(const char *ls, const char *end) {
    const char *b = ls;
    while (b < end && (*b == ' ' || *b == '\t')) b++;
    return (size_t)(b - ls);
}

/* A statement of a `cuda` method's body that `.to()` also does: `self.x.cuda()`, `super().cuda(...)` (possibly
 * returned), `return self`, a docstring or a comment. */
static bool delegating_line(const char *b, const char *e) {
    while (e > b && (e[-1] == ' ' || e[-1] == '\r' || e[-1] == '\t')) e--;
    if (b == e || *b == '#' || *b == '"' || *b == '\'') return true;
    if (e - b == 11 && !memcmp(b, "return self", 11)) return true;
    if (e - b > 7 && !memcmp(b, "return ", 7)) b += 7;
    if (e - b > 14 && !memcmp(b, "super().cuda(", 13) && e[-1] == ')') return true;
    /* `self.x.cuda()`, or as xpuify rewrote it, `self.x.to(DEV)` */
    if (e - b < 12 || memcmp(b, "self.", 5) || e[-1] != ')') return false;
    const char *q = b;
    while (q < e && (ident_char(*q) || *q == '.')) q++;
    return (e - q == 2 && !memcmp(q - 5, ".cuda", 5)) || (q - b > 8 && !memcmp(q - 3, ".to", 3) && *q == '(');
}

/* Each `def cuda(` of a class: the method only moves what `.to()` moves too; else the first such line is returned (an
 * object of that class may mean more by `.cuda()` than `.to(DEV)`, even where the class also defines `to`: Lightning's
 * device mixin records the device index that `.cuda()` picked, diffusers' models check quantization first). */
static uint32_t cuda_unlike_line(const char *text, const char *end) {
    for (const char *q = text; q < end && (q = ut_memmem(q, (size_t)(end - q), "def cuda(", 9)); q += 9) {
        const char *ls = q;
        while (ls > text && ls[-1] != '\n') ls--;
        size_t din = indent_of(ls, end);
        if (ls + din != q || din == 0) continue; /* a module-level function is no method */
        /* the class: the nearest line above indented less */
        const char *cls = NULL;
        size_t cin = 0;
        for (const char *l = ls; l > text;) {
            const char *pl = l - 1;
            while (pl > text && pl[-1] != '\n') pl--;
            l = pl;
            size_t in = indent_of(pl, end);
            char c = pl[in];
            if (c == '\n' || c == '\r' || c == '#' || in >= din) continue;
            if (!strncmp(pl + in, "class ", 6)) cls = pl, cin = in;
            break;
        }
        if (!cls) continue;
        /* the method body: only delegation? */
        bool delegates = true, in_method = false;
        for (const char *l = cls; l < end;) {
            const char *le = memchr(l, '\n', (size_t)(end - l));
            if (!le) le = end;
            size_t in = indent_of(l, le);
            bool blank = l + in >= le || l[in] == '\r' || l[in] == '#';
            if (l != cls && !blank && in <= cin) break;
            if (!blank && in == din) {
                in_method = l == ls;
            } else if (!blank && in > din && in_method && !delegating_line(l + in, le)) {
                delegates = false;
            }
            l = le + 1;
        }
        if (delegates) continue;
        uint32_t line = 1;
        for (const char *c = text; c < q; c++) line += *c == '\n';
        return line;
    }
    return 0;
}

/* ---- per-file summaries ------------------------------------------------------------------------------------- */

/* What the model takes from one file: its flags, its top-level imports and the names it notes. It depends on the
 * file's bytes and on whether it lies under a configs/ directory (read statement by statement) alone, so it is kept
 * per file under the file's stamp: in memory for the run (several models read the same files: a project inside a
 * tree that is itself a project) and in the results cache between runs (an_project_use_cache), so that a run over
 * an unchanged tree reads no file to build the model. */
struct summary {
    unsigned flags;
    bool own_dir; /* its absolute imports resolve from its own directory (a __main__ block or a shebang) */
    char *tops;   /* ",a,b," or NULL */
    char *names;  /* the names it notes, each '\n'-terminated ("" when none) */
    size_t names_len;
    uint32_t cuda_line; /* the line of its first `cuda` method that `.to()` may not replace (0: none) */
};

static summary *summarize(const char *text, size_t len, bool full) {
    slot f = {0};
    scan_out o;
    memset(&o, 0, sizeof o);
    ut_buf_init(&o.names);
    const char *end = text + len;
    if (len > 2 && text[0] == '#' && text[1] == '!') f.flags |= F_SHEBANG;
    for (const char *q = text; q < end && (q = ut_memmem(q, (size_t)(end - q), "__main__", 8)); q += 8) {
        const char *ls = q;
        while (ls > text && ls[-1] != '\n') ls--;
        if (word_at(ls, q, "if")) { f.flags |= F_MAIN; break; }
    }
    summary *m = ut_calloc(1, sizeof *m);
    /* a script resolves its imports from its own directory (sys.path[0]), even inside a package */
    m->own_dir = (f.flags & (F_MAIN | F_SHEBANG)) != 0;
    if (!full) scan_fast(&o, &f, text, end);
    else scan_full(&o, &f, text, end);
    scan_import_module(&o, text, end);
    m->flags = f.flags;
    m->cuda_line = cuda_unlike_line(text, end);
    m->tops = f.tops;
    m->names_len = o.names.len;
    m->names = o.names.len ? ut_buf_take(&o.names) : ut_strdup("");
    ut_buf_free(&o.names);
    smap_free(&o.seen);
    return m;
}

/* serialized (the cache kinds "project2-f"/"project2-c" name this encoding: a new encoding takes new kinds, so an
 * old cache is never read as it): u32 flags | u8 own_dir | u32 cuda_line | u32 tops length (~0: none) | tops | names */
static void summary_encode(const summary *m, ut_buf *b) {
    uint32_t v = m->flags;
    ut_buf_append(b, (const char *)&v, 4);
    ut_buf_putc(b, (char)m->own_dir);
    ut_buf_append(b, (const char *)&m->cuda_line, 4);
    v = m->tops ? (uint32_t)strlen(m->tops) : UINT32_MAX;
    ut_buf_append(b, (const char *)&v, 4);
    if (m->tops) ut_buf_puts(b, m->tops);
    ut_buf_append(b, m->names, m->names_len);
}

static summary *summary_decode(const uint8_t *b, size_t n) {
    if (n < 13) return NULL;
    uint32_t flags, cl, tl;
    memcpy(&flags, b, 4);
    memcpy(&cl, b + 5, 4);
    memcpy(&tl, b + 9, 4);
    if (b[4] > 1 || flags > 15 || (tl != UINT32_MAX && tl > n - 13)) return NULL;
    size_t off = 13 + (tl == UINT32_MAX ? 0 : tl);
    if (off != n && b[n - 1] != '\n') return NULL;
    for (size_t i = 13; i < n; i++)
        if (!b[i]) return NULL;
    summary *m = ut_calloc(1, sizeof *m);
    m->flags = flags;
    m->own_dir = b[4];
    m->cuda_line = cl;
    m->tops = tl == UINT32_MAX ? NULL : ut_strndup((const char *)b + 13, tl);
    m->names = ut_strndup((const char *)b + off, n - off);
    m->names_len = n - off;
    return m;
}

static void summary_free(summary *m) {
    if (!m) return;
    ut_free(m->tops);
    ut_free(m->names);
    ut_free(m);
}

/* the summaries of this process: 'f' or 'c' (under configs/) then the absolute path -> the summary and the stamp it
 * was read under. Replaced ones are kept until an_project_refresh (a model being built may hold one). */
typedef struct {
    an_stamp st;
    int64_t read_ns; /* when it was read: a stamp as recent as that is not trusted (a write in the same tick) */
    summary *sum;
} memo_ent;
static struct {
    ut_smap m; /* key -> memo_ent (val) */
    UT_VEC(summary *) old;
} sums;
static pthread_mutex_t sums_lock = PTHREAD_MUTEX_INITIALIZER;
/* the language server's open buffers: their text stands for the file (an_project_overlay) */
typedef struct {
    char *path; /* absolute, as the walk names it */
    summary *fast, *cfg;
    char *text; /* the buffer's text (an_project_overlay_text) */
    size_t len;
} overlay;
static UT_VEC(overlay) overlays;
static bool abs_file(const char *file, char *out, size_t sz);
static struct an_cache *sums_cache; /* an_project_use_cache */
/* the results cache's racy margin: file systems' timestamps tick at up to 2 s */
#define RACY_NS (3LL * 1000000000)

void an_project_use_cache(struct an_cache *c) {
    pthread_mutex_lock(&sums_lock);
    sums_cache = c;
    pthread_mutex_unlock(&sums_lock);
}

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static const summary *memo_get(const char *key, const an_stamp *st) {
    const summary *r = NULL;
    pthread_mutex_lock(&sums_lock);
    const ut_smap_slot *x = ut_smap_find(&sums.m, key, strlen(key));
    if (x) {
        const memo_ent *e = x->val;
        if (an_stamp_eq(&e->st, st) && st->mtime_ns < e->read_ns - RACY_NS && st->ctime_ns < e->read_ns - RACY_NS)
            r = e->sum;
    }
    pthread_mutex_unlock(&sums_lock);
    return r;
}

static void memo_put(const char *key, const an_stamp *st, int64_t read_ns, summary *m) {
    pthread_mutex_lock(&sums_lock);
    ut_smap_slot *x = ut_smap_put(&sums.m, key, strlen(key), NULL);
    memo_ent *e = x->val;
    if (!e) e = x->val = ut_calloc(1, sizeof *e);
    else ut_vec_push(&sums.old, e->sum);
    e->st = *st;
    e->read_ns = read_ns;
    e->sum = m;
    pthread_mutex_unlock(&sums_lock);
}

/* what snprintf(out, sz, "%s%s%s", a, b, c) writes and answers, without its format machinery (the model builds a
 * path this way for every file and directory it visits: glibc's snprintf cost ~1,000 instructions a path) */
static size_t join3(char *out, size_t sz, const char *a, const char *b, const char *c) {
    size_t o = 0, total = 0;
    const char *parts[3] = {a, b, c};
    for (int i = 0; i < 3; i++) {
        size_t n = strlen(parts[i]);
        total += n;
        if (sz && o < sz - 1) {
            size_t take = n < sz - 1 - o ? n : sz - 1 - o;
            memcpy(out + o, parts[i], take);
            o += take;
        }
    }
    if (sz) out[o] = 0;
    return total;
}

/* The summary of the file at full (NULL when it cannot be read): from memory or the results cache while its stamp
 * is unchanged, else read (its first MiB: plenty for its imports) into buf. */
static const summary *summary_of(const char *full, const an_stamp *stp, bool cfg, char *buf) {
    char key[PATH_MAX + 8];
    snprintf(key, sizeof key, "%c%s", cfg ? 'c' : 'f', full);
    an_stamp st = *stp; /* taken before the read: a file changed since is read again next time */
    pthread_mutex_lock(&sums_lock);
    const summary *hit = NULL;
    for (size_t i = 0; i < overlays.len && !hit; i++)
        if (!strcmp(overlays.items[i].path, full)) hit = cfg ? overlays.items[i].cfg : overlays.items[i].fast;
    pthread_mutex_unlock(&sums_lock);
    if (!hit && st.valid) hit = memo_get(key, &st);
    if (hit) return hit;
    pthread_mutex_lock(&sums_lock);
    struct an_cache *c = sums_cache;
    pthread_mutex_unlock(&sums_lock);
    int64_t t = now_ns();
    uint8_t *blob;
    size_t bl;
    summary *m;
    if (c && st.valid && an_cache_side_get(c, cfg ? "project2-c" : "project2-f", full, &st, &blob, &bl)) {
        m = summary_decode(blob, bl);
        ut_free(blob);
        if (m) {
            memo_put(key, &st, INT64_MAX, m); /* the cache only keeps stamps older than its run's start */
            return m;
        }
    }
    FILE *fp = fopen(full, "rb");
    if (!fp) return NULL;
    size_t len = fread(buf, 1, 1u << 20, fp);
    fclose(fp);
    m = summarize(buf, len, cfg);
    if (!st.valid) { /* never found again: kept only for the model being built */
        pthread_mutex_lock(&sums_lock);
        ut_vec_push(&sums.old, m);
        pthread_mutex_unlock(&sums_lock);
        return m;
    }
    memo_put(key, &st, t, m);
    if (c) {
        ut_buf b;
        ut_buf_init(&b);
        summary_encode(m, &b);
        an_cache_side_put(c, cfg ? "project2-c" : "project2-f", full, &st, b.data ? b.data : "", b.len);
        ut_buf_free(&b);
    }
    return m;
}

/* A file's summary into the model: rel its path from the root, res where its absolute imports resolve from unless
 * it is a script (see walk). */
static void replay(an_project *p, const char *rel, const char *res, const summary *m) {
    slot *f = smap_put(&p->files, rel, strlen(rel));
    for (const char *c = rel; *c;) { /* its directory names and stem: names of the project's own modules */
        const char *e = strchr(c, '/');
        bool last = !e;
        if (last) e = c + strlen(c) - 3;
        if (e > c) {
            size_t before = p->comps.len;
            smap_put(&p->comps, c, (size_t)(e - c));
            if (p->comps.len != before) p->comps_hash += ut_fnv1a(UT_FNV_SEED, c, (size_t)(e - c)) * 0x9E3779B97F4A7C15ull + 1;
        }
        if (last) break;
        c = e + 1;
    }
    if (m->cuda_line && !p->cuda_unlike) {
        char buf[PATH_MAX + 32];
        snprintf(buf, sizeof buf, "%s:%u", rel, (unsigned)m->cuda_line);
        p->cuda_unlike = ut_strdup(buf);
    }
    f->flags = m->flags;
    ut_free(f->tops);
    f->tops = m->tops ? ut_strdup(m->tops) : NULL;
    char own[PATH_MAX];
    const char *sl = strrchr(rel, '/');
    snprintf(own, sizeof own, "%.*s", sl ? (int)(sl - rel) : 0, rel);
    const char *dir = m->own_dir ? own : res;
    for (const char *q = m->names, *e; (e = strchr(q, '\n')); q = e + 1)
        note_importer(&p->pairs, smap_put(&p->names, q, (size_t)(e - q)), dir);
    if (f->flags & (F_MAIN | F_SHEBANG)) smap_put(&p->main_dirs, rel, sl ? (size_t)(sl - rel) : 0);
    p->nfiles++;
}

/* Each line of text that starts outside a string and is no backslash continuation, with whether it starts a
 * statement (no bracket open either): strings, brackets and continuations tracked to each line's end. fn returns
 * false to stop. */
typedef bool (*line_fn)(void *ctx, const char *s, const char *e, bool stmt);
static void each_line(const char *text, const char *end, line_fn fn, void *ctx) {
    int depth = 0;
    char quote = 0;
    bool triple = false, cont = false;
    for (const char *s = text; s < end;) {
        /* s is at a line start */
        const char *e = memchr(s, '\n', (size_t)(end - s));
        if (!e) e = end;
        if (!quote && !cont && !fn(ctx, s, e, depth == 0)) return;
        /* track brackets and strings to the end of the line */
        cont = false;
        for (const char *q = s; q < e; q++) {
            char c = *q;
            if (quote) {
                if (c == '\\') { q++; continue; }
                if (c == quote && (!triple || (q + 2 < e && q[1] == quote && q[2] == quote))) {
                    if (triple) q += 2;
                    quote = 0;
                }
                continue;
            }
            if (c == '#') break;
            if (c == '"' || c == '\'') {
                quote = c;
                triple = q + 2 < e && q[1] == c && q[2] == c;
                if (triple) q += 2;
            } else if (c == '(' || c == '[' || c == '{') depth++;
            else if ((c == ')' || c == ']' || c == '}') && depth > 0) depth--;
            else if (c == '\\' && q + 1 >= e - (e > s && e[-1] == '\r')) cont = true;
        }
        if (quote && !triple) quote = 0; /* an unterminated one-line string ends with its line */
        s = e + 1;
    }
}

typedef struct {
    scan_out *p;
    slot *f;
    const char *end;
    bool assigns;
} full_scan;

static bool full_line(void *ctx, const char *s, const char *e, bool stmt) {
    full_scan *x = ctx;
    if (stmt) {
        if (x->assigns && !config_statement(s, e)) x->assigns = false;
        if (s[0] == 'i' && word_at(s, e, "if") && ut_memmem(s, (size_t)(e - s), "__main__", 8)) x->f->flags |= F_MAIN;
    }
    const char *b = s;
    while (b < e && (*b == ' ' || *b == '\t')) b++;
    if (*b == 'i' || *b == 'f') scan_import(x->p, x->f, b, x->end, stmt && b == s);
    return true;
}

/* Every line of a file under configs/: statement by statement (strings, brackets, continuations), to know whether
 * its top level holds only assignments (a config loaded by exec). */
static void scan_full(scan_out *p, slot *f, const char *text, const char *end) {
    full_scan x = {p, f, end, true};
    each_line(text, end, full_line, &x);
    if (x.assigns) f->flags |= F_ASSIGNS;
}

/* Is the module-level statement at s (column 0) work that only a script does when it is run: a loop, a `with`, an
 * assert, or a call made for its effect (`main()`, `print(...)`, `predictor.init_state(...)`), not an assignment,
 * a definition, an import or a test? */
static bool work_statement(const char *s, const char *e) {
    static const char *const kw[] = {"for", "while", "with", "assert", "async", NULL};
    for (int i = 0; kw[i]; i++)
        if (word_at(s, e, kw[i])) return true;
    if (!ident_start(*s)) return false;
    static const char *const not_calls[] = {"if", "elif", "else", "try", "except", "finally", "def", "class", "import",
                                            "from", "return", "raise", "del", "global", "pass", "lambda", "not",
                                            "await", "yield", NULL};
    for (int i = 0; not_calls[i]; i++)
        if (word_at(s, e, not_calls[i])) return false;
    const char *q = s;
    while (q < e && (ident_char(*q) || (*q == '.' && q + 1 < e && ident_start(q[1])))) q++;
    if (q >= e || *q != '(') return false;
    /* a call statement, unless it is the target of an assignment (`f(x).y = 1`) */
    for (int depth = 0; q < e; q++) {
        if (*q == '(' || *q == '[' || *q == '{') depth++;
        else if (*q == ')' || *q == ']' || *q == '}') depth--;
        else if (*q == '#' || *q == '"' || *q == '\'') break;
        else if (depth == 0 && *q == '=' && q[1] != '=' && !strchr("!<>=", q[-1])) return false;
    }
    return true;
}

static bool work_line(void *ctx, const char *s, const char *e, bool stmt) {
    if (stmt && s < e && work_statement(s, e)) {
        *(bool *)ctx = true;
        return false;
    }
    return true;
}

/* Does the module at abs (its editor buffer when one stands for it) do work at its top level, as a script run by
 * path does (sam2's benchmark.py: `assert torch.cuda.is_available()`, a loop, `print(...)`, no __main__ block)? */
static bool top_level_work(const char *abs) {
    size_t len = 0;
    char *text = an_project_overlay_text(abs, &len);
    an_stamp st = {0};
    struct an_cache *c = NULL;
    if (!text) {
        /* the answer is kept in the results cache beside the file's summary, under the file's stamp (taken before
         * the read, as summary_of does): a warm run asks it of every package module no file imports */
        struct stat sb;
        if (!stat(abs, &sb)) an_stamp_of(&sb, &st);
        pthread_mutex_lock(&sums_lock);
        c = sums_cache;
        pthread_mutex_unlock(&sums_lock);
        uint8_t *blob;
        size_t bl;
        if (c && st.valid && an_cache_side_get(c, "project2-w", abs, &st, &blob, &bl)) {
            bool ok = bl == 1 && blob[0] <= 1, work = ok && blob[0];
            ut_free(blob);
            if (ok) return work;
        }
        FILE *fp = fopen(abs, "rb");
        if (!fp) return false;
        text = ut_malloc((1u << 20) + 1);
        len = fread(text, 1, 1u << 20, fp);
        fclose(fp);
    }
    bool work = false;
    each_line(text, text + len, work_line, &work);
    ut_free(text);
    if (c && st.valid) {
        uint8_t v = work;
        an_cache_side_put(c, "project2-w", abs, &st, &v, 1);
    }
    return work;
}

static bool skip_dir(const char *name) {
    return name[0] == '.' || !strcmp(name, "__pycache__") || !strcmp(name, "node_modules") ||
           !strcmp(name, "site-packages") || !strcmp(name, "venv") || !strcmp(name, "build");
}

/* res: where the absolute imports of the files in the parent directory resolve from (see below); parent_init:
 * the parent directory has an __init__.py */
static void walk(an_project *p, const char *rel, int depth, const char *parent_res, bool parent_init) {
    if (depth > p->max_depth || p->todo.len > 200000) return;
    char path[PATH_MAX];
    join3(path, sizeof path, p->root, *rel ? "/" : "", rel);
    DIR *d = opendir(path);
    if (!d) return;
    UT_VEC(char *) sub = {0};
    UT_VEC(char *) pys = {0};
    UT_VEC(an_stamp) stamps = {0};
    bool init = false;
    struct dirent *de;
    while ((de = readdir(d))) {
        const char *nm = de->d_name;
        if (!strcmp(nm, ".") || !strcmp(nm, "..")) continue;
        char r[PATH_MAX];
        join3(r, sizeof r, rel, *rel ? "/" : "", nm);
        unsigned char t = de->d_type;
        if (t == DT_UNKNOWN || t == DT_LNK) {
            struct stat st;
            char full[PATH_MAX + 2];
            join3(full, sizeof full, p->root, "/", r);
            if (stat(full, &st) != 0) continue;
            t = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN;
            if (de->d_type == DT_LNK && t == DT_DIR) continue; /* no cycles through links */
        }
        if (t == DT_DIR) {
            if (!skip_dir(nm)) ut_vec_push(&sub, ut_strdup(r));
            continue;
        }
        size_t n = strlen(nm);
        if (t != DT_REG || n < 4 || strcmp(nm + n - 3, ".py")) continue;
        if (!strcmp(nm, "__init__.py")) init = true;
        ut_vec_push(&pys, ut_strdup(r));
        /* its stamp, relative to the open directory (no lookup of the whole path) */
        struct stat fst;
        an_stamp fs = {0};
        if (fstatat(dirfd(d), nm, &fst, 0) == 0) an_stamp_of(&fst, &fs);
        ut_vec_push(&stamps, fs);
    }
    closedir(d);
    /* The directory the absolute imports of this directory's files resolve from: a package's modules resolve them
     * from above the top of its __init__.py chain, never from their own directory; other files (scripts,
     * namespace packages) from their own directory and the roots above it. */
    char res[PATH_MAX];
    if (init && parent_init) join3(res, sizeof res, parent_res, "", "");
    else if (init) {
        const char *sl = strrchr(rel, '/');
        snprintf(res, sizeof res, "%.*s", sl ? (int)(sl - rel) : 0, rel);
    } else join3(res, sizeof res, rel, "", "");
    for (size_t i = 0; i < pys.len; i++) {
        pending pd = {pys.items[i], ut_strdup(res), stamps.items[i], NULL};
        ut_vec_push(&p->todo, pd);
    }
    ut_vec_free(&stamps);
    ut_vec_free(&pys);
    for (size_t i = 0; i < sub.len; i++) {
        walk(p, sub.items[i], depth + 1, res, init);
        ut_free(sub.items[i]);
    }
    ut_vec_free(&sub);
}

/* The directory packages are installed from, as the packaging metadata says: setup.py `package_dir={"": "lib"}`,
 * pyproject `[tool.setuptools] package-dir = {"" = "lib"}` or `packages.find where = ["lib"]`, setup.cfg
 * `package_dir = =lib`, poetry `{ include = "x", from = "lib" }`; else "src". */
static void packaging_root(an_project *p) {
    snprintf(p->pkg_root, sizeof p->pkg_root, "src");
    static const char *const files[] = {"setup.py", "pyproject.toml", "setup.cfg", NULL};
    static const char *const keys[] = {"\"\": \"", "'': '", "\"\" = \"", "\"\":\"", "'':'", "where = [\"",
                                       "where=[\"", "where = ['", "from = \"", "package_dir =\n    =", NULL};
    for (int i = 0; files[i]; i++) {
        char path[PATH_MAX + 32];
        join3(path, sizeof path, p->root, "/", files[i]);
        FILE *f = fopen(path, "rb");
        if (!f) continue;
        char buf[65536];
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = 0;
        for (int k = 0; keys[k]; k++) {
            const char *q = strstr(buf, keys[k]);
            if (!q) continue;
            q += strlen(keys[k]);
            size_t l = 0;
            while (q[l] && (ident_char(q[l]) || q[l] == '/' || q[l] == '-' || q[l] == '.') && l + 1 < sizeof p->pkg_root) l++;
            if (l && !(l == 1 && q[0] == '.')) {
                snprintf(p->pkg_root, sizeof p->pkg_root, "%.*s", (int)l, q);
                return;
            }
        }
    }
}

static an_project *project_new(const char *root, int max_depth);

typedef struct {
    an_project *p;
    atomic_size_t next;
} scan_job;

static void *scan_files(void *arg) {
    scan_job *j = arg;
    char *buf = NULL;
    for (size_t i; (i = atomic_fetch_add(&j->next, 1)) < j->p->todo.len;) {
        pending *pd = &j->p->todo.items[i];
        char full[PATH_MAX + 2];
        join3(full, sizeof full, j->p->root, "/", pd->rel);
        if (!buf) buf = ut_malloc((1u << 20) + 1);
        pd->sum = summary_of(full, &pd->st, in_config_dir(pd->rel), buf);
    }
    ut_free(buf);
    return NULL;
}

/* The extensions a setup.py builds with CUDA: `CUDAExtension("pkg._C", ...)`, or any `...Extension(name, sources=[...
 * ".cu" ...])` (fairseq builds its kernels as CppExtensions with .cu sources); their module names go to
 * p->cuda_exts. Read from the text: a call's first string literal is its name. Whether the file names
 * CUDAExtension at all (the root setup.py's answer is p->cuda_ext). */
static bool cuda_extensions_of(an_project *p, const char *rel) {
    char path[PATH_MAX + 16];
    join3(path, sizeof path, p->root, "/", rel);
    FILE *fp = fopen(path, "rb");
    if (!fp) return false;
    char *buf = ut_malloc((1u << 20) + 1);
    size_t n = fread(buf, 1, 1u << 20, fp);
    fclose(fp);
    bool mentions = ut_memmem(buf, n, "CUDAExtension", 13) != NULL;
    for (const char *q = buf; (q = ut_memmem(q, n - (size_t)(q - buf), "Extension(", 10)); q += 10) {
        bool cuda = q - buf >= 4 && !memcmp(q - 4, "CUDA", 4);
        const char *e = q + 10, *end = buf + n;
        int depth = 1;
        char quote = 0;
        const char *name = NULL, *name_end = NULL;
        for (; e < end && depth; e++) {
            if (quote) {
                if (*e == '\\' && e + 1 < end) e++;
                else if (*e == quote) {
                    quote = 0;
                    if (!name_end && name) name_end = e;
                }
                continue;
            }
            if (*e == '"' || *e == '\'') {
                quote = *e;
                if (!name) name = e + 1;
            } else if (*e == '(' || *e == '[') {
                depth++;
            } else if (*e == ')' || *e == ']') {
                depth--;
            } else if (*e == '#') {
                while (e < end && *e != '\n') e++;
            }
        }
        if (!cuda) /* a source ending in .cu (or .cuh) among its arguments */
            for (const char *c = q; c + 4 <= e && !cuda; c++)
                cuda = !memcmp(c, ".cu", 3) && (c[3] == '"' || c[3] == '\'' || (c[3] == 'h' && c + 5 <= e));
        if (!cuda || !name || !name_end || name_end == name || name_end - name > 200) continue;
        bool ident = true;
        for (const char *c = name; c < name_end && ident; c++) ident = ident_char(*c) || *c == '.';
        if (!ident) continue;
        slot *sl = smap_put(&p->cuda_exts, name, (size_t)(name_end - name));
        if (!sl->flags) {
            sl->flags = 1;
            p->cuda_exts_hash += ut_fnv1a(UT_FNV_SEED, name, (size_t)(name_end - name)) * 0x9E3779B97F4A7C15ull + 1;
        }
    }
    ut_free(buf);
    return mentions;
}

an_project *an_project_new(const char *root) { return project_new(root, 40); }

static an_project *project_new(const char *root, int max_depth) {
    char abs[PATH_MAX];
    if (!realpath(root, abs)) return NULL;
    an_project *p = ut_calloc(1, sizeof *p);
    p->max_depth = max_depth;
    if (!strcmp(abs, "/")) abs[0] = 0;
    p->root = ut_strdup(abs);
    packaging_root(p);
    walk(p, "", 0, "", false);
    /* the summaries: read on several threads when many files are to be read (a cold run), then replayed in the
     * walk's order */
    scan_job sj = {p, 0};
    an_engine_parallel(p->todo.len >= 256 ? 0 : 1, p->todo.len, scan_files, &sj);
    size_t setups = 0;
    bool root_setup = false;
    for (size_t i = 0; i < p->todo.len; i++) {
        pending *pd = &p->todo.items[i];
        const char *b = strrchr(pd->rel, '/');
        if (!strcmp(b ? b + 1 : pd->rel, "setup.py") && setups++ < 64) {
            bool mentions = cuda_extensions_of(p, pd->rel);
            if (!b) p->cuda_ext = mentions, root_setup = true;
        }
        if (pd->sum) replay(p, pd->rel, pd->res, pd->sum);
        ut_free(pd->rel);
        ut_free(pd->res);
    }
    ut_vec_free(&p->todo);
    smap_free(&p->pairs);
    memset(&p->pairs, 0, sizeof p->pairs);
    /* a root setup.py the walk did not list (past the cap on setup.py files read above): read for the flag alone */
    char sp[PATH_MAX + 16];
    snprintf(sp, sizeof sp, "%s/setup.py", p->root);
    FILE *fp = root_setup ? NULL : fopen(sp, "rb");
    if (fp) {
        char *buf = ut_malloc((1u << 20) + 1);
        size_t n = fread(buf, 1, 1u << 20, fp);
        fclose(fp);
        p->cuda_ext = ut_memmem(buf, n, "CUDAExtension", 13) != NULL;
        ut_free(buf);
    }
    return p;
}

bool an_project_builds_cuda_extension(const an_project *p) { return p && p->cuda_ext; }

bool an_project_cuda_extension_module(const an_project *p, const char *dotted, size_t n) {
    return p && n && smap_find(&p->cuda_exts, dotted, n);
}

uint64_t an_project_cuda_extensions_hash(const an_project *p) { return p ? p->cuda_exts_hash : 0; }

void an_project_free(an_project *p) {
    if (!p) return;
    smap_free(&p->names), smap_free(&p->files), smap_free(&p->main_dirs), smap_free(&p->pairs), smap_free(&p->comps), smap_free(&p->cuda_exts);
    ut_free(p->cuda_unlike);
    ut_free(p->root);
    ut_free(p);
}

/* ---- the shared models ------------------------------------------------------------------------------------------ */

typedef struct {
    char *root;
    an_project *model; /* NULL until first use */
    bool built, hinted;
    pthread_mutex_t build; /* held while this one model is built: threads needing other projects go on */
} shared;

static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static UT_VEC(shared *) shared_models; /* entries never move: a build runs outside shared_lock */

static bool exists(const char *p, bool dir) {
    struct stat st;
    return stat(p, &st) == 0 && (dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode));
}

/* exists(), remembered: placing the helper asks, for every file, whether its directory is a package and whether
 * each package the file imports lies beside it or above it, and a file list names hundreds of files of the same
 * directories. A set of the
 * paths asked (open addressing; a run asks about a few thousand at most), shared by the threads. */
static ut_smap dir_memo; /* 'd' or 'f', then a path -> whether it exists as that (num) */
static pthread_mutex_t dir_memo_lock = PTHREAD_MUTEX_INITIALIZER;

static bool exists_memo(const char *path, bool dir) {
    char p[PATH_MAX + 2]; /* the key: 'd' or 'f', then the path */
    snprintf(p, sizeof p, "%c%s", dir ? 'd' : 'f', path);
    pthread_mutex_lock(&dir_memo_lock);
    const ut_smap_slot *x = ut_smap_find(&dir_memo, p, strlen(p));
    if (x) {
        bool r = x->num;
        pthread_mutex_unlock(&dir_memo_lock);
        return r;
    }
    pthread_mutex_unlock(&dir_memo_lock);
    bool r = exists(path, dir);
    pthread_mutex_lock(&dir_memo_lock);
    bool added;
    ut_smap_slot *y = ut_smap_put(&dir_memo, p, strlen(p), &added);
    if (added) y->num = r;
    pthread_mutex_unlock(&dir_memo_lock);
    return r;
}

static bool under(const char *path, const char *dir) {
    size_t n = strlen(dir);
    return !strncmp(path, dir, n) && (path[n] == '/' || !path[n] || !n);
}

static shared *shared_new(const char *root, bool hinted) {
    shared *e = ut_calloc(1, sizeof *e);
    e->root = ut_strdup(root);
    e->hinted = hinted;
    pthread_mutex_init(&e->build, NULL);
    return e;
}

void an_project_hint_root(const char *dir) {
    char abs[PATH_MAX];
    if (!realpath(dir, abs) || !exists(abs, true)) return;
    pthread_mutex_lock(&shared_lock);
    bool have = false;
    for (size_t i = 0; i < shared_models.len && !have; i++) have = !strcmp(shared_models.items[i]->root, abs);
    if (!have) ut_vec_push(&shared_models, shared_new(abs, true));
    pthread_mutex_unlock(&shared_lock);
}

/* the absolute path of a file that may not exist (an editor's unsaved buffer): its directory resolved */
/* realpath of a directory, remembered per directory as given (a readlink per component otherwise, for every file
 * of a file list); the directories a run names do not move while it runs */
static ut_smap real_dirs; /* the directory as given -> its real path (val, NULL when it has none) */
static pthread_mutex_t real_dirs_lock = PTHREAD_MUTEX_INITIALIZER;

static bool real_dir(const char *dir, char *out) {
    pthread_mutex_lock(&real_dirs_lock);
    const ut_smap_slot *x = ut_smap_find(&real_dirs, dir, strlen(dir));
    if (x) {
        bool ok = x->val != NULL;
        if (ok) snprintf(out, PATH_MAX, "%s", (const char *)x->val);
        pthread_mutex_unlock(&real_dirs_lock);
        return ok;
    }
    pthread_mutex_unlock(&real_dirs_lock);
    bool ok = realpath(dir, out) != NULL;
    pthread_mutex_lock(&real_dirs_lock);
    if (real_dirs.len >= 8192) ut_smap_free(&real_dirs, ut_free); /* a run over very many directories: start over */
    ut_smap_slot *y = ut_smap_put(&real_dirs, dir, strlen(dir), NULL);
    if (!y->val && ok) y->val = ut_strdup(out);
    pthread_mutex_unlock(&real_dirs_lock);
    return ok;
}

static bool abs_file(const char *file, char *out, size_t sz) {
    char dir[PATH_MAX];
    join3(dir, sizeof dir, file, "", "");
    char *slash = strrchr(dir, '/');
    const char *base = slash ? slash + 1 : file;
    if (slash == dir) strcpy(dir, "/");
    else if (slash) *slash = 0;
    else strcpy(dir, ".");
    char r[PATH_MAX];
    if (!real_dir(dir, r)) return false;
    return join3(out, sz, strcmp(r, "/") ? r : "", "/", base) < sz;
}

/* Is the setup.py at path (in dir) a packaging script? In a package directory (an __init__.py beside it) it may be a
 * module of the package (dinov2's `dinov2/eval/setup.py`, imported as dinov2.eval.setup, which made dinov2/eval a
 * project of its own: its own package then looked like a foreign library, and the helper got a copy there): there
 * it counts only when it imports setuptools, distutils or scikit-build. */
static bool packaging_script(const char *dir, const char *path) {
    char init[PATH_MAX + 16];
    join3(init, sizeof init, dir, "/__init__.py", "");
    if (access(init, F_OK) != 0) return true;
    FILE *fp = fopen(path, "rb");
    if (!fp) return false;
    char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    fclose(fp);
    buf[n] = 0;
    return ut_memmem(buf, n, "setuptools", 10) || ut_memmem(buf, n, "distutils", 9) || ut_memmem(buf, n, "skbuild", 7);
}

/* true when the root is known (a project marker above the file, the working directory, a hint); false when it is
 * only the file's own directory, which then is not walked below (a file in /tmp or $HOME is no project) */
static bool discover_root(const char *abs, char *out, size_t sz) {
    char cur[PATH_MAX];
    join3(cur, sizeof cur, abs, "", "");
    char *s = strrchr(cur, '/');
    if (s) *s = 0;
    char dir[PATH_MAX];
    join3(dir, sizeof dir, cur, "", "");
    static const char *const marks[] = {".git", "setup.py", "pyproject.toml", "setup.cfg", NULL};
    while (*cur) {
        for (int i = 0; marks[i]; i++) {
            char m[PATH_MAX + 32];
            join3(m, sizeof m, cur, "/", marks[i]);
            if (access(m, F_OK) != 0) continue;
            if (i == 1 && !packaging_script(cur, m)) continue;
            snprintf(out, sz, "%s", cur);
            return true;
        }
        char *t = strrchr(cur, '/');
        if (!t) break;
        *t = 0;
    }
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd) && under(abs, cwd)) { snprintf(out, sz, "%s", cwd); return true; }
    snprintf(out, sz, "%s", dir);
    bool known = false;
    pthread_mutex_lock(&shared_lock);
    size_t best = 0;
    for (size_t i = 0; i < shared_models.len; i++) {
        const char *r = shared_models.items[i]->root;
        if (shared_models.items[i]->hinted && under(abs, r) && strlen(r) > best)
            best = strlen(r), snprintf(out, sz, "%s", r), known = true;
    }
    pthread_mutex_unlock(&shared_lock);
    return known;
}

/* The root found for each directory files were named in (as given), so that a list of files named on the command line
 * (pre-commit, CI) costs the realpath and the upward search once per directory, not once per file. */
typedef struct {
    char *dir, *root;
    bool deep; /* the root is a project's (walk below it), not only the file's own directory */
} dir_root;
static UT_VEC(dir_root) dir_roots;

static char *given_dir(const char *file) {
    const char *slash = strrchr(file, '/');
    return slash ? ut_strndup(file, (size_t)(slash - file)) : ut_strdup(".");
}

const an_project *an_project_shared(const char *file) {
    char root[PATH_MAX];
    char *gd = given_dir(file);
    bool known = false, deep = false;
    pthread_mutex_lock(&shared_lock);
    for (size_t i = dir_roots.len; i-- > 0 && !known;)
        if (!strcmp(dir_roots.items[i].dir, gd))
            known = true, deep = dir_roots.items[i].deep, join3(root, sizeof root, dir_roots.items[i].root, "", "");
    pthread_mutex_unlock(&shared_lock);
    if (!known) {
        char abs[PATH_MAX];
        if (!abs_file(file, abs, sizeof abs)) { ut_free(gd); return NULL; }
        deep = discover_root(abs, root, sizeof root);
        pthread_mutex_lock(&shared_lock);
        dir_root dr = {gd, ut_strdup(root), deep};
        ut_vec_push(&dir_roots, dr);
        gd = NULL;
        pthread_mutex_unlock(&shared_lock);
    }
    ut_free(gd);
    pthread_mutex_lock(&shared_lock);
    shared *best = NULL;
    for (size_t i = 0; i < shared_models.len; i++)
        if (!strcmp(shared_models.items[i]->root, root)) best = shared_models.items[i];
    if (!best) {
        best = shared_new(root, false);
        ut_vec_push(&shared_models, best);
    }
    pthread_mutex_unlock(&shared_lock);
    /* the build reads every .py file of the project: several projects are built at once, on their threads */
    pthread_mutex_lock(&best->build);
    if (!best->built) {
        best->model = project_new(best->root, deep ? 40 : 0);
        best->built = true;
    }
    an_project *m = best->model;
    pthread_mutex_unlock(&best->build);
    return m;
}

static uint64_t generation;

uint64_t an_project_generation(void) { return __atomic_load_n(&generation, __ATOMIC_ACQUIRE); }

void an_project_refresh(void) {
    __atomic_add_fetch(&generation, 1, __ATOMIC_ACQ_REL);
    pthread_mutex_lock(&shared_lock);
    size_t k = 0;
    for (size_t i = 0; i < shared_models.len; i++) {
        shared *e = shared_models.items[i];
        an_project_free(e->model);
        e->model = NULL;
        e->built = false;
        if (e->hinted) { shared_models.items[k++] = e; continue; }
        pthread_mutex_destroy(&e->build);
        ut_free(e->root);
        ut_free(e);
    }
    shared_models.len = k;
    for (size_t i = 0; i < dir_roots.len; i++) ut_free(dir_roots.items[i].dir), ut_free(dir_roots.items[i].root);
    dir_roots.len = 0;
    pthread_mutex_unlock(&shared_lock);
    pthread_mutex_lock(&dir_memo_lock);
    ut_smap_free(&dir_memo, NULL);
    pthread_mutex_unlock(&dir_memo_lock);
    pthread_mutex_lock(&real_dirs_lock);
    ut_smap_free(&real_dirs, ut_free);
    pthread_mutex_unlock(&real_dirs_lock);
    pthread_mutex_lock(&sums_lock);
    for (size_t i = 0; i < sums.old.len; i++) summary_free(sums.old.items[i]);
    sums.old.len = 0;
    pthread_mutex_unlock(&sums_lock);
}

/* ---- the language server's view: open buffers and files changed on disk ---------------------------------------- */

static bool summary_eq(const summary *a, const summary *b) {
    if (!a || !b) return a == b;
    return a->flags == b->flags && a->own_dir == b->own_dir && !strcmp(a->tops ? a->tops : "", b->tops ? b->tops : "") &&
           (a->tops == NULL) == (b->tops == NULL) && a->names_len == b->names_len && !memcmp(a->names, b->names, a->names_len);
}

/* the summary a model built now would read for abs in one mode (overlay, else memory), without reading the disk;
 * *known: there is one */
static const summary *known_summary(const char *abs, bool cfg, bool *known) {
    char key[PATH_MAX + 8];
    snprintf(key, sizeof key, "%c%s", cfg ? 'c' : 'f', abs);
    const summary *r = NULL;
    *known = false;
    pthread_mutex_lock(&sums_lock);
    for (size_t i = 0; i < overlays.len && !*known; i++)
        if (!strcmp(overlays.items[i].path, abs)) r = cfg ? overlays.items[i].cfg : overlays.items[i].fast, *known = true;
    const ut_smap_slot *x = *known ? NULL : ut_smap_find(&sums.m, key, strlen(key));
    if (x) r = ((const memo_ent *)x->val)->sum, *known = true;
    pthread_mutex_unlock(&sums_lock);
    return r;
}

static bool disk_summaries(const char *abs, summary **fast, summary **cfg) {
    *fast = *cfg = NULL;
    FILE *fp = fopen(abs, "rb");
    if (!fp) return false;
    char *buf = ut_malloc((1u << 20) + 1);
    size_t len = fread(buf, 1, 1u << 20, fp);
    fclose(fp);
    *fast = summarize(buf, len, false);
    *cfg = summarize(buf, len, true);
    ut_free(buf);
    return true;
}

/* Would the models read something else for abs now than what they were built from (fast, cfg: its summaries now,
 * NULL when it is gone)? A file no model read changes nothing. */
static bool differs(const char *abs, const summary *fast, const summary *cfg) {
    bool changed = false;
    for (int m = 0; m < 2 && !changed; m++) {
        bool known;
        const summary *was = known_summary(abs, m == 1, &known);
        if (known) changed = !summary_eq(was, m ? cfg : fast);
    }
    return changed;
}

/* (both below are the language server's: one thread, no model being built, so what they replace is freed at once) */
bool an_project_overlay(const char *file, const char *text, size_t len) {
    __atomic_add_fetch(&generation, 1, __ATOMIC_ACQ_REL);
    char abs[PATH_MAX];
    if (!abs_file(file, abs, sizeof abs)) return false;
    summary *fast = NULL, *cfg = NULL;
    if (text) fast = summarize(text, len, false), cfg = summarize(text, len, true);
    else disk_summaries(abs, &fast, &cfg);
    bool changed = differs(abs, fast, cfg);
    pthread_mutex_lock(&sums_lock);
    size_t i = 0;
    while (i < overlays.len && strcmp(overlays.items[i].path, abs)) i++;
    if (i < overlays.len) {
        summary_free(overlays.items[i].fast), summary_free(overlays.items[i].cfg);
        ut_free(overlays.items[i].text), overlays.items[i].text = NULL;
    }
    if (text) {
        if (i == overlays.len) {
            overlay o = {ut_strdup(abs), NULL, NULL, NULL, 0};
            ut_vec_push(&overlays, o);
        }
        overlays.items[i].fast = fast, overlays.items[i].cfg = cfg;
        overlays.items[i].text = ut_strndup(text, len), overlays.items[i].len = len;
    } else {
        if (i < overlays.len) {
            ut_free(overlays.items[i].path);
            overlays.items[i] = overlays.items[--overlays.len];
        }
        summary_free(fast), summary_free(cfg);
    }
    pthread_mutex_unlock(&sums_lock);
    return changed;
}

char *an_project_overlay_text(const char *file, size_t *len) {
    char abs[PATH_MAX];
    if (!abs_file(file, abs, sizeof abs)) return NULL;
    char *r = NULL;
    pthread_mutex_lock(&sums_lock);
    for (size_t i = 0; i < overlays.len && !r; i++)
        if (!strcmp(overlays.items[i].path, abs)) r = ut_strndup(overlays.items[i].text, overlays.items[i].len), *len = overlays.items[i].len;
    pthread_mutex_unlock(&sums_lock);
    return r;
}

bool an_project_file_changed(const char *file) {
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    /* what decides roots, packages and the package directory */
    if (!strcmp(base, "__init__.py") || !strcmp(base, "setup.py") || !strcmp(base, "pyproject.toml") ||
        !strcmp(base, "setup.cfg") || !strcmp(base, ".git"))
        return true;
    size_t n = strlen(base);
    if (n < 3 || strcmp(base + n - 3, ".py")) {
        struct stat st;
        /* a directory (created, or gone: then it has no extension to tell) may hold modules */
        return (stat(file, &st) == 0 && S_ISDIR(st.st_mode)) || !strchr(base, '.');
    }
    char abs[PATH_MAX];
    if (!abs_file(file, abs, sizeof abs)) return true;
    pthread_mutex_lock(&sums_lock);
    bool open = false;
    for (size_t i = 0; i < overlays.len && !open; i++) open = !strcmp(overlays.items[i].path, abs);
    pthread_mutex_unlock(&sums_lock);
    if (open) return false; /* the editor's buffer stands for it */
    summary *fast, *cfg;
    bool there = disk_summaries(abs, &fast, &cfg);
    bool known_f, known_c;
    known_summary(abs, false, &known_f);
    known_summary(abs, true, &known_c);
    /* a new module, or one gone, changes the tree the models walked */
    bool changed = there != (known_f || known_c) || differs(abs, fast, cfg);
    summary_free(fast), summary_free(cfg);
    return changed;
}

/* ---- ways ---------------------------------------------------------------------------------------------------------- */

static bool has_init(const char *dir) {
    char p[PATH_MAX + 16];
    join3(p, sizeof p, dir, "/__init__.py", "");
    return exists_memo(p, false);
}

static bool has_init_dir_of(const char *file) {
    char dir[PATH_MAX];
    join3(dir, sizeof dir, file, "", "");
    char *s = strrchr(dir, '/');
    if (s) *s = 0;
    return has_init(dir);
}

static bool identifier(const char *s, size_t n) {
    if (!n || !ident_start(s[0])) return false;
    for (size_t i = 1; i < n; i++)
        if (!ident_char(s[i])) return false;
    return true;
}

/* components of the directory part of rel ("a/b/c.py" -> a, b) */
typedef struct {
    const char *s[128];
    size_t n[128];
    size_t count;
} comps;

static void split_dirs(const char *rel, comps *c) {
    c->count = 0;
    const char *b = rel;
    for (const char *q = rel; *q; q++) {
        if (*q != '/') continue;
        if (c->count < 128) c->s[c->count] = b, c->n[c->count] = (size_t)(q - b), c->count++;
        b = q + 1;
    }
}

static const char *rel_of(const an_project *p, const char *abs) {
    size_t n = strlen(p->root);
    if (strncmp(abs, p->root, n) || abs[n] != '/') return NULL;
    return abs + n + 1;
}

static bool config_dir(const comps *c) {
    for (size_t i = 0; i < c->count; i++) {
        if ((c->n[i] == 7 && !strncasecmp(c->s[i], "configs", 7)) || (c->n[i] == 6 && !strncasecmp(c->s[i], "config", 6)))
            return true;
    }
    return false;
}

/* the dotted name of directories [from, to) of c, then optionally the file's stem */
static bool join(const comps *c, size_t from, size_t to, const char *stem, char *out, size_t sz) {
    size_t o = 0;
    for (size_t i = from; i < to; i++) {
        if (!identifier(c->s[i], c->n[i]) || o + c->n[i] + 2 >= sz) return false;
        if (o) out[o++] = '.';
        memcpy(out + o, c->s[i], c->n[i]);
        o += c->n[i];
    }
    if (stem) {
        size_t n = strlen(stem);
        if (!identifier(stem, n) || o + n + 2 >= sz) return false;
        if (o) out[o++] = '.';
        memcpy(out + o, stem, n);
        o += n;
    }
    out[o] = 0;
    return true;
}

static void stem_of(const char *abs, char *out, size_t sz) {
    const char *b = strrchr(abs, '/');
    b = b ? b + 1 : abs;
    snprintf(out, sz, "%s", b);
    char *dot = strrchr(out, '.');
    if (dot) *dot = 0;
}

static bool imported(const an_project *p, const char *name) { return p && smap_find(&p->names, name, strlen(name)); }

bool an_project_imports(const an_project *p, const char *name) { return imported(p, name); }

bool an_project_own_module(const an_project *p, const char *name, size_t n) {
    return p && n && smap_find(&p->comps, name, n);
}

const char *an_project_cuda_unlike_to(const an_project *p) { return p ? p->cuda_unlike : NULL; }
uint64_t an_project_own_modules_hash(const an_project *p) { return p ? p->comps_hash : 0; }

static bool rel_under(const char *d, const char *r, size_t rn) {
    return !rn || (!strncmp(d, r, rn) && (d[rn] == '/' || !d[rn]));
}

/* Is `name` imported by a file whose absolute imports resolve from exactly the directory d (dn bytes of a relative
 * path; 0: the root)? */
static bool imported_at(const an_project *p, const char *name, const char *d, size_t dn) {
    const slot *sl = p ? smap_find(&p->names, name, strlen(name)) : NULL;
    if (!sl) return false;
    for (const char *q = sl->tops; q && *q;) {
        const char *e = strchr(q, '\n');
        if (!e) break;
        if ((size_t)(e - q) == dn && !memcmp(q, d, dn)) return true;
        q = e + 1;
    }
    return false;
}

/* Is `name` imported by a file that resolves it from the root r (the first rn bytes of a relative path): a file
 * in r or below it (its own directory, or an ancestor made the import root by the working directory, sys.path or
 * an installation), or r is the project root or its src/? A directory named like some module imported elsewhere
 * (`from utils import x` in benchmarks/) is no import root for a package deeper in the tree. */
static bool imported_from(const an_project *p, const char *name, const char *r, size_t rn) {
    const slot *sl = p ? smap_find(&p->names, name, strlen(name)) : NULL;
    if (!sl) return false;
    if (!rn || (rn == strlen(p->pkg_root) && !strncmp(r, p->pkg_root, rn))) return true;
    /* deeper in the tree, a name of the standard library is the standard library's: `import logging` in dinov2's
     * files makes no import root of `dinov2/` for its `dinov2/logging` package (which they import as dinov2.logging) */
    if (an_pystdlib_module(name, strlen(name))) return false;
    if (sl->common && rel_under(sl->common, r, rn)) return true;
    for (const char *q = sl->tops; q && *q;) {
        const char *e = strchr(q, '\n');
        char d[PATH_MAX];
        snprintf(d, sizeof d, "%.*s", (int)(e - q), q);
        if (rel_under(d, r, rn)) return true;
        q = e + 1;
    }
    return false;
}

static const slot *file_slot(const an_project *p, const char *rel) {
    return p && rel ? smap_find(&p->files, rel, strlen(rel)) : NULL;
}

static size_t ways_of(const an_project *p, const char *abs, an_way *out, size_t cap, bool scripts);

/* The ways of a file given as an absolute path. The package ways come first, deepest import root first. */
static size_t ways_abs(const an_project *p, const char *abs, an_way *out, size_t cap) {
    return ways_of(p, abs, out, cap, true);
}

bool an_project_module_imported(const an_project *p, const char *file) {
    char abs[PATH_MAX];
    if (!p || !abs_file(file, abs, sizeof abs)) return true;
    char stem[256];
    stem_of(abs, stem, sizeof stem);
    if (imported(p, stem)) return true;
    an_way w[16];
    size_t n = ways_of(p, abs, w, 16, false);
    for (size_t i = 0; i < n && i < 16; i++)
        if (w[i].kind == AN_WAY_PACKAGE && imported(p, w[i].module)) return true;
    return false;
}

/* scripts: also the ways of running it from its own directory (they may read the file: top_level_work) */
static size_t ways_of(const an_project *p, const char *abs, an_way *out, size_t cap, bool scripts) {
    size_t k = 0;
    char stem[256];
    stem_of(abs, stem, sizeof stem);
    bool is_init = !strcmp(stem, "__init__");
    const char *rel = p ? rel_of(p, abs) : NULL;
    const slot *fs = file_slot(p, rel);
    comps c;
    split_dirs(rel ? rel : "", &c);
    char name[1024];
    /* imported as a package module from an import root inside the project: the deepest root first */
    if (rel) {
        for (size_t j = c.count; j-- > 0;) {
            size_t rn = j ? (size_t)(c.s[j - 1] + c.n[j - 1] - rel) : 0;
            if (!join(&c, j, c.count, NULL, name, sizeof name) || !imported_from(p, name, rel, rn)) continue;
            if (k < cap) {
                an_way *w = &out[k++];
                w->kind = AN_WAY_PACKAGE;
                size_t rl = strlen(p->root) + (j ? (size_t)(c.s[j - 1] + c.n[j - 1] - rel) + 1 : 0);
                snprintf(w->root, sizeof w->root, "%.*s", (int)rl, abs);
                char full[sizeof w->module];
                if (!join(&c, j, c.count, is_init ? NULL : stem, full, sizeof full)) join(&c, j, c.count, NULL, full, sizeof full);
                memcpy(w->module, full, sizeof full);
                w->why = imported(p, full) ? "imported by the project" : "its package is imported by the project";
            }
        }
    }
    /* an __init__.py chain nobody's imports name: the conventional root above its top */
    if (!k) {
        char dir[PATH_MAX];
        join3(dir, sizeof dir, abs, "", "");
        *strrchr(dir, '/') = 0;
        if (has_init(dir)) {
            char top[PATH_MAX];
            join3(top, sizeof top, dir, "", "");
            for (;;) {
                char parent[PATH_MAX];
                join3(parent, sizeof parent, top, "", "");
                char *s = strrchr(parent, '/');
                if (!s || s == parent) break;
                *s = 0;
                if (!has_init(parent)) break;
                join3(top, sizeof top, parent, "", "");
            }
            if (k < cap) {
                an_way *w = &out[k++];
                w->kind = AN_WAY_PACKAGE;
                char *s = strrchr(top, '/');
                snprintf(w->root, sizeof w->root, "%.*s", (int)(s - top), top);
                size_t o = 0;
                for (const char *q = dir + (s - top) + 1; *q && o + 2 < sizeof w->module; q++)
                    w->module[o++] = *q == '/' ? '.' : *q;
                w->module[o] = 0;
                if (!is_init && o + strlen(stem) + 2 < sizeof w->module) {
                    strcat(w->module, ".");
                    strcat(w->module, stem);
                }
                w->why = "__init__.py chain";
            }
        }
    }
    /* exec-loaded: a config file of assignments under configs/ that nobody imports */
    const char *rb = p ? strrchr(p->root, '/') : NULL;
    bool in_configs = config_dir(&c) || (rb && (!strcasecmp(rb, "/configs") || !strcasecmp(rb, "/config")));
    if (!k && fs && (fs->flags & F_ASSIGNS) && !is_init && in_configs && !imported(p, stem)) {
        bool any = false;
        for (size_t j = 0; j <= c.count && !any; j++)
            if (join(&c, j, c.count, stem, name, sizeof name)) any = imported(p, name);
        if (!any && k < cap) {
            an_way *w = &out[k++];
            w->kind = AN_WAY_EXEC;
            snprintf(w->root, sizeof w->root, "%.*s", (int)(strrchr(abs, '/') - abs), abs);
            w->module[0] = 0;
            w->why = "a config file of assignments under configs/ that no module imports (loaded by exec)";
            return k;
        }
    }
    if (!scripts) return k;
    /* run (or imported by its neighbours) from its own directory */
    bool script = !k || (fs && (fs->flags & (F_MAIN | F_SHEBANG)));
    const char *why = fs && (fs->flags & F_MAIN) ? "has a __main__ block" : fs && (fs->flags & F_SHEBANG) ? "has a shebang"
                                                                          : "a module beside scripts";
    const char *slash = rel ? strrchr(rel, '/') : NULL;
    size_t dl = slash ? (size_t)(slash - rel) : 0;
    if (!script && rel && !has_init_dir_of(abs) && imported(p, stem))
        script = smap_find(&p->main_dirs, rel, dl) != NULL;
    /* imported by its bare name by a script whose imports resolve from this directory (generative-models'
     * `streamlit run scripts/demo/turbo.py` does `from streamlit_helpers import *`), even in a package: there it is
     * a top-level module, with no parent package */
    if (!script && rel && !is_init && imported_at(p, stem, rel, dl)) {
        script = true;
        why = "imported by its bare name from a script beside it";
    }
    /* a package module that no file imports and that does a script's work at its top level (sam2's benchmark.py,
     * run as `python sam2/benchmark.py`: asserts, calls, loops and no __main__ block) */
    if (!script && k && rel && !is_init && fs && !(fs->flags & F_RELATIVE) && !imported(p, stem)) {
        bool named = false;
        for (size_t i = 0; i < k && i < cap && !named; i++) named = imported(p, out[i].module);
        if (!named && top_level_work(abs)) {
            script = true;
            why = "does a script's work at its top level and no module imports it";
        }
    }
    if (script && k < cap) {
        an_way *w = &out[k++];
        w->kind = AN_WAY_SCRIPT;
        snprintf(w->root, sizeof w->root, "%.*s", (int)(strrchr(abs, '/') - abs), abs);
        snprintf(w->module, sizeof w->module, "%s", stem);
        w->why = why;
    }
    return k;
}

size_t an_project_ways(const an_project *p, const char *file, an_way *out, size_t n) {
    char abs[PATH_MAX];
    if (!abs_file(file, abs, sizeof abs)) return 0;
    return ways_abs(p, abs, out, n);
}

/* ---- helper placement ---------------------------------------------------------------------------------------------- */

/* abs shown relative to the working directory when under it */
static char *shown(const char *abs) {
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd) && strcmp(cwd, "/") && under(abs, cwd) && abs[strlen(cwd)] == '/')
        return ut_strdup(abs + strlen(cwd) + 1);
    return ut_strdup(abs);
}

static void place(an_helper_place *out, const char *dir, const char *module, const char *import) {
    ut_buf b;
    ut_buf_init(&b);
    ut_buf_printf(&b, "%s/%s.py", dir, module);
    char *abs = ut_buf_take(&b);
    out->path = shown(abs);
    ut_free(abs);
    out->import = ut_strdup(import);
}

/* A package of the project the file imports at its top level (`import T`, `from T.x import y`), found where the
 * file's own import finds it: beside the file, then in each directory above it up to the project root, then in
 * src/. The helper placed in it is imported the way the file already imports that package. */
static bool own_package(const an_project *p, const char *abs, const slot *fs, char *dir, size_t dsz, char *name,
                        size_t nsz) {
    if (!p || !fs || !fs->tops) return false;
    char cur[PATH_MAX];
    join3(cur, sizeof cur, abs, "", "");
    *strrchr(cur, '/') = 0;
    for (bool beside = true;; beside = false) {
        for (const char *t = fs->tops + 1; *t;) {
            const char *e = strchr(t, ',');
            char cand[PATH_MAX + 256];
            snprintf(cand, sizeof cand, "%s/%.*s", cur, (int)(e - t), t);
            /* above the file, a standard-library name is the standard library's (`import logging` is no import of
             * dinov2's `dinov2/logging` from `dinov2/train/train.py`) */
            bool std = !beside && an_pystdlib_module(t, (size_t)(e - t));
            if (!std && exists_memo(cand, true) && strlen(cand) < dsz) {
                memcpy(dir, cand, strlen(cand) + 1);
                snprintf(name, nsz, "%.*s", (int)(e - t), t);
                return true;
            }
            t = e + 1;
        }
        if (!strcmp(cur, p->root) || !under(cur, p->root)) break;
        char *s = strrchr(cur, '/');
        if (!s || s == cur) break;
        *s = 0;
    }
    char src[PATH_MAX + 300];
    join3(src, sizeof src, p->root, "/", p->pkg_root);
    for (const char *t = fs->tops + 1; *t;) {
        const char *e = strchr(t, ',');
        char cand[PATH_MAX + 600];
        snprintf(cand, sizeof cand, "%s/%.*s", src, (int)(e - t), t);
        if (!an_pystdlib_module(t, (size_t)(e - t)) && exists_memo(cand, true) && strlen(cand) < dsz) {
            memcpy(dir, cand, strlen(cand) + 1);
            snprintf(name, nsz, "%.*s", (int)(e - t), t);
            return true;
        }
        t = e + 1;
    }
    return false;
}

static void helper_place(const an_project *p, const char *file, const char *module, const char *forced,
                         an_helper_place *out);

/* setup.py: pip runs it through a PEP 517 backend (setuptools.build_meta), whose sys.path does not hold the
 * project's directory, so a helper beside it (`import xpuify_device`, or the guarded fallback) does not import there
 * and `pip install .` fails on every machine (nor would that helper be in the sdist). A helper in a package that
 * setup.py imports itself (DeepSpeed's `from op_builder import ...`) imports wherever setup.py's own import does. */
void an_project_helper_place(const an_project *p, const char *file, const char *module, const char *forced,
                             an_helper_place *out) {
    helper_place(p, file, module, forced, out);
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    if (forced || strcmp(base, "setup.py") || !out->import || !strncmp(out->import, "from ", 5)) return;
    an_helper_place_free(out);
    memset(out, 0, sizeof *out);
    out->withheld = ut_strdup("this file is setup.py, which pip runs through a PEP 517 build backend whose sys.path "
                              "does not hold the project's directory: a device helper beside it would not import "
                              "there (`pip install .` would fail)");
}

static void helper_place(const an_project *p, const char *file, const char *module, const char *forced,
                         an_helper_place *out) {
    memset(out, 0, sizeof *out);
    char imp[1024];
    if (forced) {
        out->path = ut_strdup(forced);
        snprintf(imp, sizeof imp, "import %s", module);
        out->import = ut_strdup(imp);
        return;
    }
    char abs[PATH_MAX];
    if (!abs_file(file, abs, sizeof abs)) snprintf(abs, sizeof abs, "./%s", file);
    an_way ways[16];
    size_t n = ways_abs(p, abs, ways, 16);
    const char *rel = p ? rel_of(p, abs) : NULL;
    const slot *fs = file_slot(p, rel);
    char dir[PATH_MAX], stem[256];
    join3(dir, sizeof dir, abs, "", "");
    *strrchr(dir, '/') = 0;
    stem_of(abs, stem, sizeof stem);
    const an_way *script = NULL;
    size_t topl = 0; /* the length of the deepest top package's path: a prefix of abs */
    for (size_t i = 0; i < n; i++) {
        if (ways[i].kind == AN_WAY_EXEC) {
            out->withheld = ut_strdup("this file is a config loaded by exec (no module imports it), where importing "
                                      "the device helper cannot work");
            return;
        }
        if (ways[i].kind == AN_WAY_SCRIPT) { script = &ways[i]; continue; }
        /* the package's top directory in this way: root/first component */
        const char *m = ways[i].module, *dot = strchr(m, '.');
        size_t l = strlen(ways[i].root) + 1 + (dot ? (size_t)(dot - m) : strlen(m));
        if (l > topl) topl = l;
    }
    char pkgdir[PATH_MAX], pkgname[256];
    if (topl && (!script || (fs && (fs->flags & F_RELATIVE)))) {
        /* a package module: a relative import reaches the helper in the top package of every way */
        char topdir[PATH_MAX];
        snprintf(topdir, sizeof topdir, "%.*s", (int)topl, abs);
        int dots = 1;
        for (const char *q = abs + topl; *q; q++) dots += *q == '/';
        dots--; /* the file's own component */
        if (dots < 1) dots = 1;
        if (dots > 63) dots = 63;
        char d[64];
        memset(d, '.', (size_t)dots);
        d[dots] = 0;
        snprintf(imp, sizeof imp, "from %s import %s", d, module);
        place(out, topdir, module, imp);
        return;
    }
    if (own_package(p, abs, fs, pkgdir, sizeof pkgdir, pkgname, sizeof pkgname)) {
        snprintf(imp, sizeof imp, "from %s import %s", pkgname, module);
        place(out, pkgdir, module, imp);
        return;
    }
    if (topl) {
        /* Imported as a package module and also run by path (or from its own directory): no single import works
         * both ways, a guarded fallback does, with the helper beside the file. Imported as pkg.(...).tool (also
         * `python -m pkg.tool`), the relative import reaches <its directory>/helper; run by path (or `python -m
         * tool` from its directory, or imported as a top-level module), there is no parent package, the relative
         * import raises ImportError, and sys.path holds the file's directory, so the plain import finds the same
         * copy. Not for a symlinked file: run by path, sys.path[0] is its target's directory. */
        struct stat st;
        if (lstat(abs, &st) == 0 && !S_ISLNK(st.st_mode) && strcmp(stem, module)) {
            snprintf(imp, sizeof imp, AN_HELPER_FALLBACK, module, module);
            place(out, dir, module, imp);
            return;
        }
        ut_buf b;
        ut_buf_init(&b);
        ut_buf_printf(&b, "this module is imported as %s (%s) and may also run by path (%s): a relative import of the "
                          "device helper fails there, and it imports no package of the project that could hold it",
                      ways[0].module, ways[0].why, script->why);
        out->withheld = ut_buf_take(&b);
        return;
    }
    /* a script: sys.path[0] is its directory, so a sibling module imports */
    snprintf(imp, sizeof imp, "import %s", module);
    place(out, dir, module, imp);
}

void an_helper_place_free(an_helper_place *h) {
    ut_free(h->path);
    ut_free(h->import);
    ut_free(h->withheld);
}

bool an_helper_import_in(const char *text, size_t len, const char *import) {
    if (!import || !*import) return false;
    size_t n = strlen(import);
    for (const char *q = text; q < text + len && (q = memchr(q, import[0], (size_t)(text + len - q))); q++) {
        /* compare, a '\r' before a '\n' of the text matching the '\n' alone */
        const char *t = q, *e = text + len;
        size_t i = 0;
        while (i < n && t < e) {
            if (*t == '\r' && t + 1 < e && t[1] == '\n' && import[i] == '\n') t++;
            if (*t != import[i]) break;
            t++, i++;
        }
        if (i == n) return true;
    }
    return false;
}
