/* an_engine: the parallel driver over files. Each worker owns its front-end state (parsers). */
#include "analyzer/core/an_engine.h"
#include "analyzer/c/an_cfix.h"
#include "analyzer/c/an_clang.h"
#include "analyzer/core/an_cache.h"
#include "analyzer/core/an_deps.h"
#include "analyzer/python/an_guard.h"
#include "util/ut_buf.h"
#include "util/ut_mem.h"
#include "util/ut_smap.h"
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include "analyzer/python/an_python.h"
#include "analyzer/python/an_pynest.h"
#include "analyzer/core/an_suppress.h"
#include "analyzer/text/an_text.h"
#include <pthread.h>
#include <time.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "util/ut_hash.h"

typedef struct {
    const an_catalog *cat;
    const an_file_list *files;
    const an_options *opt;
    an_results *out;
    atomic_size_t next;
    atomic_size_t done;
    bool lang_on[AN_LANG__COUNT]; /* some enabled rule reads the language */
    an_cache_run run;             /* the cache key's run-wide part (for opt->enabled) */
    bool c_cached;                /* C files are cached too (fast mode: see c_run) */
    an_cache_run crun;            /* run, for C files */
    /* XPUIFY_FILE_TIMES=1 (bench/file_times.sh): each file's CPU time on its thread, in ms, to stderr ("file-time MS
     * PATH"), for finding the files a run spends its time on */
    bool file_times;
} job;

/* A language none of whose rules is enabled (`--select XPT`) is not parsed at all: no libclang for C files. */
static void languages_enabled(const an_catalog *cat, const bool *en, bool *on) {
    for (int l = 0; l < AN_LANG__COUNT; l++) on[l] = false;
    for (size_t i = 0; i < an_catalog_count(cat); i++) {
        const an_rule *r = an_catalog_rule(cat, i);
        if (!en || en[r->index]) on[r->lang] = true;
    }
}

typedef struct {
    an_python *py;
    an_c *c; /* its CXIndex (and libclang itself) only exist once a C file passes the prefilter */
    const an_c_options *copt;
    uint8_t *found; /* the Python literal scan of the current file (an_catalog_prefilter) */
    const bool *run_en; /* the selection `run` was computed for (run_for) */
    bool run_en_set;
    an_cache_run run, crun; /* crun: run for C files */
} worker_state;

static void worker_free(worker_state *ws) {
    an_python_free(ws->py);
    an_c_free(ws->c);
    ut_free(ws->found);
}

/* The prefilter: false when the file need not be analyzed. Its literal scan (Python) stays in ws->found for region
 * selection, which would otherwise scan the text again. */
static bool prefilter(worker_state *ws, const an_catalog *cat, an_lang lang, const an_source *src, const bool *en,
                      const bool *lang_on) {
    if (!ws->found) ws->found = ut_malloc(an_catalog_literal_count(cat, AN_LANG_PYTHON) + 1);
    uint8_t *found = lang == AN_LANG_PYTHON ? ws->found : NULL;
    return lang_on[lang] && an_engine_may_report(cat, lang, en, src->text, src->len, found);
}

/* A file that passed the prefilter. */
static void analyze(worker_state *ws, const an_catalog *cat, an_lang lang, const an_source *src, const bool *en,
                    const an_fix_options *fix, bool regions, an_diag_list *out, bool *parsed, uint32_t *bytes,
                    char **why) {
    *parsed = true;
    *bytes = 0;
    const uint8_t *found = lang == AN_LANG_PYTHON ? ws->found : NULL;
    size_t before = out->len;
    switch (lang) {
    case AN_LANG_PYTHON: {
        if (!ws->py) ws->py = an_python_new();
        *parsed = an_python_analyze(ws->py, cat, src, en, fix, regions, found, out, bytes);
        /* a file nested too deep is skipped, with its reason, rather than parsed (an_pynest.h): an_python_analyze
         * checks that first (one scan of the text per file), and the reason is looked for when it parsed nothing */
        char *deep = *parsed ? NULL : an_py_nesting_why(src);
        if (deep) {
            if (why) *why = deep;
            else ut_free(deep);
        }
        break;
    }
    case AN_LANG_C:
        if (!ws->c) ws->c = an_c_new(ws->copt);
        *bytes = src->len;
        if (!an_c_analyze(ws->c, cat, src, en, out, why)) *parsed = false, *bytes = 0;
        else if (fix) an_cfix_generate(fix, src, out), an_cextfix_generate(fix, src, out), an_cfix_kernels(ws->c, cat, fix, src, out);
        break;
    case AN_LANG_TEXT:
        an_text_analyze(cat, src, en, out, why);
        break;
    default:
        break;
    }
    for (size_t i = before; i < out->len; i++) out->items[i].severity = out->items[i].rule->severity;
}

