/* cli_check: `xpuify check [PATH...]`: walk, analyze (through the results cache), filter (changed lines, baseline),
 * report in one or several formats; or record a baseline, or write suppression comments. Exit 0 clean, 1 findings
 * (at or above `fail-on`), 2 usage/configuration/input error. */
#include "output/out_fingerprint.h"
#include "rewriters/rw_suppress.h"
#include "rewriters/rw_target.h"
#include "rewriters/rw_write.h"
#include "cli/cli.h"
#include "cli/cli_baseline.h"
#include "cli/cli_diffbase.h"
#include "cli/cli_opts.h"
#include "cli/cli_progress.h"
#include "cli/cli_target.h"
#include "util/ut_suggest.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    out_format format;
    const char *file; /* NULL: standard output */
} out_spec;

static const char *check_help =
    "      --output FMT[=FILE] also write format FMT (to FILE, or standard output); repeatable\n"
    "      --statistics        print the number of findings per rule instead of the findings\n"
    "      --baseline FILE     report only findings that are not in FILE (see --write-baseline)\n"
    "      --write-baseline FILE  record every current finding in FILE and exit 0\n"
    "      --diff-base REV     report only findings on lines changed since git revision REV\n"
    "      --shard K/N         check only the K-th of N shares of the files (stable: by path hash)\n"
    "      --add-ignore[=REASON]  add an `xpuify: ignore[...]` comment for every finding, then exit\n"
    "      --no-progress       no progress line (shown only on a terminal, for long runs)\n";

bool cli_parse_shard(const char *v, unsigned *k, unsigned *n) {
    unsigned a, b;
    char tail;
    if (!v || sscanf(v, "%u/%u%c", &a, &b, &tail) != 2 || b < 1 || a < 1 || a > b || b > 100000) return false;
    *k = a, *n = b;
    return true;
}

