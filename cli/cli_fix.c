/* cli_fix: `xpuify fix [PATH...]`: applies safe fixes in place (--unsafe-fixes: unsafe ones too) or prints a
 * unified diff (--diff); writes the compat helper once where it is imported; prints what remains as `check`
 * would. Exit: 0 nothing remains, 1 findings remain (--diff: something would change), 2 errors. */
#include "analyzer/python/an_pynest.h"
#include "rewriters/rw_diff.h"
#include "rewriters/rw_project.h"
#include "rewriters/rw_target.h"
#include "rewriters/rw_write.h"
#include "cli/cli.h"
#include "cli/cli_layers.h"
#include "cli/cli_opts.h"
#include "cli/cli_progress.h"
#include "util/ut_suggest.h"
#include "analyzer/c/an_cfix.h"
#include <errno.h>
#include <stdatomic.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    rw_fixed_file fx;
    an_diag_list remain; /* what check would report after the fix */
    bool remain_fixed;   /* remain describes the fixed text (the file is to be written), not the original */
} fix_item;

typedef struct {
    const cli_opts *o;
    const rw_project *pj;
    an_file_result *res;
    fix_item *items;
    atomic_size_t next;
    bool diff;
    atomic_size_t done; /* files finished, for the progress line */
    cli_progress *progress;
} fix_job;

/* Reads file i into r; false when it cannot be read or holds nothing any enabled rule could report (then r holds
 * no text). */
static bool load_candidate(const cli_opts *o, size_t i, an_file_result *r) {
    const an_file *f = &o->files.items[i];
    r->file = f;
    r->status = an_source_load(&r->src, f->path, o->max_file_size, &r->error);
    if (r->status != AN_LOAD_OK) return false;
    if (an_engine_may_report(o->cat, f->lang, o->file_enabled[i], r->src.text, r->src.len, NULL)) return true;
    an_source_free(&r->src);
    return false;
}

/* One thread's share of the Python and text files: read, fixpoint, and what remains. */
static void *fix_worker(void *arg) {
    fix_job *j = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&j->next, 1);
        if (i >= j->o->files.len) break;
        const an_file *f = &j->o->files.items[i];
        if (f->lang == AN_LANG_C) continue; /* fixed in file order, after this */
        cli_progress_update(j->progress, atomic_fetch_add(&j->done, 1) + 1, j->o->files.len);
        an_file_result *r = &j->res[i];
        fix_item *it = &j->items[i];
        if (!load_candidate(j->o, i, r)) continue;
        if (f->lang == AN_LANG_PYTHON && (r->error = an_py_nesting_why(&r->src))) { /* never parsed (an_pynest.h) */
            r->status = AN_LOAD_NOT_ANALYZED;
            an_source_free(&r->src);
            continue;
        }
        const bool *en = j->o->file_enabled[i];
        if (r->src.encoding) {
            /* decoded from its coding cookie's encoding for analysis; fix writes UTF-8 only, so it leaves such a
             * file as it is (its findings remain) rather than change its encoding under it */
            if (!j->o->quiet)
                fprintf(stderr, "xpuify: warning: %s: encoded in %s (coding cookie); not fixed: xpuify writes UTF-8 "
                        "files only (convert it to UTF-8 to fix it)\n", f->path, r->src.encoding);
            an_engine_analyze_source_ex(j->o->cat, f->lang, &r->src, en, NULL, !j->o->whole_files, &r->diags);
            if (!r->diags.len) an_source_free(&r->src);
            continue;
        }
        rw_project_compute(j->pj, f, &r->src, &it->fx);
        it->remain_fixed = !j->diff && it->fx.ff.text;
        /* what remains is described for the chosen target (compat: the helper's names, not torch.accelerator's) */
        const an_fix_options *mfo = it->fx.ran ? &it->fx.fix : &j->pj->fix;
        if (it->remain_fixed) {
            an_source fixed;
            an_source_init_mem(&fixed, f->path, it->fx.ff.text, it->fx.ff.len);
            an_engine_analyze_source_ex(j->o->cat, f->lang, &fixed, en, mfo, !j->o->whole_files, &it->remain);
            an_source_free(&fixed);
        } else {
            an_engine_analyze_source_ex(j->o->cat, f->lang, &r->src, en, mfo, !j->o->whole_files, &it->remain);
        }
        if (!it->fx.ran) { /* no trigger a fix could act on: what remains is all there is */
            r->diags = it->remain;
            it->remain = (an_diag_list){0};
        }
        /* nothing to write and nothing to show: the text need not wait for the ordered half */
        if (!it->fx.ff.text && !it->remain.len && !r->diags.len) an_source_free(&r->src);
    }
    return NULL;
}

