/* an_cache: the on-disk results cache.
 *
 * File DIR/v1/<hex of the build hash>.bin:
 *   "XPUIFYC4" | u32 0x01020304 (byte order) | u32 entry count | u64 payload bytes | ut_hash20 of the payload
 *   payload: entries: key[20] (run, path, per-file options) | content[20] (an_cache_content) | mac[32] | u32 n |
 *            blob[n]
 *   mac: HMAC-SHA-256 under the machine's key (an_cachekey) of "xpuify-cache-entry" | build | key | content | n |
 *        blob, checked when an entry is first used: the header's checksum finds damage, the MAC finds forgery (a cache
 *        file committed to a repository, or written by anyone without the key, yields misses, never findings or
 *        their absence). Entries that fail are dropped at save.
 *   blob: u8 parsed | u32 findings | findings: u32 rule index | u32 entry index (~0: none) | u8 origin |
 *         u32 start end line col end_line end_col | u32 scope: start end line col end_line end_col | str message |
 *         u8 has fix
 *         [fix: str title | u8 applicability | str min_torch | u32 edits | edits: u32 start end | str text]
 *   str: u32 length (~0: NULL) | bytes
 * Keys are ut_hash20 of what they cover. Stamp entries share the table: key ut_hash20("stamp" | run | path),
 *   content: the hash of the content read (zero when the prefilter rejected it), blob: u64 dev ino size | i64 mtime
 *   ctime (ns) | u8 passed.
 * Side entries (an_cache_side_put: the project model's import summaries) too: key ut_hash20("side" | kind | path),
 *   content zero, blob: u64 dev ino size | i64 mtime ctime (ns) | the module's bytes.
 * Rule and entry indexes are valid because the catalog fingerprint is part of every key. */
#include "analyzer/core/an_cache.h"
#include "util/ut_buf.h"
#include "util/ut_hash.h"
#include "util/ut_safedir.h"
#include "util/ut_sha256.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <time.h>

#define MAGIC AN_CACHE_MAGIC
#define HDR (8 + 4 + 4 + 8 + 20)
#define ENTRY_HDR (20 + 20 + UT_SHA256_LEN + 4)
#define NONE UINT32_MAX
/* entries not used by this run beyond this many are dropped at save (paths that no longer exist, other configs) */
#define MAX_STALE 200000
#define STAMP_LEN (5 * 8 + 1)
/* a file changed less than this before the run began keeps no stamp: clock ticks of file systems' timestamps go up
 * to 2 s (FAT) */
#define RACY_NS (3LL * 1000000000)

typedef struct {
    uint8_t key[20], content[20], mac[UT_SHA256_LEN];
    const uint8_t *blob; /* into c->file or owned (below) */
    uint32_t len;
    bool owned, used;
    bool checked, authentic; /* read from the file: MAC checked (once), and it matched */
} entry;

struct an_cache {
    char *dir, *path, *name; /* path: dir/v1/name, for messages; files are opened relative to dir, links refused */
    uint8_t build[20];
    uint8_t secret[AN_CACHEKEY_LEN];
    ut_hmac256 keyed; /* the MAC's state after the key, the domain string and the build: each entry's MAC starts
                       * from a copy (the key's two blocks are hashed once per run, not once per entry) */
    size_t forged;        /* entries whose MAC did not match */
    uint8_t *file;        /* the cache file as read */
    entry *tab;           /* open addressing by key */
    size_t cap, n;
    bool dirty;
    size_t hits, misses, stamp_hits;
    int64_t trust_before; /* stamps of files changed at or after this are not stored */
    pthread_mutex_t mu;
    UT_VEC(char *) strings; /* interned min_torch strings handed out in fixes */
};

/* ---- build identity ------------------------------------------------------------------------------------------- */

/* The version alone would let a rebuilt binary trust results of the old one; the executable's own hash does not. */
static uint8_t exe_hash[20]; /* of /proc/self/exe, once per process */

static void hash_exe(void) {
    ut_buf b;
    ut_buf_init(&b);
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        char chunk[65536];
        ssize_t r;
        while ((r = read(fd, chunk, sizeof chunk)) > 0) ut_buf_append(&b, chunk, (size_t)r);
        close(fd);
    }
    ut_hash20(b.data ? b.data : "", b.len, exe_hash);
    ut_buf_free(&b);
}