unsigned cli_shard_of(const char *project_path, unsigned n) {
    uint64_t h = 1469598103934665603ull;
    for (const char *p = project_path; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
    return (unsigned)(h % n) + 1;
}

static int path_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Baseline entries that hid nothing, among the files this run is responsible for. */
static void report_stale(const cli_baseline *b, const cli_opts *o, unsigned shard_k, unsigned shard_n) {
    char **checked = ut_calloc(o->files.len ? o->files.len : 1, sizeof(char *));
    for (size_t i = 0; i < o->files.len; i++) checked[i] = out_project_path(o->files.items[i].path);
    if (o->files.len > 1) qsort(checked, o->files.len, sizeof(char *), path_cmp);
    size_t stale = 0;
    ut_buf list;
    ut_buf_init(&list);
    for (size_t i = 0; i < b->entries.len; i++) {
        const cli_baseline_entry *e = &b->entries.items[i];
        if (e->used) continue;
        char *key = e->path;
        bool mine = o->files.len && bsearch(&key, checked, o->files.len, sizeof(char *), path_cmp);
        if (!mine) {
            /* a deleted file's entries belong to the shard its path falls in */
            char full[8192];
            snprintf(full, sizeof full, "%s/%s", out_project_root(), e->path);
            struct stat st;
            mine = stat(full, &st) != 0 && (!shard_n || cli_shard_of(e->path, shard_n) == shard_k);
        }
        if (!mine) continue;
        if (stale < 20) ut_buf_printf(&list, "  %s:%u: %s `%s`\n", e->path, e->line, e->code, e->source);
        stale++;
    }
    if (stale) {
        fprintf(stderr, "xpuify: warning: %zu baseline entr%s no longer match%s a finding (fixed, or the line changed); "
                        "rewrite the baseline with --write-baseline to drop %s:\n%s",
                stale, stale == 1 ? "y" : "ies", stale == 1 ? "es" : "", stale == 1 ? "it" : "them", list.data);
        if (stale > 20) fprintf(stderr, "  ... and %zu more\n", stale - 20);
    }
    ut_buf_free(&list);
    for (size_t i = 0; i < o->files.len; i++) ut_free(checked[i]);
    ut_free(checked);
}

static int add_ignores(cli_opts *o, an_results *res, const char *reason) {
    size_t added = 0, files = 0;
    bool errors = false;
    for (size_t i = 0; i < res->len; i++) {
        an_file_result *f = &res->items[i];
        if (!f->diags.len) continue;
        size_t idx = (size_t)(f->file - o->files.items);
        rw_ignore_result r;
        rw_add_ignores(o->cat, f->file->lang, &f->src, &f->diags, o->file_enabled[idx], reason, &r);
        if (r.error) {
            fprintf(stderr, "xpuify: error: %s: %s\n", f->file->path, r.error);
            errors = true;
        } else if (r.text) {
            char *why;
            if (rw_write_atomic(f->file->path, r.text, r.len, &why) != 0) {
                fprintf(stderr, "xpuify: error: %s: %s\n", f->file->path, why);
                ut_free(why);
                errors = true;
            } else {
                added += r.added;
                files++;
            }
        }
        rw_ignore_result_free(&r);
    }
    if (!o->quiet)
        fprintf(stderr, "xpuify: added suppressions for %zu finding%s in %zu file%s\n", added, added == 1 ? "" : "s", files,
                files == 1 ? "" : "s");
    return errors ? CLI_EXIT_USAGE : CLI_EXIT_OK;
}

static bool write_output(const out_spec *s, const out_report *rep, bool statistics) {
    FILE *out = stdout;
    if (s->file) {
        out = fopen(s->file, "w");
        if (!out) {
            fprintf(stderr, "xpuify: error: %s: cannot write: %s\n", s->file, strerror(errno));
            return false;
        }
    }
    out_report r = *rep;
    r.color = r.color && !s->file && (s->format == OUT_TEXT || s->format == OUT_CONCISE);
    if (statistics) out_statistics(&r, s->format == OUT_JSON, out);
    else out_write(s->format, &r, out);
    bool ok = fflush(out) == 0 && !ferror(out);
    if (out != stdout) ok &= fclose(out) == 0;
    if (!ok) fprintf(stderr, "xpuify: error: writing the report%s%s failed\n", s->file ? " to " : "", s->file ? s->file : "");
    return ok;
}

int cli_check(int argc, char **argv) {
    cli_opts o;
    cli_opts_init(&o);
    bool bad = false, only_paths = false, statistics = false, no_progress = false, format_given = false;
    const char *baseline = NULL, *write_baseline = NULL, *diff_base = NULL, *add_ignore = NULL;
    unsigned shard_k = 0, shard_n = 0;
    UT_VEC(out_spec) outputs = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if (only_paths || a[0] != '-' || !strcmp(a, "-")) { ut_vec_push(&o.paths, a); continue; }
        if (!strcmp(a, "--")) { only_paths = true; continue; }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            printf("Usage: xpuify check [options] [PATH...]\n\nOptions:\n%s%s", cli_opts_help(), check_help);
            cli_opts_free(&o);
            ut_vec_free(&outputs);
            return 0;
        }
        if (!strcmp(a, "--statistics")) { statistics = true; continue; }
        if (!strcmp(a, "--no-progress")) { no_progress = true; continue; }
        if (!strcmp(a, "--add-ignore")) { add_ignore = ""; continue; }
        if (!strncmp(a, "--add-ignore=", 13)) {
            add_ignore = a + 13;
            if (strpbrk(add_ignore, "\r\n")) {
                fprintf(stderr, "xpuify: error: --add-ignore: the reason must be one line\n");
                bad = true;
            }
            continue;
        }
        if (cli_opt(argc, argv, &i, "--output", &v)) {
            if (!v) { bad = true; continue; }
            out_spec s = {OUT_TEXT, NULL};
            char fmt[32];
            const char *eq = strchr(v, '=');
            size_t fl = eq ? (size_t)(eq - v) : strlen(v);
            snprintf(fmt, sizeof fmt, "%.*s", (int)(fl < sizeof fmt ? fl : sizeof fmt - 1), v);
            if (!out_format_parse(fmt, &s.format)) {
                fprintf(stderr, "xpuify: error: --output: unknown format `%s` (known: %s)\n", fmt, out_format_names());
                bad = true;
                continue;
            }
            if (eq) {
                if (!eq[1]) {
                    fprintf(stderr, "xpuify: error: --output %s=: the file name is missing\n", fmt);
                    bad = true;
                    continue;
                }
                s.file = eq + 1;
            }
            ut_vec_push(&outputs, s);
            continue;
        }
        if (cli_opt(argc, argv, &i, "--baseline", &v)) { if (!v) bad = true; baseline = v; continue; }
        if (cli_opt(argc, argv, &i, "--write-baseline", &v)) { if (!v) bad = true; write_baseline = v; continue; }
        if (cli_opt(argc, argv, &i, "--diff-base", &v)) { if (!v || !*v) bad = true; diff_base = v; continue; }
        if (cli_opt(argc, argv, &i, "--shard", &v)) {
            if (!cli_parse_shard(v, &shard_k, &shard_n)) {
                fprintf(stderr, "xpuify: error: --shard: `%s` is not K/N with 1 <= K <= N (e.g. 2/4)\n", v ? v : "");
                bad = true;
            }
            continue;
        }
        if (!strncmp(a, "--format", 8) || !strncmp(a, "-f", 2) || !strncmp(a, "--output-format", 15) ||
            !strncmp(a, "--output-file", 13) || !strcmp(a, "-o"))
            format_given = true;
        int r = cli_opts_parse(&o, argc, argv, &i);
        if (r < 0) bad = true;
        else if (r == 0) {
            char near[64];
            bool has = ut_suggest_option(a, near, sizeof near, cli_opts_help(), check_help, (const char *)NULL);
            fprintf(stderr, "xpuify: error: unknown option `%s`%s%s%s (see `xpuify check --help`)\n", a,
                    has ? "; did you mean `" : "", has ? near : "", has ? "`?" : "");
            bad = true;
        }
    }
    /* one report at most on standard output */
    size_t to_stdout = 0;
    for (size_t i = 0; i < outputs.len; i++) to_stdout += !outputs.items[i].file;
    if (!bad && (to_stdout > 1 || (to_stdout && format_given && !o.output_file))) {
        fprintf(stderr, "xpuify: error: two reports would go to standard output; give --output FMT=FILE a file\n");
        bad = true;
    }
    if (!bad && baseline && write_baseline) {
        fprintf(stderr, "xpuify: error: --baseline and --write-baseline cannot be combined\n");
        bad = true;
    }
    int rc = CLI_EXIT_USAGE;
    an_results res = {0};
    cli_baseline bl = {0};
    cli_changes changes = {0};
    char **fps = NULL;
    char **helpers = NULL, *helper_text = NULL; /* compat: helper modules SARIF fixes create */
    if (bad || !cli_opts_prepare(&o)) goto done;
    /* a shard's guards are judged as the whole run's: the files fixed together are all of them (an_engine_fixes_begin) */
    an_file_list all = {0};
    const bool **all_en = NULL;
    if (shard_n) {
        all_en = ut_calloc(o.files.len ? o.files.len : 1, sizeof *all_en);
        for (size_t i = 0; i < o.files.len; i++) {
            an_file f = o.files.items[i];
            f.path = ut_strdup(f.path);
            ut_vec_push(&all, f);
            all_en[i] = o.file_enabled[i];
        }
        bool *keep = ut_calloc(o.files.len ? o.files.len : 1, sizeof(bool));
        for (size_t i = 0; i < o.files.len; i++) {
            char *p = out_project_path(o.files.items[i].path);
            keep[i] = cli_shard_of(p, shard_n) == shard_k;
            ut_free(p);
        }
        cli_opts_filter_files(&o, keep);
        ut_free(keep);
    }
    ut_buf err;
    ut_buf_init(&err);
    if (diff_base && !cli_changes_load(diff_base, &changes, &err)) {
        fprintf(stderr, "xpuify: error: %s\n", err.data);
        ut_buf_free(&err);
        goto done;
    }
    if (baseline && !cli_baseline_load(baseline, &bl, &err)) {
        fprintf(stderr, "xpuify: error: %s\n", err.data);
        ut_buf_free(&err);
        goto done;
    }
    an_options opt = {0};
    opt.max_file_size = o.max_file_size;
    opt.threads = o.threads;
    opt.enabled = o.enabled;
    opt.whole_files = o.whole_files;
    opt.file_enabled = o.file_enabled;
    opt.c = o.c;
    ut_buf reason;
    ut_buf_init(&reason);
    /* fixes shown by check (json, sarif, text [*]) are the ones `fix` would make */
    opt.cache = cli_cache_open(&o);
    cli_target_choose(o.target, o.torch_version, o.paths.items, o.paths.len, o.cat, &o.files, o.enabled, &opt.fix,
                      &reason, opt.cache);
    ut_buf_free(&reason);
    opt.fix.unsafe = true;
    opt.fix_for_file = cli_target_fix_for_file;
    opt.fix_ctx = &o.helper;
    cli_progress prog;
    cli_progress_init(&prog, !no_progress && !o.quiet, "checked");
    opt.progress = cli_progress_update;
    opt.progress_ctx = &prog;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    /* the files checked are those a `fix` of the same paths fixes together: their guards count each other's fixes */
    an_engine_fixes_begin(o.cat, shard_n ? &all : &o.files, o.enabled,
                          shard_n ? (const bool *const *)all_en : (const bool *const *)o.file_enabled, &opt.fix,
                          opt.fix_for_file, opt.fix_ctx, !o.whole_files);
    an_engine_run(o.cat, &o.files, &opt, &res);
    an_engine_fixes_end();
    for (size_t i = 0; i < all.len; i++) ut_free(all.items[i].path);
    ut_vec_free(&all);
    ut_free(all_en);
    double ms_engine = cli_ms_since(&t0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    cli_progress_end(&prog);
    if (o.verbose) {
        size_t parsed = 0;
        uint64_t bytes = 0;
        for (size_t i = 0; i < res.len; i++) parsed += res.items[i].parsed, bytes += res.items[i].parsed_bytes;
        fprintf(stderr, "xpuify: %zu files, %zu parsed after the prefilter (%" PRIu64 " bytes parsed), %.1f ms (before "
                "it: files and configurations %.1f ms, rules %.1f ms)\n", res.len, parsed, bytes,
                ms_engine, o.ms_files, o.ms_rules);
        size_t qn, q0, qf, qsets;
        an_catalog_queries_stats(o.cat, &qn, &q0, &qf, &qsets);
        if (qn + q0 + qf)
            fprintf(stderr, "xpuify: Python query runs: %zu with the patterns of the rules the file can match (%zu such "
                    "sets compiled), %zu with none (no query rule can match), %zu with every rule's\n", qn, qsets, q0, qf);
    }
    cli_opts_apply_severity(&o, &res);
    cli_cache_save(&o);
    bool input_error = o.input_error | cli_report_unreadable(&o, &res);
    if (write_baseline) {
        fps = out_fingerprints(&res);
        if (!cli_baseline_write(write_baseline, &res, fps, &err)) {
            fprintf(stderr, "xpuify: error: %s\n", err.data);
            ut_buf_free(&err);
            goto done;
        }
        size_t n = out_count(&res);
        if (!o.quiet) fprintf(stderr, "xpuify: wrote %zu finding%s to the baseline %s\n", n, n == 1 ? "" : "s", write_baseline);
        rc = input_error ? CLI_EXIT_USAGE : CLI_EXIT_OK;
        goto done;
    }
    if (baseline) {
        fps = out_fingerprints(&res);
        size_t nfps = out_count(&res);
        size_t hidden = cli_baseline_filter(&bl, &res, fps);
        for (size_t i = 0; i < nfps; i++) ut_free(fps[i]); /* the list changed: recomputed below */
        ut_free(fps);
        fps = NULL;
        if (!o.quiet && hidden)
            fprintf(stderr, "xpuify: %zu finding%s in the baseline %s not reported\n", hidden,
                    hidden == 1 ? " is" : "s are", baseline);
        if (!o.quiet) report_stale(&bl, &o, shard_k, shard_n);
    }
    /* changed lines only: after the baseline, which must see every finding to match its entries */
    if (diff_base) {
        for (size_t i = 0; i < res.len; i++) {
            an_diag_list *l = &res.items[i].diags;
            size_t w = 0;
            for (size_t j = 0; j < l->len; j++) {
                if (cli_changes_has(&changes, res.items[i].file->path, l->items[j].line)) {
                    l->items[w++] = l->items[j];
                } else {
                    ut_free(l->items[j].message);
                    an_fix_free(l->items[j].fix);
                }
            }
            l->len = w;
        }
    }
    if (add_ignore) {
        rc = add_ignores(&o, &res, *add_ignore ? add_ignore : NULL);
        if (input_error) rc = CLI_EXIT_USAGE;
        goto done;
    }
    /* fingerprints for the formats that carry them (SARIF, GitLab), made once for both */
    bool want_fps = (!to_stdout || o.output_file) && (o.format == OUT_SARIF || o.format == OUT_GITLAB);
    for (size_t i = 0; i < outputs.len; i++)
        want_fps |= outputs.items[i].format == OUT_SARIF || outputs.items[i].format == OUT_GITLAB;
    if (want_fps) fps = out_fingerprints(&res);
    helpers = cli_target_missing_helpers(&res, &opt.fix, &o.helper);
    if (helpers) helper_text = rw_helper_text(o.priority);
    char cwd[4096];
    bool have_cwd = getcwd(cwd, sizeof cwd - 1) != NULL;
    if (have_cwd && cwd[strlen(cwd) - 1] != '/') strcat(cwd, "/");
    out_report rep = {.cat = o.cat, .res = &res, .version = XPUIFY_VERSION, .color = cli_color_on(o.color, 1),
                      .fingerprints = fps, .skipped = &o.skipped, .failed = input_error,
                      .helper_paths = (const char *const *)helpers, .helper_text = helper_text,
                      .srcroot = have_cwd ? cwd : NULL};
    bool ok = true;
    if (!to_stdout || o.output_file) {
        out_spec main_out = {o.format, o.output_file};
        ok &= write_output(&main_out, &rep, statistics);
    }
    for (size_t i = 0; i < outputs.len; i++)
        ok &= write_output(&outputs.items[i], &rep, statistics && !outputs.items[i].file);
    if (o.verbose) fprintf(stderr, "xpuify: report written in %.1f ms\n", cli_ms_since(&t1));
    if (!ok) goto done;
    if (input_error) rc = CLI_EXIT_USAGE;
    else if (cli_opts_fails(&o, &res) && !o.exit_zero) rc = CLI_EXIT_FINDINGS;
    else rc = CLI_EXIT_OK;
done:
    cli_target_missing_helpers_free(helpers, res.len);
    ut_free(helper_text);
    out_fingerprints_free(fps, &res);
    cli_changes_free(&changes);
    cli_baseline_free(&bl);
    an_results_free(&res);
    cli_opts_free(&o);
    ut_vec_free(&outputs);
    return rc;
}