int cli_fix(int argc, char **argv) {
    cli_opts o;
    cli_opts_init(&o);
    bool bad = false, only_paths = false, diff = false, unsafe = false, no_progress = false;
    const char *layer_dir = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_paths || a[0] != '-' || !strcmp(a, "-")) { ut_vec_push(&o.paths, a); continue; }
        if (!strcmp(a, "--")) { only_paths = true; continue; }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            printf("Usage: xpuify fix [options] [PATH...]\n\nOptions:\n"
                   "      --diff              print a unified diff and write nothing (exit 1 when it would change something)\n"
                   "      --unsafe-fixes      also apply fixes marked unsafe\n"
                   "      --no-progress       no progress line (shown only on a terminal, for long runs)\n"
                   "      --layer-dir DIR     C/C++/CUDA: where the portable layers (xpuify_gpu.h, xpuify_ccl.h) go\n"
                   "                          (default: the first PATH, or its directory)\n%s", cli_opts_help());
            cli_opts_free(&o);
            return 0;
        }
        if (!strcmp(a, "--diff")) { diff = true; continue; }
        if (!strcmp(a, "--unsafe-fixes")) { unsafe = true; continue; }
        if (!strcmp(a, "--no-progress")) { no_progress = true; continue; }
        if (!strcmp(a, "--layer-dir") || !strncmp(a, "--layer-dir=", 12)) {
            layer_dir = a[11] == '=' ? a + 12 : i + 1 < argc ? argv[++i] : NULL;
            if (!layer_dir || !*layer_dir) {
                fprintf(stderr, "xpuify: error: --layer-dir needs a directory\n");
                bad = true;
            }
            continue;
        }
        int r = cli_opts_parse(&o, argc, argv, &i);
        if (r < 0) bad = true;
        else if (r == 0) {
            char near[64];
            bool has = ut_suggest_option(a, near, sizeof near, cli_opts_help(), "--diff --unsafe-fixes --layer-dir",
                                         (const char *)NULL);
            fprintf(stderr, "xpuify: error: unknown option `%s`%s%s%s (see `xpuify fix --help`)\n", a,
                    has ? "; did you mean `" : "", has ? near : "", has ? "`?" : "");
            bad = true;
        }
    }
    int rc = CLI_EXIT_USAGE;
    an_results res = {0};
    FILE *out = stdout;
    if (bad || !cli_opts_prepare(&o)) goto done;
    an_fix_options fo = {0};
    ut_buf reason;
    ut_buf_init(&reason);
    cli_target_choose(o.target, o.torch_version, o.paths.items, o.paths.len, o.cat, &o.files, o.enabled, &fo, &reason,
                      NULL);
    if (!o.quiet) fprintf(stderr, "xpuify: target: %s\n", reason.data);
    ut_buf_free(&reason);
    fo.whole_files = o.whole_files;
    bool layer_errors = false;
    char layer_buf[PATH_MAX];
    if (!layer_dir) {
        struct stat lst;
        snprintf(layer_buf, sizeof layer_buf, "%s", o.paths.len ? o.paths.items[0] : ".");
        if (stat(layer_buf, &lst) == 0 && !S_ISDIR(lst.st_mode)) {
            char *sl = strrchr(layer_buf, '/');
            if (sl) *sl = 0;
            else snprintf(layer_buf, sizeof layer_buf, ".");
        }
        layer_dir = layer_buf;
    }
    if (!diff && access(layer_dir, F_OK) != 0 && mkdir(layer_dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "xpuify: error: --layer-dir %s: %s\n", layer_dir, strerror(errno));
        layer_errors = true;
    }
    cli_layers lc = {&o.helper, layer_dir, diff, o.quiet, {false, false}, "", "", o.cat, false};
    UT_VEC(char *) kernels = {0};
    rw_project pj;
    rw_project_init(&pj);
    pj.cat = o.cat, pj.enabled = o.enabled, pj.fix = fo;
    pj.fix_for_file = cli_layers_fix_for_file, pj.fix_ctx = &lc;
    pj.on_fixed = cli_layers_write, pj.on_fixed_ctx = &lc;
    pj.helper_module = o.helper.module, pj.helper_path = o.helper.path, pj.priority = o.priority;
    pj.unsafe = unsafe, pj.diff = diff, pj.quiet = o.quiet;
    res.len = o.files.len;
    res.items = ut_calloc(res.len ? res.len : 1, sizeof(an_file_result));
    /* Python and text files go to their fixpoint on all threads; then, in file order, each is written (or diffed)
     * and C files are fixed (their portable layers are shared state). */
    cli_progress prog;
    cli_progress_init(&prog, !no_progress && !o.quiet, "fixed");
    fix_job job = {&o, &pj, res.items, ut_calloc(res.len ? res.len : 1, sizeof(fix_item)), 0, diff, 0, &prog};
    /* the files are fixed together: a guard in one counts the safe fixes of another as done (an_guard) */
    an_engine_fixes_begin(o.cat, &o.files, o.enabled, (const bool *const *)o.file_enabled, &fo, cli_layers_fix_for_file,
                          &lc, !o.whole_files);
    an_engine_parallel(o.threads, res.len, fix_worker, &job);
    for (size_t i = 0; i < o.files.len; i++) {
        const an_file *f = &o.files.items[i];
        an_file_result *r = &res.items[i];
        fix_item *it = &job.items[i];
        if (f->lang == AN_LANG_C) {
            cli_progress_update(&prog, ++job.done, o.files.len);
            if (!load_candidate(&o, i, r)) continue;
            cli_progress_pause(&prog); /* writing a portable layer or an error is said on stderr */
            if (r->src.encoding) { /* as in fix_worker: never written back in another encoding */
                if (!o.quiet)
                    fprintf(stderr, "xpuify: warning: %s: encoded in %s (coding cookie); not fixed: xpuify writes "
                            "UTF-8 files only (convert it to UTF-8 to fix it)\n", f->path, r->src.encoding);
            } else {
                rw_project_fix_file(&pj, f, &r->src);
            }
            an_engine_analyze_source(o.cat, f->lang, &r->src, o.file_enabled[i], NULL, &r->diags);
        } else if (it->fx.ran) {
            if (it->fx.ff.text) cli_progress_pause(&prog); /* the helper written, or a write error, is said */
            an_fix_options mfo = it->fx.fix; /* for what remains; its strings live in it->fx.buf */
            bool written = rw_project_apply(&pj, f, &r->src, &it->fx);
            /* what remains, as check reports it: computed on the thread for the text the file now has */
            if (written == it->remain_fixed) {
                r->diags = it->remain;
            } else {
                an_diag_list_free(&it->remain);
                an_engine_analyze_source_ex(o.cat, f->lang, &r->src, o.file_enabled[i], &mfo, !o.whole_files, &r->diags);
            }
            rw_fixed_file_free(&it->fx);
        }
        /* the migration summary: every kernel left to port */
        for (size_t k = 0; k < r->diags.len; k++) {
            const an_diag *d = &r->diags.items[k];
            if (strcmp(d->rule->name, "cuda-kernel-definition")) continue;
            ut_buf kb;
            ut_buf_init(&kb);
            ut_buf_printf(&kb, "%s:%u:%u: %s", f->path, d->line, d->col, d->message);
            ut_vec_push(&kernels, ut_buf_take(&kb));
        }
    }
    an_engine_fixes_end();
    ut_free(job.items);
    cli_progress_end(&prog);
    bool errors = o.input_error || pj.errors || layer_errors;
    size_t fixed = pj.fixed, files_changed = pj.files_changed;
    ut_buf *patch = &pj.patch;
    if (cli_report_unreadable(&o, &res)) errors = true;
    cli_opts_apply_severity(&o, &res);
    if (o.output_file) {
        out = fopen(o.output_file, "w");
        if (!out) {
            fprintf(stderr, "xpuify: error: %s: cannot write: %s\n", o.output_file, strerror(errno));
            out = stdout;
            errors = true;
        }
    }
    size_t remaining = out_count(&res);
    for (size_t i = 0; i < res.len; i++) /* records of code left as it is by design (XPU812) need no human */
        for (size_t j = 0; j < res.items[i].diags.len; j++) remaining -= cli_record_only(&res.items[i].diags.items[j]);
    if (diff) {
        fputs(patch->data ? patch->data : "", out);
        fflush(out); /* the summary below goes to stderr: keep the two apart on a shared terminal or pipe */
        if (!o.quiet)
            fprintf(stderr, "xpuify: would fix %zu finding%s in %zu file%s\n", fixed, fixed == 1 ? "" : "s",
                    files_changed, files_changed == 1 ? "" : "s");
        rc = errors ? CLI_EXIT_USAGE : files_changed ? CLI_EXIT_FINDINGS : CLI_EXIT_OK;
    } else {
        if (remaining && o.format != OUT_TEXT) {
            out_report rep = {.cat = o.cat, .res = &res, .version = XPUIFY_VERSION, .skipped = &o.skipped, .failed = errors};
            out_write(o.format, &rep, out);
        } else if (o.format == OUT_TEXT) {
            /* remaining findings, then a summary that counts what was fixed */
            for (size_t i = 0; i < res.len; i++) {
                an_file_result *f = &res.items[i];
                if (!f->diags.len) continue;
                an_results one = {f, 1};
                out_report rep = {.cat = o.cat, .res = &one, .version = XPUIFY_VERSION,
                                  .color = !o.output_file && cli_color_on(o.color, 1)};
                out_text_findings(&rep, out, false);
            }
            fprintf(out, "Fixed %zu finding%s in %zu file%s; %zu remaining%s\n", fixed, fixed == 1 ? "" : "s",
                    files_changed, files_changed == 1 ? "" : "s", remaining,
                    remaining ? unsafe ? " (they need a human: `xpuify rule CODE` explains each)" : " (they need a human or --unsafe-fixes: `xpuify rule CODE` explains each)" : ".");
            if (kernels.len) {
                fprintf(out, "Migration summary: %zu kernel%s to port by hand (kept CUDA-only: a construct in it has no OpenCL C form here; docs/c-kernels.md):\n",
                        kernels.len, kernels.len == 1 ? "" : "s");
                for (size_t k = 0; k < kernels.len; k++) fprintf(out, "  %s\n", kernels.items[k]);
            }
        } else {
            out_report rep = {.cat = o.cat, .res = &res, .version = XPUIFY_VERSION, .skipped = &o.skipped, .failed = errors};
            out_write(o.format, &rep, out);
        }
        rc = errors ? CLI_EXIT_USAGE : (cli_opts_fails(&o, &res) && !o.exit_zero) ? CLI_EXIT_FINDINGS : CLI_EXIT_OK;
    }
    if (fflush(out) != 0 || ferror(out)) {
        fprintf(stderr, "xpuify: error: writing the report failed\n");
        rc = CLI_EXIT_USAGE;
    }
    for (size_t k = 0; k < kernels.len; k++) ut_free(kernels.items[k]);
    ut_vec_free(&kernels);
    rw_project_free(&pj);
done:
    if (out != stdout) fclose(out);
    an_results_free(&res);
    cli_opts_free(&o);
    return rc;
}
