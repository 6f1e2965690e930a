/* cli_config: `xpuify config [PATH]`: the effective configuration for PATH (default: the working directory), each
 * value with where it came from (file:line:column, the command line, or the default); `--format json` for tools.
 * The configuration is checked as `check` would check it: bad keys, values or rule selectors exit 2. */
#include "cli/cli.h"
#include "cli/cli_opts.h"
#include <stdio.h>

int cli_config(int argc, char **argv) {
    cli_opts o;
    cli_opts_init(&o);
    bool json = false, bad = false;
    const char *path = NULL, *v;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            printf("Usage: xpuify config [PATH] [--format text|json] [options]\n\n"
                   "Prints the configuration that governs PATH (default .) and where each value came from.\n"
                   "Command-line options of `check` (--select, --ignore, --target, --config, --no-config, ...) are\n"
                   "applied on top, as `check` would.\n");
            cli_opts_free(&o);
            return 0;
        }
        if (cli_opt(argc, argv, &i, "--format", &v) || cli_opt(argc, argv, &i, "-f", &v)) {
            if (!v || (strcmp(v, "text") && strcmp(v, "json"))) {
                fprintf(stderr, "xpuify: error: config: unknown format `%s` (known: text, json)\n", v ? v : "");
                bad = true;
            }
            json = v && !strcmp(v, "json");
            continue;
        }
        if (a[0] != '-') {
            if (path) {
                fprintf(stderr, "xpuify: error: config takes one PATH\n");
                bad = true;
            }
            path = a;
            continue;
        }
        int r = cli_opts_parse(&o, argc, argv, &i);
        if (r < 0) bad = true;
        else if (r == 0) {
            fprintf(stderr, "xpuify: error: unknown option `%s` (see `xpuify config --help`)\n", a);
            bad = true;
        }
    }
    int rc = CLI_EXIT_USAGE;
    if (bad || !cli_opts_make_store(&o)) goto done;
    ut_buf err;
    ut_buf_init(&err);
    const cf_config *c = cf_store_for_path(o.store, path ? path : ".", &err);
    if (c) {
        /* the selectors must name rules (built-in or from the rule directories) */
        const char **dirs = ut_calloc(c->rule_dirs.len + 1, sizeof(char *));
        for (size_t i = 0; i < c->rule_dirs.len; i++) dirs[i] = c->rule_dirs.items[i].text;
        an_catalog *cat = cli_load_catalog(dirs, c->rule_dirs.len);
        ut_free(dirs);
        if (cat) {
            bool *en = ut_calloc(an_catalog_count(cat) + 1, sizeof(bool));
            if (cf_config_enabled(c, cat, en, &err)) {
                cf_config_print(c, json, stdout);
                rc = CLI_EXIT_OK;
            }
            ut_free(en);
            an_catalog_free(cat);
        }
    }
    for (char *line = err.data, *nl; line && *line; line = nl + 1) {
        nl = strchr(line, '\n');
        if (!nl) break;
        fprintf(stderr, "xpuify: error: %.*s\n", (int)(nl - line), line);
    }
    ut_buf_free(&err);
done:
    cli_opts_free(&o);
    return rc;
}
