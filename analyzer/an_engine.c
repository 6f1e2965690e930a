/* an_engine: the parallel driver over files. Each worker owns its front-end state (parsers). */
#include "an_engine.h"
#include "an_cache.h"
#include "an_python.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

typedef struct {
    const an_catalog *cat;
    const an_file_list *files;
    const an_options *opt;
    an_results *out;
    atomic_size_t next;
    an_cache_run run; /* the cache key's run-wide part */
} job;

typedef struct {
    an_python *py;
} worker_state;

static void analyze(worker_state *ws, const an_catalog *cat, an_lang lang, const an_source *src, const bool *en,
                    const an_fix_options *fix, an_diag_list *out, bool *parsed) {
    *parsed = false;
    if (!an_catalog_prefilter(cat, lang, src->text, src->len)) return;
    *parsed = true;
    switch (lang) {
    case AN_LANG_PYTHON:
        if (!ws->py) ws->py = an_python_new();
        an_python_analyze(ws->py, cat, src, en, fix, out);
        break;
    default:
        break;
    }
}

static void *work(void *arg) {
    job *j = arg;
    worker_state ws = {0};
    for (;;) {
        size_t i = atomic_fetch_add(&j->next, 1);
        if (i >= j->files->len) break;
        const an_file *f = &j->files->items[i];
        an_file_result *r = &j->out->items[i];
        r->file = f;
        r->status = an_source_load(&r->src, f->path, j->opt->max_file_size, &r->error);
        if (r->status != AN_LOAD_OK) continue;
        an_fix_options fo = j->opt->fix;
        char buf[1024];
        if (j->opt->fix_for_file && fo.target != AN_TARGET_NONE) j->opt->fix_for_file(j->opt->fix_ctx, f->path, &fo, buf, sizeof buf);
        an_cache *cache = j->opt->cache;
        if (!cache || !an_cache_get(cache, j->cat, &j->run, f->path, &fo, r->src.text, r->src.len, &r->diags, &r->parsed)) {
            analyze(&ws, j->cat, f->lang, &r->src, j->opt->enabled, &fo, &r->diags, &r->parsed);
            if (cache) an_cache_put(cache, j->cat, &j->run, f->path, &fo, r->src.text, r->src.len, &r->diags, r->parsed);
        }
        if (!r->diags.len && !j->opt->keep_sources) an_source_free(&r->src);
    }
    an_python_free(ws.py);
    return NULL;
}

void an_engine_run(const an_catalog *cat, const an_file_list *files, const an_options *opt, an_results *out) {
    out->len = files->len;
    out->items = ut_calloc(files->len ? files->len : 1, sizeof(an_file_result));
    job j = {cat, files, opt, out, 0, {{0}}};
    if (opt->cache) an_cache_run_key(opt->cache, cat, opt->enabled, &opt->fix, &j.run);
    int n = opt->threads > 0 ? opt->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) n = 1;
    if ((size_t)n > files->len) n = (int)(files->len ? files->len : 1);
    if (n == 1) {
        work(&j);
        return;
    }
    pthread_t *t = ut_malloc(sizeof(pthread_t) * (size_t)n);
    int started = 0;
    for (int i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, work, &j) == 0) started++;
        else break;
    if (!started) work(&j);
    for (int i = 0; i < started; i++) pthread_join(t[i], NULL);
    ut_free(t);
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

void an_engine_analyze_source(const an_catalog *cat, an_lang lang, const an_source *src, const bool *en,
                              const an_fix_options *fix, an_diag_list *out) {
    worker_state ws = {0};
    bool parsed;
    analyze(&ws, cat, lang, src, en, fix, out, &parsed);
    an_python_free(ws.py);
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