bool an_engine_may_report(const an_catalog *cat, an_lang lang, const bool *en, const char *text, size_t len,
                          uint8_t *found) {
    if (an_catalog_prefilter(cat, lang, text, len, found)) return true;
    /* no rule can match, but a suppression comment may be unused */
    const an_rule *u = an_catalog_builtin(cat, "unused-suppression");
    return u && (!en || en[u->index]) && an_catalog_may_have_directives(cat, lang, text, len, found);
}

/* progress, and the text dropped unless something will print it */
static void finish(job *j, an_file_result *r) {
    if (j->opt->progress) j->opt->progress(j->opt->progress_ctx, atomic_fetch_add(&j->done, 1) + 1, j->files->len);
    if (!r->diags.len && !j->opt->keep_sources) an_source_free(&r->src);
}

/* The run-wide key of C files: in fast mode (the default) a C file's findings depend on its own text and path, the
 * rules, the fix options and libclang, as a Python file's depend on its text, the rules and the options: fast mode
 * follows no include and reads no compile database or toolkit (an_cargs.c). So the key is the run's with the
 * identity of libclang added (an_clang_identity). Precise mode reads headers, the compile database and the CUDA
 * toolkit: its results are not cached. */
static void c_run(const an_cache_run *run, an_cache_run *out) {
    const char *id = an_clang_identity();
    size_t n = strlen(id);
    uint8_t buf[sizeof run->h + 8 + 600];
    memcpy(buf, run->h, sizeof run->h);
    memcpy(buf + sizeof run->h, "c-fast\0\0", 8);
    if (n > 600) n = 600;
    memcpy(buf + sizeof run->h + 8, id, n);
    ut_hash20(buf, sizeof run->h + 8 + n, out->h);
}

/* The cache key's run-wide part for a file's rule selection and language: the run's, or (per-directory
 * configurations) one computed for its own selection, remembered per worker for the last selection seen. */
static const an_cache_run *run_for(job *j, worker_state *ws, const bool *en, an_lang lang) {
    if (en == j->opt->enabled) return lang == AN_LANG_C ? &j->crun : &j->run;
    if (!ws->run_en_set || ws->run_en != en) {
        an_cache_run_key(j->opt->cache, j->cat, en, &j->opt->fix, !j->opt->whole_files, &ws->run);
        if (j->c_cached) c_run(&ws->run, &ws->crun);
        ws->run_en = en;
        ws->run_en_set = true;
    }
    return lang == AN_LANG_C ? &ws->crun : &ws->run;
}

/* A file whose stamp says it is unchanged since a run that read it: rejected by the prefilter then, or passed with
 * this content hash. Its findings come from the cache without reading it unless they are to be printed with their
 * source lines. Returns true when r is complete; false with r->diags filled (*cached) when the text is still to be
 * read, or false with nothing done. */
static bool unread(job *j, an_cache *cache, const an_cache_run *run, const an_file *f, an_cache_stamp_state k,
                   const uint8_t content[20], const an_fix_options *fo, an_file_result *r, bool *cached) {
    *cached = false;
    if (f->stamp.size > j->opt->max_file_size || f->stamp.size >= UINT32_MAX) return false;
    if (k == AN_CACHE_STAMP_PASSED) {
        if (!an_cache_get(cache, j->cat, run, f->path, fo, content, (size_t)f->stamp.size, &r->diags, &r->parsed))
            return false;
        *cached = true;
    }
    if (j->opt->keep_sources || r->diags.len) return false;
    r->status = AN_LOAD_OK;
    return true;
}

