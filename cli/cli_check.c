/* cli_check: `xpuify check [PATH...]`: walk, analyze (through the results cache), report; exit 0 clean, 1 findings,
 * 2 usage/input error. */
#include "cli.h"
#include "cli_opts.h"
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

int cli_check(int argc, char **argv) {
    cli_opts o;
    cli_opts_init(&o);
    bool bad = false, only_paths = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_paths || a[0] != '-' || !strcmp(a, "-")) { ut_vec_push(&o.paths, a); continue; }
        if (!strcmp(a, "--")) { only_paths = true; continue; }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            printf("Usage: xpuify check [options] [PATH...]\n\nOptions:\n%s", cli_opts_help());
            cli_opts_free(&o);
            return 0;
        }
        int r = cli_opts_parse(&o, argc, argv, &i);
        if (r < 0) bad = true;
        else if (r == 0) {
            fprintf(stderr, "xpuify: error: unknown option `%s` (see `xpuify check --help`)\n", a);
            bad = true;
        }
    }
    int rc = CLI_EXIT_USAGE;
    an_results res = {0};
    FILE *out = stdout;
    if (bad || !cli_opts_prepare(&o)) goto done;
    an_options opt = {0};
    opt.max_file_size = o.max_file_size;
    opt.threads = o.threads;
    opt.enabled = o.enabled;
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
    an_engine_run(o.cat, &o.files, &opt, &res);
    cli_cache_save(&o);
    bool input_error = o.input_error | cli_report_unreadable(&o, &res);
    if (o.output_file) {
        out = fopen(o.output_file, "w");
        if (!out) {
            fprintf(stderr, "xpuify: error: %s: cannot write: %s\n", o.output_file, strerror(errno));
            out = stdout;
            goto done;
        }
    }
    out_report rep = {o.cat, &res, XPUIFY_VERSION, o.format == OUT_TEXT && !o.output_file && isatty(1) && !getenv("NO_COLOR"), false};
    out_write(o.format, &rep, out);
    if (fflush(out) != 0 || ferror(out)) {
        fprintf(stderr, "xpuify: error: writing the report failed\n");
        goto done;
    }
    if (input_error) rc = CLI_EXIT_USAGE;
    else if (out_count(&res) && !o.exit_zero) rc = CLI_EXIT_FINDINGS;
    else rc = CLI_EXIT_OK;
done:
    if (out != stdout) fclose(out);
    an_results_free(&res);
    cli_opts_free(&o);
    return rc;
}
