/* cli_lsp: `xpuify lsp`: runs the language server on standard input and output, with the target choice
 * (--target auto and the compat helper's import) that check and fix use. */
#include "lsp/lsp_server.h"
#include "cli/cli.h"
#include "cli/cli_target.h"
#include <errno.h>
#include <stdio.h>

typedef struct {
    const an_catalog *cat;
} chooser_ctx;

static void choose(void *vctx, const char *path, const char *target, const char *torch_version, const char *helper_module,
                   an_fix_options *out, char *buf, size_t bufsz, ut_buf *reason) {
    chooser_ctx *c = vctx;
    cli_target_mode mode = CLI_TARGET_AUTO;
    cli_target_parse(target, &mode);
    an_file_list files = {0};
    an_file f = {(char *)path, AN_LANG_PYTHON, true, {0}};
    an_lang_for_path(path, &f.lang);
    ut_vec_push(&files, f);
    const char *paths[1] = {path};
    cli_target_choose(mode, torch_version, paths, 1, c->cat, &files, NULL, out, reason, NULL);
    ut_vec_free(&files);
    cli_helper_opts h = {helper_module, NULL};
    cli_target_fix_for_file(&h, path, out, buf, bufsz);
}

int cli_lsp(int argc, char **argv) {
    const char *log_path = NULL;
    UT_VEC(const char *) rule_dirs = {0};
    for (int i = 1; i < argc; i++) {
        const char *v;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("Usage: xpuify lsp [options]\n\n"
                   "Runs the xpuify language server on standard input and output (see docs/editors.md).\n\n"
                   "Options:\n"
                   "      --log FILE     also write the server's log lines to FILE\n"
                   "      --rules DIR    also load the YAML rules in DIR (repeatable)\n"
                   "      --stdio        accepted for clients that pass it (stdio is the only transport)\n");
            ut_vec_free(&rule_dirs);
            return 0;
        }
        if (!strcmp(argv[i], "--stdio")) continue;
        if (cli_opt(argc, argv, &i, "--log", &v)) {
            if (!v) { ut_vec_free(&rule_dirs); return CLI_EXIT_USAGE; }
            log_path = v;
        } else if (cli_opt(argc, argv, &i, "--rules", &v)) {
            if (!v) { ut_vec_free(&rule_dirs); return CLI_EXIT_USAGE; }
            ut_vec_push(&rule_dirs, v);
        } else {
            fprintf(stderr, "xpuify: error: unknown option `%s` (see `xpuify lsp --help`)\n", argv[i]);
            ut_vec_free(&rule_dirs);
            return CLI_EXIT_USAGE;
        }
    }
    an_catalog *cat = cli_load_catalog(rule_dirs.items, rule_dirs.len);
    ut_vec_free(&rule_dirs);
    if (!cat) return CLI_EXIT_USAGE;
    FILE *log = NULL;
    if (log_path && !(log = fopen(log_path, "a"))) {
        fprintf(stderr, "xpuify: error: %s: cannot write: %s\n", log_path, strerror(errno));
        an_catalog_free(cat);
        return CLI_EXIT_USAGE;
    }
    chooser_ctx cc = {cat};
    lsp_server_options o = {0};
    o.in_fd = 0, o.out_fd = 1;
    o.cat = cat;
    o.choose_fix = choose;
    o.choose_ctx = &cc;
    o.log = log;
    o.version = XPUIFY_VERSION;
    int rc = lsp_server_run(&o);
    if (log) fclose(log);
    an_catalog_free(cat);
    return rc;
}
