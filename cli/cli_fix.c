/* cli_fix: `xpuify fix [PATH...]`: applies safe fixes in place (--unsafe-fixes: unsafe ones too) or prints a
 * unified diff (--diff); writes the compat helper once where it is imported; prints what remains as `check`
 * would. Exit: 0 nothing remains, 1 findings remain (--diff: something would change), 2 errors. */
#include "../rewriters/rw_diff.h"
#include "../rewriters/rw_fixer.h"
#include "../rewriters/rw_target.h"
#include "../rewriters/rw_write.h"
#include "cli.h"
#include "cli_opts.h"
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

int cli_fix(int argc, char **argv) {
    cli_opts o;
    cli_opts_init(&o);
    bool bad = false, only_paths = false, diff = false, unsafe = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_paths || a[0] != '-' || !strcmp(a, "-")) { ut_vec_push(&o.paths, a); continue; }
        if (!strcmp(a, "--")) { only_paths = true; continue; }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            printf("Usage: xpuify fix [options] [PATH...]\n\nOptions:\n"
                   "      --diff              print a unified diff and write nothing (exit 1 when it would change something)\n"
                   "      --unsafe-fixes      also apply fixes marked unsafe\n%s", cli_opts_help());
            cli_opts_free(&o);
            return 0;
        }
        if (!strcmp(a, "--diff")) { diff = true; continue; }
        if (!strcmp(a, "--unsafe-fixes")) { unsafe = true; continue; }
        int r = cli_opts_parse(&o, argc, argv, &i);
        if (r < 0) bad = true;
        else if (r == 0) {
            fprintf(stderr, "xpuify: error: unknown option `%s` (see `xpuify fix --help`)\n", a);
            bad = true;
        }
    }
    int rc = CLI_EXIT_USAGE;
    an_results res = {0};
    FILE *out = stdout;
    if (bad || !cli_opts_prepare(&o)) goto done;
    an_fix_options fo;
    ut_buf reason;
    ut_buf_init(&reason);
    cli_target_choose(o.target, o.torch_version, o.paths.items, o.paths.len, o.cat, &o.files, o.enabled, &fo, &reason,
                      NULL);
    if (!o.quiet) fprintf(stderr, "xpuify: target: %s\n", reason.data);
    ut_buf_free(&reason);
    bool errors = o.input_error;
    size_t fixed = 0, files_changed = 0;
    ut_buf patch;
    ut_buf_init(&patch);
    UT_VEC(char *) helpers_done = {0};
    res.len = o.files.len;
    res.items = ut_calloc(res.len ? res.len : 1, sizeof(an_file_result));
    for (size_t i = 0; i < o.files.len; i++) {
        const an_file *f = &o.files.items[i];
        an_file_result *r = &res.items[i];
        r->file = f;
        r->status = an_source_load(&r->src, f->path, o.max_file_size, &r->error);
        if (r->status != AN_LOAD_OK) continue;
        if (!an_catalog_prefilter(o.cat, f->lang, r->src.text, r->src.len)) {
            an_source_free(&r->src);
            continue;
        }
        an_fix_options ffo = fo;
        char buf[1024];
        cli_target_fix_for_file(&o.helper, f->path, &ffo, buf, sizeof buf);
        rw_file_fix ff;
        rw_fix_source(o.cat, f->lang, &r->src, o.enabled, &ffo, unsafe, &ff);
        if (ff.error) {
            fprintf(stderr, "xpuify: error: %s: %s\n", f->path, ff.error);
            errors = true;
        }
        if (ff.text) {
            /* the compat helper, once per location, when the fixed file imports it */
            rw_helper_place pl = {0};
            bool need_helper = ffo.target == AN_TARGET_COMPAT && ffo.helper_import && strstr(ff.text, ffo.helper_import);
            bool helper_ok = true;
            if (need_helper) {
                rw_helper_place_for(f->path, o.helper.module, o.helper.path, &pl);
                bool done = false;
                for (size_t k = 0; k < helpers_done.len && !done; k++) done = !strcmp(helpers_done.items[k], pl.path);
                if (!done) {
                    ut_vec_push(&helpers_done, ut_strdup(pl.path));
                    if (diff) {
                        if (access(pl.path, F_OK) != 0) {
                            char *t = rw_helper_text(o.priority);
                            rw_diff_new_file(pl.path, t, strlen(t), &patch);
                            ut_free(t);
                        }
                    } else {
                        char *why;
                        int w = rw_helper_write(pl.path, o.priority, &why);
                        if (w < 0) {
                            fprintf(stderr, "xpuify: error: %s: cannot write the device helper: %s\n", pl.path, why);
                            ut_free(why);
                            helper_ok = false;
                            errors = true;
                        } else if (w > 0 && !o.quiet) {
                            fprintf(stderr, "xpuify: wrote the device helper %s\n", pl.path);
                        }
                    }
                }
            }
            rw_helper_place_free(&pl);
            if (diff) {
                rw_diff_unified(f->path, r->src.text, r->src.len, ff.text, ff.len, &patch);
                fixed += ff.fixed, files_changed++;
            } else if (helper_ok) {
                char *why;
                if (rw_write_atomic(f->path, ff.text, ff.len, &why) != 0) {
                    fprintf(stderr, "xpuify: error: %s: %s\n", f->path, why);
                    ut_free(why);
                    errors = true;
                } else {
                    fixed += ff.fixed, files_changed++;
                    an_source_free(&r->src);
                    an_source_init_mem(&r->src, f->path, ff.text, ff.len);
                }
            }
        }
        rw_file_fix_free(&ff);
        /* what remains, as check reports it */
        an_engine_analyze_source(o.cat, f->lang, &r->src, o.enabled, NULL, &r->diags);
    }
    if (cli_report_unreadable(&o, &res)) errors = true;
    if (o.output_file) {
        out = fopen(o.output_file, "w");
        if (!out) {
            fprintf(stderr, "xpuify: error: %s: cannot write: %s\n", o.output_file, strerror(errno));
            out = stdout;
            errors = true;
        }
    }
    size_t remaining = out_count(&res);
    if (diff) {
        fputs(patch.data ? patch.data : "", out);
        if (!o.quiet)
            fprintf(stderr, "xpuify: would fix %zu finding%s in %zu file%s\n", fixed, fixed == 1 ? "" : "s",
                    files_changed, files_changed == 1 ? "" : "s");
        rc = errors ? CLI_EXIT_USAGE : files_changed ? CLI_EXIT_FINDINGS : CLI_EXIT_OK;
    } else {
        if (remaining && o.format != OUT_TEXT) {
            out_report rep = {o.cat, &res, XPUIFY_VERSION, false, false};
            out_write(o.format, &rep, out);
        } else if (o.format == OUT_TEXT) {
            /* remaining findings, then a summary that counts what was fixed */
            for (size_t i = 0; i < res.len; i++) {
                an_file_result *f = &res.items[i];
                if (!f->diags.len) continue;
                an_results one = {f, 1};
                out_report rep = {o.cat, &one, XPUIFY_VERSION, !o.output_file && isatty(1) && !getenv("NO_COLOR"), false};
                out_text_findings(&rep, out, false);
            }
            fprintf(out, "Fixed %zu finding%s in %zu file%s; %zu remaining%s\n", fixed, fixed == 1 ? "" : "s",
                    files_changed, files_changed == 1 ? "" : "s", remaining,
                    remaining ? " (they need a human: see `xpuify rule CODE`, or try --unsafe-fixes)" : ".");
        } else {
            out_report rep = {o.cat, &res, XPUIFY_VERSION, false, false};
            out_write(o.format, &rep, out);
        }
        rc = errors ? CLI_EXIT_USAGE : (remaining && !o.exit_zero) ? CLI_EXIT_FINDINGS : CLI_EXIT_OK;
    }
    if (fflush(out) != 0 || ferror(out)) {
        fprintf(stderr, "xpuify: error: writing the report failed\n");
        rc = CLI_EXIT_USAGE;
    }
    for (size_t k = 0; k < helpers_done.len; k++) ut_free(helpers_done.items[k]);
    ut_vec_free(&helpers_done);
    ut_buf_free(&patch);
done:
    if (out != stdout) fclose(out);
    an_results_free(&res);
    cli_opts_free(&o);
    return rc;
}