static void work_file(job *j, worker_state *ws, size_t i) {
    const an_file *f = &j->files->items[i];
    an_file_result *r = &j->out->items[i];
    r->file = f;
    const bool *en = j->opt->file_enabled ? j->opt->file_enabled[i] : j->opt->enabled;
    /* the cache holds what depends on the file's own text only: Python and text files, and C files in fast mode
     * (in precise mode their findings depend on headers, the compile database and the toolkit: c_run) */
    an_cache *cache = f->lang == AN_LANG_C && !j->c_cached ? NULL : j->opt->cache;
    const an_cache_run *run = cache ? run_for(j, ws, en, f->lang) : NULL;
    uint8_t content[20];
    an_cache_stamp_state k = cache ? an_cache_stamp_get(cache, run, f->path, &f->stamp, content) : AN_CACHE_STAMP_UNKNOWN;
    an_fix_options fo = j->opt->fix;
    char buf[1024];
    bool fo_set = false, cached = false;
    if (k == AN_CACHE_STAMP_PASSED && j->opt->fix_for_file && fo.target != AN_TARGET_NONE)
        j->opt->fix_for_file(j->opt->fix_ctx, f->path, &fo, buf, sizeof buf), fo_set = true;
    if (k != AN_CACHE_STAMP_UNKNOWN && unread(j, cache, run, f, k, content, &fo, r, &cached)) {
        finish(j, r);
        return;
    }
    an_stamp seen;
    /* the line table is built only for a file that goes on past the prefilter (or may be printed) */
    r->status = an_source_read_stamped(&r->src, f->path, j->opt->max_file_size, &r->error, &seen);
    if (r->status == AN_LOAD_OK && j->opt->keep_sources) an_source_index(&r->src);
    bool same = k != AN_CACHE_STAMP_UNKNOWN && an_stamp_eq(&seen, &f->stamp);
    if (cached && (!same || r->status != AN_LOAD_OK)) { /* changed since the walk: read afresh below */
        an_diag_list_free(&r->diags);
        r->parsed = false;
        cached = same = false;
    }
    if (r->status != AN_LOAD_OK) return;
    if (cached || (same && k == AN_CACHE_STAMP_REJECTED)) {
        if (!j->opt->keep_sources) an_source_index(&r->src);
        for (size_t d = 0; d < r->diags.len; d++) r->diags.items[d].severity = r->diags.items[d].rule->severity;
        finish(j, r);
        return;
    }
    /* most files stop here: no helper import to place, no content hash, no cache entry but their stamp */
    if (!(same && k == AN_CACHE_STAMP_PASSED) && !prefilter(ws, j->cat, f->lang, &r->src, en, j->lang_on)) {
        if (cache && an_stamp_eq(&seen, &f->stamp)) an_cache_stamp_put(cache, run, f->path, &seen, NULL);
        finish(j, r);
        return;
    }
    if (!j->opt->keep_sources) an_source_index(&r->src);
    if (!fo_set && j->opt->fix_for_file && fo.target != AN_TARGET_NONE)
        j->opt->fix_for_file(j->opt->fix_ctx, f->path, &fo, buf, sizeof buf);
    char *why = NULL;
    bool hashed = false;
    if (cache && !same) an_cache_content(r->src.text, r->src.len, content), hashed = true;
    if (cache && an_cache_get(cache, j->cat, run, f->path, &fo, content, r->src.len, &r->diags, &r->parsed)) {
        for (size_t d = 0; d < r->diags.len; d++) r->diags.items[d].severity = r->diags.items[d].rule->severity;
    } else {
        /* unchanged by its stamp, but no findings cached for these options: the literal scan is still to do */
        if (same && !prefilter(ws, j->cat, f->lang, &r->src, en, j->lang_on)) {
            finish(j, r);
            return;
        }
        an_deps deps = {0};
        if (cache) an_deps_begin(); /* the other files the findings come to depend on */
        analyze(ws, j->cat, f->lang, &r->src, en, &fo, !j->opt->whole_files, &r->diags, &r->parsed, &r->parsed_bytes,
                &why);
        if (cache) an_deps_end(&deps);
        if (cache && !why) an_cache_put_deps(cache, j->cat, run, f->path, &fo, content, &r->diags, r->parsed, &deps);
        an_deps_free(&deps);
    }
    if (cache && !why && hashed && an_stamp_eq(&seen, &f->stamp)) an_cache_stamp_put(cache, run, f->path, &seen, content);
    if (why) {
        r->status = AN_LOAD_NOT_ANALYZED;
        r->error = why;
    }
    finish(j, r);
}

static void *work(void *arg) {
    job *j = arg;
    worker_state ws = {0};
    ws.copt = &j->opt->c;
    for (;;) {
        size_t i = atomic_fetch_add(&j->next, 1);
        if (i >= j->files->len) break;
        struct timespec a, b;
        bool timed = j->file_times && !clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
        work_file(j, &ws, i);
        if (timed && !clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b))
            fprintf(stderr, "file-time %.3f %s\n", (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6,
                    j->files->items[i].path);
    }
    worker_free(&ws);
    return NULL;
}


