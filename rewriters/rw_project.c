/* rw_project: per-file fixing with helper placement and atomic writes (see rw_project.h). */
#include "rewriters/rw_project.h"
#include "analyzer/project/an_project.h"
#include "rewriters/rw_diff.h"
#include "rewriters/rw_fixer.h"
#include "rewriters/rw_target.h"
#include "rewriters/rw_write.h"
#include "config/cf_confine.h"
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <stdio.h>
#include <unistd.h>

void rw_project_init(rw_project *p) {
    memset(p, 0, sizeof *p);
    ut_buf_init(&p->patch);
}

void rw_project_free(rw_project *p) {
    for (size_t k = 0; k < p->helpers_done.len; k++) ut_free(p->helpers_done.items[k]);
    ut_vec_free(&p->helpers_done);
    ut_buf_free(&p->patch);
}

/* The compat helper, once per location, when the fixed text imports it. false: it could not be written. */
static bool place_helper(rw_project *p, const char *path, const an_fix_options *ffo, const char *fixed_text) {
    if (ffo->target != AN_TARGET_COMPAT || !ffo->helper_import || !an_helper_import_in(fixed_text, strlen(fixed_text), ffo->helper_import)) return true;
    an_helper_place pl = {0};
    an_project_helper_place(p->helper_path ? NULL : an_project_shared(path), path, p->helper_module, p->helper_path, &pl);
    if (!pl.path) {
        an_helper_place_free(&pl);
        return true;
    }
    bool ok = true, done = false;
    for (size_t k = 0; k < p->helpers_done.len && !done; k++) done = !strcmp(p->helpers_done.items[k], pl.path);
    if (!done) {
        ut_vec_push(&p->helpers_done, ut_strdup(pl.path));
        if (p->diff) {
            if (access(pl.path, F_OK) != 0) {
                char *t = rw_helper_text(p->priority);
                rw_diff_new_file(pl.path, t, strlen(t), &p->patch);
                ut_free(t);
            }
        } else {
            char *why;
            int w = rw_helper_write(pl.path, p->priority, &why);
            if (w < 0) {
                fprintf(stderr, "xpuify: error: %s: cannot write the device helper: %s\n", pl.path, why);
                ut_free(why);
                ok = false;
                p->errors = true;
            } else if (w > 0 && !p->quiet) {
                fprintf(stderr, "xpuify: wrote the device helper %s\n", pl.path);
            }
        }
    }
    an_helper_place_free(&pl);
    return ok;
}

void rw_project_compute(const rw_project *p, const an_file *f, const an_source *src, rw_fixed_file *out) {
    memset(out, 0, sizeof *out);
    if (!an_catalog_prefilter(p->cat, f->lang, src->text, src->len, NULL)) return;
    out->fix = p->fix;
    if (p->fix_for_file) p->fix_for_file(p->fix_ctx, f->path, &out->fix, out->buf, sizeof out->buf);
    rw_fix_source(p->cat, f->lang, src, p->enabled, &out->fix, p->unsafe, &out->ff);
    out->ran = true;
}

/* Where the fix of path is written, or NULL (said why) when it is not: a symlink is kept and its target fixed when
 * that lies inside the project (the git work tree holding the link, or the working directory), else left alone; a
 * file with several hard links is left alone (the atomic rename would split them: the other names would keep the
 * old text without a word). real: room for the resolved target. */
static const char *write_target(const char *path, char real[PATH_MAX]) {
    struct stat st;
    const char *dest = path;
    real[0] = 0;
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
        char *root = NULL, cwd[PATH_MAX], here[PATH_MAX * 2 + 2], dir[PATH_MAX];
        bool inside = false;
        if (realpath(path, real) && getcwd(cwd, sizeof cwd)) {
            char rcwd[PATH_MAX];
            if (realpath(cwd, rcwd)) snprintf(cwd, sizeof cwd, "%s", rcwd);
            /* the link's own place (its directory resolved, not the link) decides the project */
            snprintf(dir, sizeof dir, "%s", path);
            char *sl = strrchr(dir, '/');
            const char *base = sl ? sl + 1 : path;
            if (sl) *sl = 0;
            char rdir[PATH_MAX];
            if (realpath(sl ? (*dir ? dir : "/") : ".", rdir)) {
                snprintf(here, sizeof here, "%s/%s", rdir, base);
                root = cf_project_root(here, cwd);
                inside = cf_confined(root, real);
            }
        }
        if (!inside) {
            fprintf(stderr, "xpuify: warning: %s: a symlink to %s, outside the project%s%s; left untouched\n", path,
                    *real ? real : "a missing file", root ? " " : "", root ? root : "");
            ut_free(root);
            return NULL;
        }
        ut_free(root);
        dest = real;
    }
    if (stat(dest, &st) == 0 && st.st_nlink > 1) {
        fprintf(stderr, "xpuify: warning: %s: has %lu hard links; replacing it would split them (the other names "
                        "would keep the old text); left untouched\n", path, (unsigned long)st.st_nlink);
        return NULL;
    }
    return dest;
}

bool rw_project_apply(rw_project *p, const an_file *f, an_source *src, rw_fixed_file *fx) {
    if (!fx->ran) return false;
    rw_file_fix *ff = &fx->ff;
    if (ff->error) {
        fprintf(stderr, "xpuify: error: %s: %s\n", f->path, ff->error);
        p->errors = true;
    }
    if (!ff->text) return false;
    /* a file that will not be written gets no helper: refuse it before anything is placed beside it */
    struct stat st;
    if (!p->diff && stat(f->path, &st) == 0 && !(st.st_mode & S_IWUSR)) {
        fprintf(stderr, "xpuify: error: %s: file is read-only; left untouched\n", f->path);
        p->errors = true;
        return false;
    }
    bool helper_ok = place_helper(p, f->path, &fx->fix, ff->text);
    if (helper_ok && p->on_fixed && !p->on_fixed(p->on_fixed_ctx, f->path, f->lang, &fx->fix, ff->text, &p->patch)) {
        helper_ok = false;
        p->errors = true;
    }
    if (p->diff) {
        rw_diff_unified(f->path, src->text, src->len, ff->text, ff->len, &p->patch);
        p->fixed += ff->fixed, p->files_changed++;
        return false;
    }
    if (!helper_ok) return false;
    char real[PATH_MAX];
    const char *dest = write_target(f->path, real);
    if (!dest) return false;
    char *why;
    int w = rw_replace_atomic(dest, ff->text, ff->len, src->text, src->len, &why);
    if (w == RW_WRITE_ALREADY) { /* a concurrent run got there first: the file is as this run would leave it */
        ut_free(why);
    } else if (w != 0) {
        fprintf(stderr, "xpuify: error: %s: %s\n", f->path, why);
        ut_free(why);
        p->errors = true;
        return false;
    }
    p->fixed += ff->fixed, p->files_changed++;
    an_source_free(src);
    an_source_init_mem(src, f->path, ff->text, ff->len);
    return true;
}

void rw_fixed_file_free(rw_fixed_file *fx) {
    if (fx->ran) rw_file_fix_free(&fx->ff);
    fx->ran = false;
}

void rw_project_fix_file(rw_project *p, const an_file *f, an_source *src) {
    rw_fixed_file fx;
    rw_project_compute(p, f, src, &fx);
    rw_project_apply(p, f, src, &fx);
    rw_fixed_file_free(&fx);
}
