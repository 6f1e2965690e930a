/* cli_target: --target auto|accelerator|compat: reads the project's torch requirement and decides, saying why;
 * gives each file its compat helper import. Shared by check and fix. */
#include "analyzer/core/an_target.h"
#include "rewriters/rw_target.h"
#include "cli/cli_target.h"
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
    rw_torch_req req;
    rw_torch_requirement(project_dir(paths, npaths, dir, sizeof dir), &req);
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
    rw_torch_req_free(&req);
}

void cli_target_fix_for_file(void *ctx, const char *path, an_fix_options *fix, char *buf, size_t sz) {
    const cli_helper_opts *h = ctx;
    if (fix->target != AN_TARGET_COMPAT) return;
    /* the import depends on the file's directory only, and the walk's order keeps the files of a directory together:
     * each worker thread remembers its last directory (placing the helper stats and resolves the package chain) */
    static _Thread_local char last_dir[1024], last_import[512], last_key[1024];
    char key[1024];
    snprintf(key, sizeof key, "%s\n%s", h->module, h->path ? h->path : "");
    const char *slash = strrchr(path, '/');
    size_t dn = slash ? (size_t)(slash - path) : 0;
    if (!strcmp(last_key, key) && *last_import && dn < sizeof last_dir && !memcmp(last_dir, path, dn) && !last_dir[dn]) {
        snprintf(buf, sz, "%s", last_import);
    } else {
        rw_helper_place pl;
        rw_helper_place_for(path, h->module, h->path, &pl);
        snprintf(buf, sz, "%s", pl.import);
        if (dn < sizeof last_dir && strlen(pl.import) < sizeof last_import) {
            memcpy(last_dir, path, dn);
            last_dir[dn] = 0;
            snprintf(last_import, sizeof last_import, "%s", pl.import);
            snprintf(last_key, sizeof last_key, "%s", key);
        } else {
            *last_import = 0;
        }
        rw_helper_place_free(&pl);
    }
    fix->helper_import = buf;
    fix->helper_module = h->module;
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
        rw_helper_place pl;
        rw_helper_place_for(f->file->path, h->module, h->path, &pl);
        struct stat st;
        if (stat(pl.path, &st) != 0) {
            if (!out) out = ut_calloc(res->len, sizeof *out);
            out[i] = ut_strdup(pl.path);
        }
        rw_helper_place_free(&pl);
    }
    return out;
}

void cli_target_missing_helpers_free(char **paths, size_t n) {
    for (size_t i = 0; paths && i < n; i++) ut_free(paths[i]);
    ut_free(paths);
}
