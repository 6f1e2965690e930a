/* cli_target: --target auto|accelerator|compat: reads the project's torch requirement and decides, saying why;
 * gives each file its compat helper import. Shared by check and fix. */
#include "analyzer/core/an_target.h"
#include "analyzer/project/an_project.h"
#include "analyzer/project/an_requirement.h"
#include "analyzer/python/an_types.h"
#include "rewriters/rw_target.h"
#include "cli/cli_target.h"
#include <limits.h>
#include <stdio.h>
#include <string.h>

bool cli_target_parse(const char *s, cli_target_mode *m) {
    if (!strcmp(s, "auto")) *m = CLI_TARGET_AUTO;
    else if (!strcmp(s, "accelerator")) *m = CLI_TARGET_ACCELERATOR;
    else if (!strcmp(s, "compat")) *m = CLI_TARGET_COMPAT;
    else if (!strcmp(s, "none")) *m = CLI_TARGET_NONE;
    else return false;
    return true;
}

static const char *project_dir(const char *const *paths, size_t n, char *buf, size_t sz) {
    const char *p = n ? paths[0] : ".";
    snprintf(buf, sz, "%s", p);
    struct stat st;
    if (stat(buf, &st) == 0 && !S_ISDIR(st.st_mode)) {
        char *s = strrchr(buf, '/');
        if (s) *s = 0;
        else snprintf(buf, sz, ".");
    }
    return buf;
}

/* the newest torch any fix needs, from a dry run on the accelerator target */
static void needed_version(const an_catalog *cat, const an_file_list *files, const bool *enabled, int *maj, int *min,
                           const char **what, struct an_cache *cache) {
    an_options o = {0};
    o.cache = cache;
    o.max_file_size = 10u << 20;
    o.enabled = enabled;
    o.fix.target = AN_TARGET_ACCELERATOR;
    o.fix.unsafe = true;
    an_results r = {0};
    an_engine_run(cat, files, &o, &r);
    *maj = 2, *min = 6;
    *what = NULL;
    static char buf[256];
    for (size_t i = 0; i < r.len; i++)
        for (size_t j = 0; j < r.items[i].diags.len; j++) {
            const an_diag *d = &r.items[i].diags.items[j];
            if (!d->fix || !d->fix->min_torch) continue;
            if (an_version_newer(d->fix->min_torch, *maj, *min)) {
                an_parse_version(d->fix->min_torch, maj, min);
                snprintf(buf, sizeof buf, "%s (%s:%u)", d->entry ? d->entry->name : d->rule->name, r.items[i].file->path, d->line);
                *what = buf;
            }
        }
    an_results_free(&r);
}