/* ---- the files fixed together (an_engine_fixes_begin) ------------------------------------------------------------ */

typedef struct {
    uint8_t content[20]; /* of the text the spans are of */
    uint32_t *spans;
    size_t n;
    an_deps deps; /* what that analysis read besides the file (its own guards' callees) */
} fixes_ent;

static struct {
    bool on;
    const an_catalog *cat;
    const an_file_list *files;
    const bool *enabled;
    const bool *const *file_enabled;
    an_fix_options fix;
    void (*fix_for_file)(void *, const char *, an_fix_options *, char *, size_t);
    void *fix_ctx;
    bool regions;
    ut_smap index; /* absolute path -> 1 + index into files (Python files only) */
    ut_smap memo;  /* absolute path -> fixes_ent */
    char cwd[PATH_MAX]; /* the working directory, read once per run (normal_abs) */
    pthread_mutex_t lock;
} fixrun = {.lock = PTHREAD_MUTEX_INITIALIZER};

static _Thread_local bool in_fixes; /* this thread computes a module's fixes: no module's fixes are asked from it */

/* path made absolute (against the working directory read when the run began) and lexically normal ("." and ".."
 * segments, repeated slashes), as the guard's module paths */
static char *normal_abs(const char *path) {
    ut_buf b;
    ut_buf_init(&b);
    if (path[0] != '/') {
        ut_buf_puts(&b, fixrun.cwd);
        ut_buf_putc(&b, '/');
    }
    ut_buf_puts(&b, path);
    char *in = ut_buf_take(&b);
    char *out = ut_malloc(strlen(in) + 2);
    size_t o = 0;
    for (const char *q = in; *q;) {
        while (*q == '/') q++;
        const char *e = strchr(q, '/');
        size_t n = e ? (size_t)(e - q) : strlen(q);
        if (!n) break;
        if (n == 1 && q[0] == '.') {
        } else if (n == 2 && q[0] == '.' && q[1] == '.') {
            while (o > 0 && out[o - 1] != '/') o--;
            if (o > 0) o--;
        } else {
            out[o++] = '/';
            memcpy(out + o, q, n);
            o += n;
        }
        q += n;
    }
    if (!o) out[o++] = '/';
    out[o] = 0;
    ut_free(in);
    return out;
}

static long fixes_index(const char *path) {
    char *k = normal_abs(path);
    const ut_smap_slot *sl = ut_smap_find(&fixrun.index, k, strlen(k));
    ut_free(k);
    return sl ? (long)sl->num - 1 : -1;
}

static bool fixed_in_run(const char *path) { return fixrun.on && fixes_index(path) >= 0; }

static void fixes_ent_free(void *v) {
    fixes_ent *e = v;
    ut_free(e->spans);
    an_deps_free(&e->deps);
    ut_free(e);
}

static int span_cmp(const void *a, const void *b) {
    const uint32_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : x[1] < y[1] ? -1 : x[1] > y[1];
}

typedef struct {
    long i;
    const char *path, *text;
    size_t len;
    fixes_ent *out;
} fixes_job;

/* On a thread of its own (the asking judge's thread memories stay as they are): the file's analysis with the run's
 * options, its safe fixes' spans, and what it read. */
static void *fixes_compute(void *arg) {
    fixes_job *fj = arg;
    in_fixes = true;
    an_guard_nested_thread();
    const bool *en = fixrun.file_enabled ? fixrun.file_enabled[fj->i] : fixrun.enabled;
    an_fix_options fo = fixrun.fix;
    char buf[1024];
    if (fixrun.fix_for_file && fo.target != AN_TARGET_NONE) fixrun.fix_for_file(fixrun.fix_ctx, fj->path, &fo, buf, sizeof buf);
    an_source src;
    an_source_init_mem(&src, fj->path, fj->text, fj->len);
    an_diag_list diags = {0};
    an_deps_begin();
    an_engine_analyze_source_ex(fixrun.cat, AN_LANG_PYTHON, &src, en, &fo, fixrun.regions, &diags);
    an_deps_end(&fj->out->deps);
    UT_VEC(uint32_t) sp = {0};
    for (size_t i = 0; i < diags.len; i++) {
        const an_diag *d = &diags.items[i];
        if (!d->fix || d->fix->applicability != AN_FIX_SAFE) continue;
        ut_vec_push(&sp, d->start);
        ut_vec_push(&sp, d->end);
    }
    if (sp.len > 2) qsort(sp.items, sp.len / 2, 2 * sizeof(uint32_t), span_cmp);
    fj->out->spans = sp.items, fj->out->n = sp.len / 2;
    an_diag_list_free(&diags);
    an_source_free(&src);
    return NULL;
}

