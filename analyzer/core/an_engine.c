/* an_engine: the parallel driver over files. Each worker owns its front-end state (parsers). */
#include "analyzer/core/an_engine.h"
#include "analyzer/c/an_cfix.h"
#include "analyzer/c/an_clang.h"
#include "analyzer/core/an_cache.h"
#include "analyzer/python/an_python.h"
#include "analyzer/python/an_pynest.h"
#include "analyzer/core/an_suppress.h"
#include "analyzer/text/an_text.h"
#include <pthread.h>
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
        work_file(j, &ws, i);
    }
    worker_free(&ws);
    return NULL;
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
    job j = {cat, files, opt, out, 0, 0, {0}, {{0}}, false, {{0}}};
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
