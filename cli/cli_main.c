/* cli_main: the entry point: dispatches the verb. */
#include "cli/cli.h"
#include "util/ut_suggest.h"
#include <stdio.h>

static void usage(FILE *fp) {
    fprintf(fp,
            "xpuify %s: find CUDA-only code and make it device-agnostic (CUDA, Intel XPU, CPU, MPS)\n\n"
            "Usage: xpuify <command> [options]\n\n"
            "Commands:\n"
            "  check [PATH...]      report CUDA-only code (default PATH: .)\n"
            "  fix [PATH...]        rewrite it into device-agnostic code (--diff to preview)\n"
            "  verify [PATH] --run CMD  run the project before and after `fix` on every device and compare\n"
            "  rule CODE|NAME       explain a rule; `rule --all [--format json|markdown]` lists them\n"
            "  config [PATH]        print the effective configuration for PATH and where each value came from\n"
            "  test-rules [DIR...]  run the rules' examples (built-in rules, or the YAML rules in DIR)\n"
            "  report --html FILE [PATH...]  a self-contained HTML migration report\n"
            "  merge-sarif -o OUT IN...      join the SARIF logs of sharded runs\n"
            "  lsp                  run the language server on stdin/stdout (see docs/editors.md)\n"
            "  version              print the version\n"
            "  help                 this text\n\n"
            "Run `xpuify <command> --help` for a command's options.\n"
            "Exit status: 0 clean, 1 findings, 2 usage, configuration or input error.\n",
            XPUIFY_VERSION);
}

int main(int argc, char **argv) {
    if (argc < 2) { usage(stderr); return CLI_EXIT_USAGE; }
    const char *verb = argv[1];
    if (!strcmp(verb, "check")) return cli_check(argc - 1, argv + 1);
    if (!strcmp(verb, "rule")) return cli_rule(argc - 1, argv + 1);
    if (!strcmp(verb, "fix")) return cli_fix(argc - 1, argv + 1);
    if (!strcmp(verb, "config")) return cli_config(argc - 1, argv + 1);
    if (!strcmp(verb, "merge-sarif")) return cli_merge_sarif(argc - 1, argv + 1);
    if (!strcmp(verb, "test-rules")) return cli_test_rules(argc - 1, argv + 1);
    if (!strcmp(verb, "report")) return cli_report(argc - 1, argv + 1);
    if (!strcmp(verb, "verify")) return cli_verify(argc - 1, argv + 1);
    if (!strcmp(verb, "lsp")) return cli_lsp(argc - 1, argv + 1);
    if (!strcmp(verb, "version") || !strcmp(verb, "--version") || !strcmp(verb, "-V")) {
        printf("xpuify %s\n", XPUIFY_VERSION);
        return 0;
    }
    if (!strcmp(verb, "help") || !strcmp(verb, "--help") || !strcmp(verb, "-h")) { usage(stdout); return 0; }
    static const char *const verbs[] = {"check", "fix", "verify", "rule", "config", "test-rules", "report",
                                        "merge-sarif", "lsp", "version", "help"};
    const char *near = ut_suggest(verb, verbs, sizeof verbs / sizeof *verbs);
    if (near) {
        fprintf(stderr, "xpuify: error: unknown command `%s`; did you mean `%s`?\n", verb, near);
        return CLI_EXIT_USAGE;
    }
    fprintf(stderr, "xpuify: error: unknown command `%s`\n\n", verb);
    usage(stderr);
    return CLI_EXIT_USAGE;
}