static void note_ent(const fixes_ent *e, uint32_t **spans, size_t *n) {
    for (size_t i = 0; i < e->deps.len; i++) an_deps_note_hash(e->deps.items[i].path, e->deps.items[i].content);
    *n = e->n;
    *spans = e->n ? ut_malloc(2 * e->n * sizeof(uint32_t)) : NULL;
    if (e->n) memcpy(*spans, e->spans, 2 * e->n * sizeof(uint32_t));
}

static int fixes_of(const char *path, const char *text, size_t len, uint32_t **spans, size_t *n) {
    *spans = NULL, *n = 0;
    if (in_fixes || !fixrun.on) return -1;
    long i = fixes_index(path);
    if (i < 0 || fixrun.files->items[i].lang != AN_LANG_PYTHON) return 0;
    uint8_t h[20];
    an_cache_content(text, len, h);
    char *k = normal_abs(path);
    pthread_mutex_lock(&fixrun.lock);
    const ut_smap_slot *sl = ut_smap_find(&fixrun.memo, k, strlen(k));
    if (sl && !memcmp(((fixes_ent *)sl->val)->content, h, 20)) {
        note_ent(sl->val, spans, n);
        pthread_mutex_unlock(&fixrun.lock);
        ut_free(k);
        return 1;
    }
    pthread_mutex_unlock(&fixrun.lock);
    fixes_ent *e = ut_calloc(1, sizeof *e);
    memcpy(e->content, h, 20);
    fixes_job fj = {i, path, text, len, e};
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setstacksize(&at, (size_t)64 << 20); /* as the workers': deep trees */
    if (pthread_create(&t, &at, fixes_compute, &fj) != 0) {
        pthread_attr_destroy(&at);
        fixes_ent_free(e);
        ut_free(k);
        return 0;
    }
    pthread_join(t, NULL);
    pthread_attr_destroy(&at);
    note_ent(e, spans, n);
    pthread_mutex_lock(&fixrun.lock);
    ut_smap_slot *put = ut_smap_put(&fixrun.memo, k, strlen(k), NULL);
    if (put->val) fixes_ent_free(put->val);
    put->val = e;
    pthread_mutex_unlock(&fixrun.lock);
    ut_free(k);
    return 1;
}

void an_engine_fixes_begin(const an_catalog *cat, const an_file_list *files, const bool *enabled,
                           const bool *const *file_enabled, const an_fix_options *fix,
                           void (*fix_for_file)(void *ctx, const char *path, an_fix_options *fix, char *buf, size_t bufsz),
                           void *fix_ctx, bool regions) {
    an_engine_fixes_end();
    if (!fix || fix->target == AN_TARGET_NONE) return;
    fixrun.cat = cat, fixrun.files = files, fixrun.enabled = enabled, fixrun.file_enabled = file_enabled;
    fixrun.fix = *fix, fixrun.fix_for_file = fix_for_file, fixrun.fix_ctx = fix_ctx, fixrun.regions = regions;
    if (!getcwd(fixrun.cwd, sizeof fixrun.cwd)) fixrun.cwd[0] = 0;
    for (size_t i = 0; i < files->len; i++) {
        if (files->items[i].lang != AN_LANG_PYTHON) continue;
        char *k = normal_abs(files->items[i].path);
        ut_smap_put(&fixrun.index, k, strlen(k), NULL)->num = (int64_t)i + 1;
        ut_free(k);
    }
    /* the run's options, in the dependencies a guard notes (an_deps_note_fixed) */
    ut_buf b;
    ut_buf_init(&b);
    ut_buf_printf(&b, "%d\n%s\n%d", (int)fix->target, fix->helper_module ? fix->helper_module : "", (int)regions);
    uint8_t key[20];
    ut_hash20(b.data, b.len, key);
    ut_buf_free(&b);
    an_deps_set_fixed_run(fixed_in_run, key);
    fixrun.on = true;
    an_guard_set_fixes_of(fixes_of);
}

void an_engine_fixes_end(void) {
    if (!fixrun.on) return;
    an_guard_set_fixes_of(NULL);
    an_deps_set_fixed_run(NULL, NULL);
    fixrun.on = false;
    ut_smap_free(&fixrun.index, NULL);
    ut_smap_free(&fixrun.memo, fixes_ent_free);
    memset(&fixrun.index, 0, sizeof fixrun.index);
    memset(&fixrun.memo, 0, sizeof fixrun.memo);
}