static void build_hash(const char *version, const an_catalog *cat, uint8_t out[20]) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, hash_exe);
    ut_buf b;
    ut_buf_init(&b);
    ut_buf_printf(&b, "xpuify %s\n", version);
    ut_buf_append(&b, (const char *)exe_hash, 20);
    ut_buf_append(&b, (const char *)an_catalog_fingerprint(cat), 20);
    ut_hash20(b.data, b.len, out);
    ut_buf_free(&b);
}

static void hex(const uint8_t *h, size_t n, char *out) {
    for (size_t i = 0; i < n; i++) sprintf(out + 2 * i, "%02x", h[i]);
}

/* ---- table ---------------------------------------------------------------------------------------------------- */

static size_t slot(const an_cache *c, const uint8_t key[20]) {
    uint64_t h;
    memcpy(&h, key, sizeof h);
    size_t i = (size_t)h & (c->cap - 1);
    while (c->tab[i].blob && memcmp(c->tab[i].key, key, 20)) i = (i + 1) & (c->cap - 1);
    return i;
}

static void grow(an_cache *c) {
    size_t oc = c->cap;
    entry *old = c->tab;
    c->cap = oc ? oc * 2 : 1024;
    c->tab = ut_calloc(c->cap, sizeof(entry));
    for (size_t i = 0; i < oc; i++)
        if (old[i].blob) c->tab[slot(c, old[i].key)] = old[i];
    ut_free(old);
}

static entry *insert(an_cache *c, const uint8_t key[20]) {
    if ((c->n + 1) * 2 > c->cap) grow(c);
    entry *e = &c->tab[slot(c, key)];
    if (!e->blob) {
        c->n++;
        memcpy(e->key, key, 20);
    } else if (e->owned) {
        ut_free((void *)e->blob);
    }
    e->checked = e->authentic = false; /* a new blob: whatever was found of the old one does not apply */
    return e;
}

/* ---- reading the file ----------------------------------------------------------------------------------------- */

static uint32_t rd32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t rd64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