void cli_target_choose(cli_target_mode mode, const char *torch_version, const char *const *paths, size_t npaths,
                       const an_catalog *cat, const an_file_list *files, const bool *enabled, an_fix_options *out,
                       ut_buf *reason, struct an_cache *cache) {
    memset(out, 0, sizeof *out);
    char dir[4096];
    an_torch_req req;
    an_torch_requirement(project_dir(paths, npaths, dir, sizeof dir), &req);
    /* the project model's root: the directory check/fix was given (read when a compat fix first needs it) */
    for (size_t i = 0; i < npaths; i++) {
        struct stat st;
        if (stat(paths[i], &st) == 0 && S_ISDIR(st.st_mode)) an_project_hint_root(paths[i]);
    }
    int vmaj = 0, vmin = 0;
    bool vknown = false;
    if (torch_version && an_parse_version(torch_version, &vmaj, &vmin)) vknown = true;
    else if (req.known) vmaj = req.major, vmin = req.minor, vknown = true;
    switch (mode) {
    case CLI_TARGET_NONE:
        ut_buf_puts(reason, "none: findings only");
        break;
    case CLI_TARGET_ACCELERATOR:
        out->target = AN_TARGET_ACCELERATOR;
        if (vknown) out->torch_major = vmaj, out->torch_minor = vmin;
        ut_buf_printf(reason, "accelerator (requested)%s", vknown ? "" : "; no torch requirement found, so every fix assumes the newest torch");
        if (vknown) ut_buf_printf(reason, "; fixes needing torch newer than %d.%d are not applied", vmaj, vmin);
        break;
    case CLI_TARGET_COMPAT:
        out->target = AN_TARGET_COMPAT;
        ut_buf_puts(reason, "compat (requested)");
        break;
    case CLI_TARGET_AUTO: {
        if (!vknown) {
            out->target = AN_TARGET_COMPAT;
            ut_buf_puts(reason, "compat: the project declares no minimum torch version (requirements*.txt, pyproject.toml, setup.py, setup.cfg)");
            break;
        }
        int nmaj, nmin;
        const char *what;
        needed_version(cat, files, enabled, &nmaj, &nmin, &what, cache);
        const char *src = torch_version ? "--torch-version" : req.source;
        if (!(nmaj > vmaj || (nmaj == vmaj && nmin > vmin))) {
            out->target = AN_TARGET_ACCELERATOR;
            out->torch_major = vmaj, out->torch_minor = vmin;
            ut_buf_printf(reason, "accelerator: %s guarantees torch >= %d.%d, and the fixes need at most %d.%d", src, vmaj,
                          vmin, nmaj, nmin);
        } else {
            out->target = AN_TARGET_COMPAT;
            ut_buf_printf(reason, "compat: %s guarantees torch >= %d.%d, but %s needs torch %d.%d", src, vmaj, vmin,
                          what ? what : "torch.accelerator", nmaj, nmin);
        }
        break;
    }
    }
    an_torch_req_free(&req);
}

void cli_target_fix_for_file(void *ctx, const char *path, an_fix_options *fix, char *buf, size_t sz) {
    const cli_helper_opts *h = ctx;
    /* the project facts a Python file's fixes depend on (an unknown receiver's .cuda() is safe only while no other
     * file of the project gives objects a .cuda() of their own): part of the results cache's key */
    static _Thread_local char facts[PATH_MAX + 64];
    size_t pl_len = strlen(path);
    if (pl_len > 3 && !strcmp(path + pl_len - 3, ".py")) {
        an_types_project_facts(path, facts, sizeof facts);
        fix->project_facts = facts;
    }
    if (fix->target != AN_TARGET_COMPAT) return;
    /* the project model knows how the file is imported, so how it can import the helper */
    an_helper_place pl;
    an_project_helper_place(h->path ? NULL : an_project_shared(path), path, h->module, h->path, &pl);
    snprintf(buf, sz, "%s", pl.import ? pl.import : pl.withheld);
    fix->helper_import = pl.import ? buf : NULL;
    fix->helper_withheld = pl.import ? NULL : buf;
    fix->helper_module = h->module;
    an_helper_place_free(&pl);
}

char **cli_target_missing_helpers(const an_results *res, const an_fix_options *fix, const cli_helper_opts *h) {
    if (fix->target != AN_TARGET_COMPAT) return NULL;
    char **out = NULL;
    for (size_t i = 0; i < res->len; i++) {
        const an_file_result *f = &res->items[i];
        bool needs = false;
        for (size_t j = 0; j < f->diags.len && !needs; j++)
            needs = f->diags.items[j].fix && (f->diags.items[j].fix->needs & AN_NEED_HELPER);
        if (!needs) continue;
        an_helper_place pl;
        an_project_helper_place(h->path ? NULL : an_project_shared(f->file->path), f->file->path, h->module, h->path, &pl);
        struct stat st;
        if (pl.path && stat(pl.path, &st) != 0) {
            if (!out) out = ut_calloc(res->len, sizeof *out);
            out[i] = ut_strdup(pl.path);
        }
        an_helper_place_free(&pl);
    }
    return out;
}

void cli_target_missing_helpers_free(char **paths, size_t n) {
    for (size_t i = 0; paths && i < n; i++) ut_free(paths[i]);
    ut_free(paths);
}