/* The CPUs this process may run on (its affinity mask: taskset, cgroup cpusets, CI runners), not all of the
 * machine's. */
static int usable_cpus(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0) return n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

void an_engine_parallel(int requested, size_t items, void *(*fn)(void *), void *arg) {
    int n = requested > 0 ? requested : usable_cpus();
    if (n < 1) n = 1;
    if ((size_t)n > items) n = (int)(items ? items : 1);
    if (n == 1) {
        fn(arg);
        return;
    }
    pthread_t *t = ut_malloc(sizeof(pthread_t) * (size_t)n);
    int started = 0;
    for (int i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, fn, arg) == 0) started++;
        else break;
    if (!started) fn(arg);
    for (int i = 0; i < started; i++) pthread_join(t[i], NULL);
    ut_free(t);
}

void an_engine_run(const an_catalog *cat, const an_file_list *files, const an_options *opt, an_results *out) {
    out->len = files->len;
    out->items = ut_calloc(files->len ? files->len : 1, sizeof(an_file_result));
    job j = {cat, files, opt, out, 0, 0, {0}, {{0}}, false, {{0}}, getenv("XPUIFY_FILE_TIMES") != NULL};
    languages_enabled(cat, opt->enabled, j.lang_on);
    if (opt->cache) an_cache_run_key(opt->cache, cat, opt->enabled, &opt->fix, !opt->whole_files, &j.run);
    if (opt->cache && opt->c.mode == AN_C_FAST && j.lang_on[AN_LANG_C]) {
        bool any_c = false;
        for (size_t i = 0; i < files->len && !any_c; i++) any_c = files->items[i].lang == AN_LANG_C;
        if (any_c) j.c_cached = true, c_run(&j.run, &j.crun);
    }
    an_engine_parallel(opt->threads, files->len, work, &j);
}

void an_results_free(an_results *r) {
    for (size_t i = 0; i < r->len; i++) {
        ut_free(r->items[i].error);
        an_source_free(&r->items[i].src);
        an_diag_list_free(&r->items[i].diags);
    }
    ut_free(r->items);
    r->items = NULL;
    r->len = 0;
}

void an_engine_analyze_source_ex(const an_catalog *cat, an_lang lang, const an_source *src, const bool *en,
                                 const an_fix_options *fix, bool regions, an_diag_list *out) {
    worker_state ws = {0};
    bool parsed, on[AN_LANG__COUNT];
    uint32_t bytes;
    languages_enabled(cat, en, on);
    if (prefilter(&ws, cat, lang, src, en, on)) analyze(&ws, cat, lang, src, en, fix, regions, out, &parsed, &bytes, NULL);
    worker_free(&ws);
}

void an_engine_analyze_source(const an_catalog *cat, an_lang lang, const an_source *src, const bool *en,
                              const an_fix_options *fix, an_diag_list *out) {
    an_engine_analyze_source_ex(cat, lang, src, en, fix, false, out);
}

bool an_engine_parses(an_lang lang, const char *path, const char *text, size_t len) {
    if (lang != AN_LANG_PYTHON) return true;
    an_source src;
    an_source_init_mem(&src, path, text, len);
    an_python *py = an_python_new();
    bool ok = an_python_parses(py, &src);
    an_python_free(py);
    an_source_free(&src);
    return ok;
}

int an_engine_c_parse_errors(const an_catalog *cat, const char *path, const char *text, size_t len) {
    return an_engine_c_error_lines(cat, path, text, len, NULL, NULL);
}

int an_engine_c_error_lines(const an_catalog *cat, const char *path, const char *text, size_t len, an_c_lines *parse,
                            an_c_lines *all) {
    an_lang lang;
    if (!an_lang_for_path(path, &lang) || lang != AN_LANG_C) return -1;
    an_source src;
    an_source_init_mem(&src, path, text, len);
    an_c *c = an_c_new(NULL);
    int n = an_c_error_lines(c, cat, &src, parse, all);
    an_c_free(c);
    an_source_free(&src);
    return n;
}

bool an_engine_line_info(an_lang lang, const an_source *src, an_line_info *li, an_suppressions *sup) {
    if (lang != AN_LANG_PYTHON) return false;
    an_python *py = an_python_new();
    bool ok = an_python_line_info(py, src, li, sup);
    an_python_free(py);
    return ok;
}