static uint8_t *slurp(const char *dir, const char *name, size_t *n) {
    const char *refused;
    size_t bad;
    int dfd = ut_dir_open_nofollow(dir, false, 0, &refused, &bad);
    if (dfd < 0) return NULL;
    int vfd = openat(dfd, "v1", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    close(dfd);
    if (vfd < 0) return NULL;
    int fd = openat(vfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    close(vfd);
    if (fd < 0) return NULL;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < HDR || st.st_size > (1LL << 32)) {
        close(fd);
        return NULL;
    }
    size_t want = (size_t)st.st_size, got = 0;
    uint8_t *b = ut_malloc(want);
    while (got < want) {
        ssize_t r = read(fd, b + got, want - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    close(fd);
    if (got != want) { ut_free(b); return NULL; }
    *n = want;
    return b;
}

static void load(an_cache *c) {
    size_t n;
    uint8_t *b = slurp(c->dir, c->name, &n);
    if (!b) return;
    uint8_t sum[20];
    if (memcmp(b, MAGIC, 8) || rd32(b + 8) != 0x01020304u || rd64(b + 16) != n - HDR) goto bad;
    ut_hash20(b + HDR, n - HDR, sum);
    if (memcmp(sum, b + 24, 20)) goto bad;
    uint32_t count = rd32(b + 12);
    size_t off = HDR;
    for (uint32_t i = 0; i < count; i++) {
        if (n - off < ENTRY_HDR) goto bad;
        uint32_t len = rd32(b + off + ENTRY_HDR - 4);
        if (n - off - ENTRY_HDR < len) goto bad;
        entry *e = insert(c, b + off);
        memcpy(e->content, b + off + 20, 20);
        memcpy(e->mac, b + off + 40, UT_SHA256_LEN);
        e->blob = b + off + ENTRY_HDR;
        e->len = len;
        e->owned = false;
        e->checked = e->authentic = false;
        off += ENTRY_HDR + (size_t)len;
    }
    c->file = b;
    return;
bad: /* another format, a torn or damaged file: start empty, rewrite it at save */
    for (size_t i = 0; i < c->cap; i++) memset(&c->tab[i], 0, sizeof(entry));
    c->n = 0;
    c->dirty = true;
    ut_free(b);
}

an_cache *an_cache_open(const char *dir, const char *version, const an_catalog *cat,
                        const uint8_t secret[AN_CACHEKEY_LEN], char **why) {
    *why = NULL;
    /* a directory that exists must be one, reached without a link: refuse it now rather than write through it */
    const char *refused;
    size_t bad;
    int dfd = ut_dir_open_nofollow(dir, false, 0, &refused, &bad);
    if (dfd < 0 && errno != ENOENT) {
        ut_buf m;
        ut_buf_init(&m);
        ut_buf_printf(&m, "%.*s: %s", (int)bad, dir, refused ? refused : strerror(errno));
        *why = ut_buf_take(&m);
        return NULL;
    }
    if (dfd >= 0) {
        int vfd = openat(dfd, "v1", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int e = errno;
        close(dfd);
        if (vfd >= 0) close(vfd);
        else if (e != ENOENT) {
            ut_buf m;
            ut_buf_init(&m);
            ut_buf_printf(&m, "%s/v1: %s", dir, e == ELOOP || e == ENOTDIR ? "is a symbolic link or not a directory, which xpuify does not follow for what it writes" : strerror(e));
            *why = ut_buf_take(&m);
            return NULL;
        }
    }
    an_cache *c = ut_calloc(1, sizeof *c);
    pthread_mutex_init(&c->mu, NULL);
    c->dir = ut_strdup(dir);
    memcpy(c->secret, secret, AN_CACHEKEY_LEN);
    build_hash(version, cat, c->build);
    ut_hmac256_init(&c->keyed, c->secret, AN_CACHEKEY_LEN);
    ut_hmac256_update(&c->keyed, "xpuify-cache-entry", 18);
    ut_hmac256_update(&c->keyed, c->build, 20);
    char h[41];
    hex(c->build, 20, h);
    ut_buf p;
    ut_buf_init(&p);
    ut_buf_printf(&p, "%s.bin", h);
    c->name = ut_buf_take(&p);
    ut_buf_init(&p);
    ut_buf_printf(&p, "%s/v1/%s", dir, c->name);
    c->path = ut_buf_take(&p);
    c->trust_before = INT64_MIN;
    grow(c);
    load(c);
    return c;
}

void an_cache_free(an_cache *c) {
    if (!c) return;
    for (size_t i = 0; i < c->cap; i++)
        if (c->tab[i].owned) ut_free((void *)c->tab[i].blob);
    ut_free(c->tab);
    ut_free(c->file);
    for (size_t i = 0; i < c->strings.len; i++) ut_free(c->strings.items[i]);
    ut_vec_free(&c->strings);
    ut_free(c->dir);
    ut_free(c->path);
    ut_free(c->name);
    memset(c->secret, 0, sizeof c->secret);
    pthread_mutex_destroy(&c->mu);
    ut_free(c);
}

/* ---- keys ------------------------------------------------------------------------------------------------------ */

static void put_str(ut_buf *b, const char *s) {
    uint32_t n = s ? (uint32_t)strlen(s) : NONE;
    ut_buf_append(b, (const char *)&n, 4);
    if (s) ut_buf_append(b, s, n);
}

void an_cache_run_key(const an_cache *c, const an_catalog *cat, const bool *enabled, const an_fix_options *fix,
                      bool regions, an_cache_run *out) {
    ut_buf b;
    ut_buf_init(&b);
    ut_buf_append(&b, (const char *)c->build, 20);
    for (size_t i = 0; i < an_catalog_count(cat); i++) {
        const an_rule *r = an_catalog_rule(cat, i);
        if (!enabled || enabled[i]) put_str(&b, r->code);
    }
    ut_buf_puts(&b, "|fix:");
    if (fix) {
        int32_t v[4] = {(int32_t)fix->target, fix->torch_major, fix->torch_minor, fix->unsafe};
        ut_buf_append(&b, (const char *)v, sizeof v);
        put_str(&b, fix->helper_module);
        put_str(&b, fix->helper_import);
        put_str(&b, fix->c_gpu_include);
        put_str(&b, fix->c_ccl_include);
    }
    ut_buf_puts(&b, regions ? "|regions" : "|whole");
    ut_hash20(b.data, b.len, out->h);
    ut_buf_free(&b);
}

void an_cache_key(const an_cache_run *run, const char *path, const an_fix_options *fix, uint8_t out[20]) {
    ut_buf b;
    ut_buf_init(&b);
    ut_buf_append(&b, (const char *)run->h, 20);
    put_str(&b, path);
    put_str(&b, fix ? fix->helper_module : NULL);
    put_str(&b, fix ? fix->helper_import : NULL);
    put_str(&b, fix ? fix->project_facts : NULL);
    ut_hash20(b.data, b.len, out);
    ut_buf_free(&b);
}

/* ---- entries: encode / decode ---------------------------------------------------------------------------------- */

static void put32(ut_buf *b, uint32_t v) { ut_buf_append(b, (const char *)&v, 4); }

static uint32_t entry_index(const an_diag *d) {
    if (!d->entry) return NONE;
    for (size_t i = 0; i < d->rule->entries.len; i++)
        if (d->rule->entries.items[i] == d->entry) return (uint32_t)i;
    return NONE;
}

static void encode(const an_diag_list *l, bool parsed, const an_deps *deps, ut_buf *b) {
    ut_buf_putc(b, (char)parsed);
    put32(b, (uint32_t)l->len);
    for (size_t i = 0; i < l->len; i++) {
        const an_diag *d = &l->items[i];
        put32(b, d->rule->index);
        put32(b, entry_index(d));
        ut_buf_putc(b, (char)d->origin);
        uint32_t v[12] = {d->start,       d->end,       d->line,      d->col,          d->end_line,      d->end_col,
                          d->scope_start, d->scope_end, d->scope_line, d->scope_col, d->scope_end_line, d->scope_end_col};
        ut_buf_append(b, (const char *)v, sizeof v);
        put_str(b, d->message);
        ut_buf_putc(b, (char)(d->fix != NULL));
        if (!d->fix) continue;
        put_str(b, d->fix->title);
        ut_buf_putc(b, (char)d->fix->applicability);
        put_str(b, d->fix->min_torch);
        put32(b, d->fix->needs);
        put32(b, (uint32_t)d->fix->edits.len);
        for (size_t k = 0; k < d->fix->edits.len; k++) {
            const an_edit *e = &d->fix->edits.items[k];
            put32(b, e->start);
            put32(b, e->end);
            put_str(b, e->text);
        }
    }
    /* the other files the findings depend on (an_deps): the entry holds while each has the content noted */
    if (deps && deps->len) {
        put32(b, (uint32_t)deps->len);
        for (size_t i = 0; i < deps->len; i++) {
            put_str(b, deps->items[i].path);
            ut_buf_append(b, (const char *)deps->items[i].content, 20);
        }
    }
}

typedef struct {
    const uint8_t *p, *end;
    bool bad;
} rd;

static uint32_t get32(rd *r) {
    if (r->end - r->p < 4) { r->bad = true; return 0; }
    uint32_t v = rd32(r->p);
    r->p += 4;
    return v;
}

static uint8_t get8(rd *r) {
    if (r->p >= r->end) { r->bad = true; return 0; }
    return *r->p++;
}

static char *get_str(rd *r) {
    uint32_t n = get32(r);
    if (n == NONE || r->bad) return NULL;
    if ((size_t)(r->end - r->p) < n) { r->bad = true; return NULL; }
    char *s = ut_strndup((const char *)r->p, n);
    r->p += n;
    return s;
}

/* min_torch in a fix points at catalog or static strings; cached ones point at strings the cache keeps */
static const char *intern(an_cache *c, char *s) {
    if (!s) return NULL;
    for (size_t i = 0; i < c->strings.len; i++)
        if (!strcmp(c->strings.items[i], s)) { ut_free(s); return c->strings.items[i]; }
    ut_vec_push(&c->strings, s);
    return s;
}

static bool utf8_or_null(const char *s) { return !s || an_utf8_invalid_at(s, strlen(s)) < 0; }

/* An entry that does not fit the file it claims to describe (ranges past its end, text that is not UTF-8, a
 * missing message) is damage or tampering: a miss, never findings that could mislead a writer. */
static bool diag_fits(const an_diag *d, size_t textlen) {
    if (!d->message || !utf8_or_null(d->message)) return false;
    if (d->start > d->end || d->end > textlen || !d->line || !d->col || d->end_line < d->line || !d->end_col)
        return false;
    if (d->origin > AN_ORIGIN_BUILTIN) return false;
    if (d->scope_end && (d->scope_start > d->scope_end || d->scope_end > textlen || !d->scope_line ||
                         !d->scope_col || d->scope_end_line < d->scope_line))
        return false;
    if (!d->fix) return true;
    if (d->fix->applicability > AN_FIX_UNSAFE || !utf8_or_null(d->fix->title) || !utf8_or_null(d->fix->min_torch))
        return false;
    for (size_t k = 0; k < d->fix->edits.len; k++) {
        const an_edit *e = &d->fix->edits.items[k];
        if (e->start > e->end || e->end > textlen || !utf8_or_null(e->text)) return false;
    }
    return true;
}

static bool decode(an_cache *c, const an_catalog *cat, const uint8_t *blob, uint32_t len, size_t textlen,
                   an_diag_list *out, bool *parsed, an_deps *deps) {
    rd r = {blob, blob + len, false};
    *parsed = get8(&r) != 0;
    uint32_t n = get32(&r);
    an_diag_list l = {0};
    for (uint32_t i = 0; i < n && !r.bad; i++) {
        an_diag d = {0};
        uint32_t ri = get32(&r), ei = get32(&r);
        d.rule = an_catalog_rule(cat, ri);
        if (!d.rule) { r.bad = true; break; }
        if (ei != NONE) {
            if (ei >= d.rule->entries.len) { r.bad = true; break; }
            d.entry = d.rule->entries.items[ei];
        }
        d.origin = (an_origin)get8(&r);
        uint32_t *f[12] = {&d.start,       &d.end,       &d.line,      &d.col,       &d.end_line,      &d.end_col,
                           &d.scope_start, &d.scope_end, &d.scope_line, &d.scope_col, &d.scope_end_line, &d.scope_end_col};
        for (int k = 0; k < 12; k++) *f[k] = get32(&r);
        d.message = get_str(&r);
        if (get8(&r)) {
            d.fix = ut_calloc(1, sizeof(an_fix));
            d.fix->title = get_str(&r);
            d.fix->applicability = (an_applicability)get8(&r);
            d.fix->min_torch = intern(c, get_str(&r));
            d.fix->needs = get32(&r);
            uint32_t ne = get32(&r);
            for (uint32_t k = 0; k < ne && !r.bad; k++) {
                an_edit e;
                e.start = get32(&r);
                e.end = get32(&r);
                e.text = get_str(&r);
                ut_vec_push(&d.fix->edits, e);
            }
        }
        ut_vec_push(&l, d);
        if (!r.bad && !diag_fits(&d, textlen)) r.bad = true;
    }
    if (!r.bad && r.p != r.end) { /* the files the findings depend on */
        uint32_t nd = get32(&r);
        for (uint32_t i = 0; i < nd && !r.bad; i++) {
            char *path = get_str(&r);
            if (!path || r.end - r.p < 20) {
                ut_free(path);
                r.bad = true;
                break;
            }
            if (deps->len == deps->cap) {
                deps->cap = deps->cap ? deps->cap * 2 : 4;
                deps->items = ut_realloc(deps->items, deps->cap * sizeof *deps->items);
            }
            an_dep *d = &deps->items[deps->len++];
            d->path = path, d->buffer = false;
            memcpy(d->content, r.p, 20);
            r.p += 20;
        }
        if (!nd) r.bad = true;
    }
    if (r.bad || r.p != r.end) {
        an_diag_list_free(&l);
        an_deps_free(deps);
        return false;
    }
    for (size_t i = 0; i < l.len; i++) ut_vec_push(out, l.items[i]);
    ut_vec_free(&l);
    return true;
}

/* ---- authentication ------------------------------------------------------------------------------------------- */

void an_cache_entry_mac(const an_cache *c, const uint8_t key[20], const uint8_t content[20], const uint8_t *blob,
                        uint32_t len, uint8_t out[32]) {
    ut_hmac256 m = c->keyed; /* = init with the secret, "xpuify-cache-entry", the build */
    ut_hmac256_update(&m, key, 20);
    ut_hmac256_update(&m, content, 20);
    ut_hmac256_update(&m, &len, 4);
    ut_hmac256_update(&m, blob, len);
    ut_hmac256_final(&m, out);
}

/* an entry read from the file is trusted once its MAC matches (checked at its first use, under c->mu) */
static bool authentic(an_cache *c, entry *e) {
    if (e->owned) return true;
    if (!e->checked) {
        uint8_t mac[UT_SHA256_LEN];
        an_cache_entry_mac(c, e->key, e->content, e->blob, e->len, mac);
        e->authentic = ut_mac_equal(mac, e->mac, UT_SHA256_LEN);
        e->checked = true;
        if (!e->authentic) c->forged++, c->dirty = true;
    }
    return e->authentic;
}

/* ---- lookups ----------------------------------------------------------------------------------------------------- */

/* the content hash: ut_hash20 (the cache tells its own files' versions apart, nobody crafts collisions against it, and
 * SHA-1, libgit2's collision-detecting one, cost ~10% of a cold run's CPU time) */
void an_cache_content(const char *text, size_t len, uint8_t out[20]) { ut_hash20(text, len, out); }

bool an_cache_get(an_cache *c, const an_catalog *cat, const an_cache_run *run, const char *path,
                  const an_fix_options *fix, const uint8_t content[20], size_t len, an_diag_list *out, bool *parsed) {
    uint8_t key[20];
    an_cache_key(run, path, fix, key);
    an_deps deps = {0};
    size_t before = out->len;
    pthread_mutex_lock(&c->mu);
    entry *e = &c->tab[slot(c, key)];
    bool hit = e->blob && !memcmp(e->content, content, 20) && authentic(c, e) &&
               decode(c, cat, e->blob, e->len, len, out, parsed, &deps);
    pthread_mutex_unlock(&c->mu);
    /* findings that depend on other files (read outside the lock): a miss when one of them changed */
    if (hit && deps.len && !an_deps_hold(deps.items, deps.len)) {
        an_diag_list rest = {out->items + before, out->len - before, out->len - before};
        for (size_t i = 0; i < rest.len; i++) ut_free(rest.items[i].message), an_fix_free(rest.items[i].fix);
        out->len = before;
        hit = false;
    }
    an_deps_free(&deps);
    pthread_mutex_lock(&c->mu);
    e = &c->tab[slot(c, key)]; /* the table may have grown meanwhile */
    if (hit && e->blob) e->used = true;
    if (hit) c->hits++;
    else c->misses++;
    pthread_mutex_unlock(&c->mu);
    return hit;
}

void an_cache_put(an_cache *c, const an_catalog *cat, const an_cache_run *run, const char *path,
                  const an_fix_options *fix, const uint8_t content[20], const an_diag_list *diags, bool parsed) {
    an_cache_put_deps(c, cat, run, path, fix, content, diags, parsed, NULL);
}

void an_cache_put_deps(an_cache *c, const an_catalog *cat, const an_cache_run *run, const char *path,
                       const an_fix_options *fix, const uint8_t content[20], const an_diag_list *diags, bool parsed,
                       const an_deps *deps) {
    (void)cat;
    uint8_t key[20];
    an_cache_key(run, path, fix, key);
    ut_buf b;
    ut_buf_init(&b);
    encode(diags, parsed, deps, &b);
    pthread_mutex_lock(&c->mu);
    entry *e = insert(c, key);
    memcpy(e->content, content, 20);
    e->len = (uint32_t)b.len;
    e->blob = (const uint8_t *)ut_buf_take(&b);
    an_cache_entry_mac(c, key, content, e->blob, e->len, e->mac);
    e->owned = true;
    e->used = true;
    c->dirty = true;
    pthread_mutex_unlock(&c->mu);
}

/* ---- stamps ------------------------------------------------------------------------------------------------------ */

void an_cache_trust_stamps(an_cache *c, int64_t began_ns) { c->trust_before = began_ns - RACY_NS; }

static void stamp_key(const an_cache_run *run, const char *path, uint8_t out[20]) {
    ut_buf b;
    ut_buf_init(&b);
    ut_buf_puts(&b, "stamp");
    ut_buf_append(&b, (const char *)run->h, 20);
    put_str(&b, path);
    ut_hash20(b.data, b.len, out);
    ut_buf_free(&b);
}

static void stamp_encode(const an_stamp *st, bool passed, uint8_t out[STAMP_LEN]) {
    uint64_t v[5] = {st->dev, st->ino, st->size, (uint64_t)st->mtime_ns, (uint64_t)st->ctime_ns};
    memcpy(out, v, sizeof v);
    out[40] = passed;
}

an_cache_stamp_state an_cache_stamp_get(an_cache *c, const an_cache_run *run, const char *path, const an_stamp *st,
                                        uint8_t content[20]) {
    if (!st->valid) return AN_CACHE_STAMP_UNKNOWN;
    uint8_t key[20], want[STAMP_LEN];
    stamp_key(run, path, key);
    stamp_encode(st, false, want);
    an_cache_stamp_state r = AN_CACHE_STAMP_UNKNOWN;
    pthread_mutex_lock(&c->mu);
    entry *e = &c->tab[slot(c, key)];
    if (e->blob && e->len == STAMP_LEN && !memcmp(e->blob, want, 40) && e->blob[40] <= 1 && authentic(c, e)) {
        r = e->blob[40] ? AN_CACHE_STAMP_PASSED : AN_CACHE_STAMP_REJECTED;
        memcpy(content, e->content, 20);
        e->used = true;
        c->stamp_hits++;
    }
    pthread_mutex_unlock(&c->mu);
    return r;
}

void an_cache_stamp_put(an_cache *c, const an_cache_run *run, const char *path, const an_stamp *st,
                        const uint8_t *content) {
    if (!st->valid || st->mtime_ns >= c->trust_before || st->ctime_ns >= c->trust_before) return;
    uint8_t key[20];
    stamp_key(run, path, key);
    uint8_t *blob = ut_malloc(STAMP_LEN);
    stamp_encode(st, content != NULL, blob);
    pthread_mutex_lock(&c->mu);
    entry *e = insert(c, key);
    if (content) memcpy(e->content, content, 20);
    else memset(e->content, 0, 20);
    e->len = STAMP_LEN;
    e->blob = blob;
    an_cache_entry_mac(c, key, e->content, blob, STAMP_LEN, e->mac);
    e->owned = true;
    e->used = true;
    c->dirty = true;
    pthread_mutex_unlock(&c->mu);
}

size_t an_cache_stamp_hits(const an_cache *c) { return c->stamp_hits; }

static void side_key(const char *kind, const char *path, uint8_t out[20]) {
    ut_buf b;
    ut_buf_init(&b);
    ut_buf_puts(&b, "side");
    put_str(&b, kind);
    put_str(&b, path);
    ut_hash20(b.data, b.len, out);
    ut_buf_free(&b);
}

bool an_cache_side_get(an_cache *c, const char *kind, const char *path, const an_stamp *st, uint8_t **blob,
                       size_t *len) {
    if (!st->valid) return false;
    uint8_t key[20], want[STAMP_LEN];
    side_key(kind, path, key);
    stamp_encode(st, false, want);
    bool hit = false;
    pthread_mutex_lock(&c->mu);
    entry *e = &c->tab[slot(c, key)];
    if (e->blob && e->len >= 40 && !memcmp(e->blob, want, 40) && authentic(c, e)) {
        *len = e->len - 40;
        *blob = ut_malloc(*len + 1);
        memcpy(*blob, e->blob + 40, *len);
        e->used = true;
        hit = true;
    }
    pthread_mutex_unlock(&c->mu);
    return hit;
}

void an_cache_side_put(an_cache *c, const char *kind, const char *path, const an_stamp *st, const void *data,
                       size_t len) {
    if (!st->valid || st->mtime_ns >= c->trust_before || st->ctime_ns >= c->trust_before || len > (1u << 24)) return;
    uint8_t key[20], head[STAMP_LEN];
    side_key(kind, path, key);
    stamp_encode(st, false, head);
    uint8_t *blob = ut_malloc(40 + len);
    memcpy(blob, head, 40);
    if (len) memcpy(blob + 40, data, len);
    pthread_mutex_lock(&c->mu);
    entry *e = insert(c, key);
    memset(e->content, 0, 20);
    e->len = (uint32_t)(40 + len);
    e->blob = blob;
    an_cache_entry_mac(c, key, e->content, blob, e->len, e->mac);
    e->owned = true;
    e->used = true;
    c->dirty = true;
    pthread_mutex_unlock(&c->mu);
}

size_t an_cache_forged(const an_cache *c) { return c->forged; }

const char *an_cache_file(const an_cache *c) { return c->path; }

void an_cache_stats(const an_cache *c, size_t *hits, size_t *misses) {
    *hits = c->hits;
    *misses = c->misses;
}

/* ---- saving ------------------------------------------------------------------------------------------------------ */

static char *errmsg(const char *what, const char *path, int err) {
    ut_buf b;
    ut_buf_init(&b);
    ut_buf_printf(&b, "%s %s: %s", what, path, strerror(err));
    return ut_buf_take(&b);
}

/* the cache directory marks itself as a cache (backup tools) and as ignored (git), as ruff's does; created without
 * following a link that could stand where they go */
static void write_markers(int dfd) {
    static const char *const files[][2] = {
        {"CACHEDIR.TAG", "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by xpuify.\n"},
        {".gitignore", "# Automatically created by xpuify.\n*\n"}};
    for (int i = 0; i < 2; i++) {
        int fd = openat(dfd, files[i][0], O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0) continue;
        ssize_t w = write(fd, files[i][1], strlen(files[i][1]));
        (void)w;
        close(fd);
    }
}

/* a temporary file beside the cache file: O_EXCL with a random name (mkstemp's guarantee, relative to vfd) */
static int make_temp(int vfd, const char *name, char *tmp, size_t tmpsz) {
    for (int tries = 0; tries < 100; tries++) {
        uint8_t r[6];
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t seed = ut_fnv1a(UT_FNV_SEED, &ts, sizeof ts) ^ ((uint64_t)getpid() << 20) ^ (uint64_t)tries;
        memcpy(r, &seed, sizeof r);
        snprintf(tmp, tmpsz, "%s.%02x%02x%02x%02x%02x%02x", name, r[0], r[1], r[2], r[3], r[4], r[5]);
        int fd = openat(vfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0 || errno != EEXIST) return fd;
    }
    errno = EEXIST;
    return -1;
}

static char *refusal(const char *path, size_t len, const char *refused, int err) {
    ut_buf b;
    ut_buf_init(&b);
    ut_buf_printf(&b, "%.*s: %s", (int)len, path, refused ? refused : strerror(err));
    return ut_buf_take(&b);
}

int an_cache_save(an_cache *c, char **why) {
    *why = NULL;
    if (!c->dirty) return 0;
    ut_buf payload;
    ut_buf_init(&payload);
    size_t stale = 0;
    uint32_t count = 0;
    for (size_t i = 0; i < c->cap; i++) {
        const entry *e = &c->tab[i];
        if (!e->blob || (e->checked && !e->authentic)) continue;
        if (!e->used && ++stale > MAX_STALE) continue;
        ut_buf_append(&payload, (const char *)e->key, 20);
        ut_buf_append(&payload, (const char *)e->content, 20);
        ut_buf_append(&payload, (const char *)e->mac, UT_SHA256_LEN);
        put32(&payload, e->len);
        ut_buf_append(&payload, (const char *)e->blob, e->len);
        count++;
    }
    uint8_t hdr[HDR];
    memcpy(hdr, MAGIC, 8);
    uint32_t bom = 0x01020304u;
    uint64_t plen = payload.len;
    memcpy(hdr + 8, &bom, 4);
    memcpy(hdr + 12, &count, 4);
    memcpy(hdr + 16, &plen, 8);
    ut_hash20(payload.data ? payload.data : "", payload.len, hdr + 24);

    int rc = -1, dfd = -1, vfd = -1;
    char tmp[4096];
    ut_buf sub;
    ut_buf_init(&sub);
    ut_buf_printf(&sub, "%s/v1", c->dir);
    const char *refused = NULL;
    size_t bad;
    dfd = ut_dir_open_nofollow(c->dir, true, 0777, &refused, &bad);
    if (dfd < 0) {
        *why = errno == ELOOP || errno == ENOTDIR ? refusal(c->dir, bad, refused, errno)
                                                  : errmsg("cannot create", c->dir, errno);
        goto out;
    }
    if (mkdirat(dfd, "v1", 0777) != 0 && errno != EEXIST) {
        *why = errmsg("cannot create", sub.data, errno);
        goto out;
    }
    vfd = openat(dfd, "v1", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (vfd < 0) {
        *why = errno == ELOOP || errno == ENOTDIR
                   ? refusal(sub.data, sub.len, "is a symbolic link or not a directory, which xpuify does not follow for what it writes", errno)
                   : errmsg("cannot create", sub.data, errno);
        goto out;
    }
    write_markers(dfd);
    int fd = make_temp(vfd, c->name, tmp, sizeof tmp);
    if (fd < 0) {
        *why = errmsg("cannot write in", sub.data, errno);
        goto out;
    }
    mode_t um = umask(0); /* the temporary file is 0600; a cache is as readable as the files it describes */
    umask(um);
    int err = fchmod(fd, 0666 & ~um) != 0 ? errno : 0;
    const struct { const void *p; size_t n; } parts[2] = {{hdr, HDR}, {payload.data, payload.len}};
    for (int k = 0; k < 2 && !err; k++) {
        size_t off = 0;
        while (off < parts[k].n) {
            ssize_t w = write(fd, (const char *)parts[k].p + off, parts[k].n - off);
            if (w < 0 && errno == EINTR) continue;
            if (w < 0) { err = errno; break; }
            off += (size_t)w;
        }
    }
    if (close(fd) != 0 && !err) err = errno;
    /* rename replaces whatever is at the name, a link included, and never writes through it */
    if (!err && renameat(vfd, tmp, vfd, c->name) != 0) err = errno;
    if (err) {
        unlinkat(vfd, tmp, 0);
        *why = errmsg("cannot write", c->path, err);
        goto out;
    }
    c->dirty = false;
    rc = 0;
out:
    if (vfd >= 0) close(vfd);
    if (dfd >= 0) close(dfd);
    ut_buf_free(&sub), ut_buf_free(&payload);
    return rc;
}
