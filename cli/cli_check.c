/* cli_check: `xpuify check [PATH...]`: walk, analyze, report; exit 0 clean, 1 findings, 2 usage/input error. */
#include "../analyzer/an_engine.h"
#include "../output/out.h"
#include "cli.h"
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

static void check_usage(FILE *fp) {
    fprintf(fp,
            "Usage: xpuify check [options] [PATH...]\n\n"
            "Options:\n"
            "  -f, --format FMT        text (default), concise, json, sarif, github\n"
            "  -o, --output-file FILE  write the report to FILE instead of standard output\n"
            "      --select LIST       only these rules (codes, code prefixes, names, ALL; comma-separated)\n"
            "      --ignore LIST       not these rules\n"
            "      --exclude GLOB      skip paths matching GLOB (repeatable)\n"
            "      --no-ignore         do not honour .gitignore\n"
            "      --rules DIR         also load the YAML rules in DIR (repeatable)\n"
            "      --max-file-size N   skip larger files (default 10M; K/M/G suffixes)\n"
            "  -j, --threads N         worker threads (default: number of cores)\n"
            "      --exit-zero         exit 0 even with findings (errors still exit 2)\n"
            "  -q, --quiet             no warnings about skipped files\n");
}

int cli_check(int argc, char **argv) {
    out_format fmt = OUT_TEXT;
    const char *output_file = NULL, *v;
    UT_VEC(const char *) paths = {0};
    UT_VEC(const char *) selects = {0};
    UT_VEC(const char *) ignores = {0};
    UT_VEC(const char *) rule_dirs = {0};
    an_walk_options wopt = {0};
    wopt.langs[AN_LANG_PYTHON] = true;
    an_options opt = {0};
    opt.max_file_size = 10u << 20;
    bool exit_zero = false, quiet = false, bad = false, only_paths = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_paths || a[0] != '-' || !strcmp(a, "-")) { ut_vec_push(&paths, a); continue; }
        if (!strcmp(a, "--")) { only_paths = true; continue; }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { check_usage(stdout); return 0; }
        if (cli_opt(argc, argv, &i, "--format", &v) || cli_opt(argc, argv, &i, "-f", &v) ||
            cli_opt(argc, argv, &i, "--output-format", &v)) {
            if (!v) { bad = true; continue; }
            if (!out_format_parse(v, &fmt)) {
                fprintf(stderr, "xpuify: error: unknown format `%s` (known: %s)\n", v, out_format_names());
                bad = true;
            }
        } else if (cli_opt(argc, argv, &i, "--output-file", &v) || cli_opt(argc, argv, &i, "-o", &v)) {
            if (!v) bad = true; else output_file = v;
        } else if (cli_opt(argc, argv, &i, "--select", &v)) {
            if (!v) bad = true; else ut_vec_push(&selects, v);
        } else if (cli_opt(argc, argv, &i, "--ignore", &v)) {
            if (!v) bad = true; else ut_vec_push(&ignores, v);
        } else if (cli_opt(argc, argv, &i, "--exclude", &v)) {
            if (!v) bad = true; else ut_vec_push(&wopt.excludes, ut_strdup(v));
        } else if (cli_opt(argc, argv, &i, "--rules", &v)) {
            if (!v) bad = true; else ut_vec_push(&rule_dirs, v);
        } else if (cli_opt(argc, argv, &i, "--max-file-size", &v)) {
            if (!v || !cli_parse_size(v, &opt.max_file_size)) {
                fprintf(stderr, "xpuify: error: --max-file-size: `%s` is not a size (e.g. 500K, 10M)\n", v ? v : "");
                bad = true;
            }
        } else if (cli_opt(argc, argv, &i, "--threads", &v) || cli_opt(argc, argv, &i, "-j", &v)) {
            char *end;
            long n = v ? strtol(v, &end, 10) : -1;
            if (!v || *end || n < 0 || n > 1024) {
                fprintf(stderr, "xpuify: error: --threads: `%s` is not a thread count\n", v ? v : "");
                bad = true;
            } else opt.threads = (int)n;
        } else if (!strcmp(a, "--exit-zero")) exit_zero = true;
        else if (!strcmp(a, "--no-ignore")) wopt.no_ignore = true;
        else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) quiet = true;
        else {
            fprintf(stderr, "xpuify: error: unknown option `%s` (see `xpuify check --help`)\n", a);
            bad = true;
        }
    }
    int rc = CLI_EXIT_USAGE;
    an_catalog *cat = NULL;
    bool *enabled = NULL;
    an_file_list files = {0};
    an_results res = {0};
    FILE *out = stdout;
    if (bad) goto done;
    cat = cli_load_catalog(rule_dirs.items, rule_dirs.len);
    if (!cat) goto done;
    size_t nrules = an_catalog_count(cat);
    enabled = ut_calloc(nrules, sizeof(bool));
    for (size_t i = 0; i < nrules; i++) enabled[i] = true;
    if (selects.len) {
        for (size_t i = 0; i < nrules; i++) enabled[i] = false;
        for (size_t i = 0; i < selects.len; i++)
            if (!cli_apply_selectors(cat, selects.items[i], true, enabled, "--select")) goto done;
    }
    for (size_t i = 0; i < ignores.len; i++)
        if (!cli_apply_selectors(cat, ignores.items[i], false, enabled, "--ignore")) goto done;
    opt.enabled = enabled;
    if (!paths.len) ut_vec_push(&paths, ".");
    ut_buf errs;
    ut_buf_init(&errs);
    int missing = an_walk(paths.items, paths.len, &wopt, &files, &errs);
    if (missing) fprintf(stderr, "%s", "");
    for (char *line = errs.data, *nl; line && *line; line = nl + 1) {
        nl = strchr(line, '\n');
        if (!nl) break;
        fprintf(stderr, "xpuify: error: %.*s\n", (int)(nl - line), line);
    }
    ut_buf_free(&errs);
    an_engine_run(cat, &files, &opt, &res);
    bool input_error = missing > 0;
    for (size_t i = 0; i < res.len; i++) {
        const an_file_result *f = &res.items[i];
        if (f->status == AN_LOAD_OK) continue;
        /* a file the user named must be read; one found by walking is skipped with a warning */
        if (f->file->named) {
            fprintf(stderr, "xpuify: error: %s: %s\n", f->file->path, f->error);
            input_error = true;
        } else if (!quiet) {
            fprintf(stderr, "xpuify: warning: %s: %s; skipped\n", f->file->path, f->error);
        }
    }
    if (output_file) {
        out = fopen(output_file, "w");
        if (!out) {
            fprintf(stderr, "xpuify: error: %s: cannot write: %s\n", output_file, strerror(errno));
            out = stdout;
            goto done;
        }
    }
    out_report rep = {cat, &res, XPUIFY_VERSION, fmt == OUT_TEXT && !output_file && isatty(1) && !getenv("NO_COLOR"), false};
    out_write(fmt, &rep, out);
    if (fflush(out) != 0 || ferror(out)) {
        fprintf(stderr, "xpuify: error: writing the report failed\n");
        goto done;
    }
    if (input_error) rc = CLI_EXIT_USAGE;
    else if (out_count(&res) && !exit_zero) rc = CLI_EXIT_FINDINGS;
    else rc = CLI_EXIT_OK;
done:
    if (out != stdout) fclose(out);
    an_results_free(&res);
    an_file_list_free(&files);
    for (size_t i = 0; i < wopt.excludes.len; i++) ut_free(wopt.excludes.items[i]);
    ut_vec_free(&wopt.excludes);
    ut_vec_free(&paths);
    ut_vec_free(&selects);
    ut_vec_free(&ignores);
    ut_vec_free(&rule_dirs);
    ut_free(enabled);
    an_catalog_free(cat);
    return rc;
}
