/* cli_opts: shared option parsing and run set-up for check and fix. */
#include "cli_opts.h"
#include "../rewriters/rw_target.h"
#include "../analyzer/an_cache.h"
#include "cli.h"
#include <stdio.h>

void cli_opts_init(cli_opts *o) {
    memset(o, 0, sizeof *o);
    o->format = OUT_TEXT;
    o->max_file_size = 10u << 20;
    o->walk.langs[AN_LANG_PYTHON] = true;
    o->target = CLI_TARGET_AUTO;
    o->helper.module = "xpuify_device";
    o->priority = "cuda,xpu,mps,cpu";
}

void cli_opts_free(cli_opts *o) {
    for (size_t i = 0; i < o->walk.excludes.len; i++) ut_free(o->walk.excludes.items[i]);
    ut_vec_free(&o->walk.excludes);
    ut_vec_free(&o->paths);
    ut_vec_free(&o->selects);
    ut_vec_free(&o->ignores);
    ut_vec_free(&o->rule_dirs);
    an_file_list_free(&o->files);
    ut_free(o->enabled);
    an_cache_free(o->cache);
    an_catalog_free(o->cat);
}

const char *cli_opts_help(void) {
    return "  -f, --format FMT        text (default), concise, json, sarif, github\n"
           "  -o, --output-file FILE  write the report to FILE instead of standard output\n"
           "      --select LIST       only these rules (codes, code prefixes, names, ALL; comma-separated)\n"
           "      --ignore LIST       not these rules\n"
           "      --exclude GLOB      skip paths matching GLOB (repeatable)\n"
           "      --no-ignore         do not honour .gitignore\n"
           "      --rules DIR         also load the YAML rules in DIR (repeatable)\n"
           "      --max-file-size N   skip larger files (default 10M; K/M/G suffixes)\n"
           "  -j, --threads N         worker threads (default: number of cores)\n"
           "      --target T          what fixes call: auto (default), accelerator, compat\n"
           "      --torch-version V   oldest torch the project supports (default: read from its requirements)\n"
           "      --helper-module M   compat: helper module name (default xpuify_device)\n"
           "      --helper-path P     compat: write the helper here (default: beside scripts / top package)\n"
           "      --device-priority L compat: device order baked into the helper (default cuda,xpu,mps,cpu)\n"
           "      --no-cache          neither read nor write the results cache\n"
           "      --cache-dir DIR     where the results cache lives (default $XPUIFY_CACHE_DIR or .xpuify_cache)\n"
           "      --exit-zero         exit 0 even with findings (errors still exit 2)\n"
           "  -q, --quiet             no warnings about skipped files, no target line\n";
}

static bool valid_module(const char *m) {
    if (!*m || (*m >= '0' && *m <= '9')) return false;
    for (; *m; m++)
        if (!((*m >= 'a' && *m <= 'z') || (*m >= 'A' && *m <= 'Z') || (*m >= '0' && *m <= '9') || *m == '_')) return false;
    return true;
}

int cli_opts_parse(cli_opts *o, int argc, char **argv, int *i) {
    const char *v;
    if (cli_opt(argc, argv, i, "--format", &v) || cli_opt(argc, argv, i, "-f", &v) ||
        cli_opt(argc, argv, i, "--output-format", &v)) {
        if (!v) return -1;
        if (!out_format_parse(v, &o->format)) {
            fprintf(stderr, "xpuify: error: unknown format `%s` (known: %s)\n", v, out_format_names());
            return -1;
        }
    } else if (cli_opt(argc, argv, i, "--output-file", &v) || cli_opt(argc, argv, i, "-o", &v)) {
        if (!v) return -1;
        o->output_file = v;
    } else if (cli_opt(argc, argv, i, "--select", &v)) {
        if (!v) return -1;
        ut_vec_push(&o->selects, v);
    } else if (cli_opt(argc, argv, i, "--ignore", &v)) {
        if (!v) return -1;
        ut_vec_push(&o->ignores, v);
    } else if (cli_opt(argc, argv, i, "--exclude", &v)) {
        if (!v) return -1;
        ut_vec_push(&o->walk.excludes, ut_strdup(v));
    } else if (cli_opt(argc, argv, i, "--rules", &v)) {
        if (!v) return -1;
        ut_vec_push(&o->rule_dirs, v);
    } else if (cli_opt(argc, argv, i, "--max-file-size", &v)) {
        if (!v || !cli_parse_size(v, &o->max_file_size)) {
            fprintf(stderr, "xpuify: error: --max-file-size: `%s` is not a size (e.g. 500K, 10M)\n", v ? v : "");
            return -1;
        }
    } else if (cli_opt(argc, argv, i, "--threads", &v) || cli_opt(argc, argv, i, "-j", &v)) {
        char *end;
        long n = v ? strtol(v, &end, 10) : -1;
        if (!v || *end || n < 0 || n > 1024) {
            fprintf(stderr, "xpuify: error: --threads: `%s` is not a thread count\n", v ? v : "");
            return -1;
        }
        o->threads = (int)n;
    } else if (cli_opt(argc, argv, i, "--target", &v)) {
        if (!v || !cli_target_parse(v, &o->target)) {
            fprintf(stderr, "xpuify: error: --target: `%s` is not one of auto, accelerator, compat\n", v ? v : "");
            return -1;
        }
    } else if (cli_opt(argc, argv, i, "--torch-version", &v)) {
        int a, b;
        if (!v || !rw_parse_version(v, &a, &b)) {
            fprintf(stderr, "xpuify: error: --torch-version: `%s` is not a version like 2.6\n", v ? v : "");
            return -1;
        }
        o->torch_version = v;
    } else if (cli_opt(argc, argv, i, "--helper-module", &v)) {
        if (!v || !valid_module(v)) {
            fprintf(stderr, "xpuify: error: --helper-module: `%s` is not a Python module name\n", v ? v : "");
            return -1;
        }
        o->helper.module = v;
    } else if (cli_opt(argc, argv, i, "--helper-path", &v)) {
        if (!v) return -1;
        o->helper.path = v;
    } else if (cli_opt(argc, argv, i, "--device-priority", &v)) {
        if (!v || strspn(v, "abcdefghijklmnopqrstuvwxyz,") != strlen(v)) {
            fprintf(stderr, "xpuify: error: --device-priority: `%s` is not a list like cuda,xpu,mps,cpu\n", v ? v : "");
            return -1;
        }
        o->priority = v;
    } else if (cli_opt(argc, argv, i, "--cache-dir", &v)) {
        if (!v || !*v) {
            fprintf(stderr, "xpuify: error: --cache-dir needs a directory\n");
            return -1;
        }
        o->cache_dir = v;
    } else if (!strcmp(argv[*i], "--no-cache")) o->no_cache = true;
    else if (!strcmp(argv[*i], "--exit-zero")) o->exit_zero = true;
    else if (!strcmp(argv[*i], "--no-ignore")) o->walk.no_ignore = true;
    else if (!strcmp(argv[*i], "-q") || !strcmp(argv[*i], "--quiet")) o->quiet = true;
    else return 0;
    return 1;
}

bool cli_opts_prepare(cli_opts *o) {
    if (o->helper.path) {
        /* the module name follows the forced path */
        const char *b = strrchr(o->helper.path, '/');
        b = b ? b + 1 : o->helper.path;
        size_t n = strlen(b);
        static char mod[256];
        if (n < 4 || strcmp(b + n - 3, ".py") || n - 3 >= sizeof mod) {
            fprintf(stderr, "xpuify: error: --helper-path: `%s` must name a .py file\n", o->helper.path);
            return false;
        }
        memcpy(mod, b, n - 3);
        mod[n - 3] = 0;
        o->helper.module = mod;
    }
    o->cat = cli_load_catalog(o->rule_dirs.items, o->rule_dirs.len);
    if (!o->cat) return false;
    size_t nrules = an_catalog_count(o->cat);
    o->enabled = ut_calloc(nrules, sizeof(bool));
    for (size_t i = 0; i < nrules; i++) o->enabled[i] = !o->selects.len;
    for (size_t i = 0; i < o->selects.len; i++)
        if (!cli_apply_selectors(o->cat, o->selects.items[i], true, o->enabled, "--select")) return false;
    for (size_t i = 0; i < o->ignores.len; i++)
        if (!cli_apply_selectors(o->cat, o->ignores.items[i], false, o->enabled, "--ignore")) return false;
    if (!o->paths.len) ut_vec_push(&o->paths, ".");
    ut_buf errs;
    ut_buf_init(&errs);
    int missing = an_walk(o->paths.items, o->paths.len, &o->walk, &o->files, &errs);
    for (char *line = errs.data, *nl; line && *line; line = nl + 1) {
        nl = strchr(line, '\n');
        if (!nl) break;
        fprintf(stderr, "xpuify: error: %.*s\n", (int)(nl - line), line);
    }
    ut_buf_free(&errs);
    o->input_error = missing > 0;
    return true;
}

struct an_cache *cli_cache_open(cli_opts *o) {
    if (o->no_cache || !o->cat) return NULL;
    const char *dir = o->cache_dir;
    if (!dir) dir = getenv("XPUIFY_CACHE_DIR");
    if (!dir || !*dir) dir = ".xpuify_cache";
    an_cache_free(o->cache);
    o->cache = an_cache_open(dir, XPUIFY_VERSION, o->cat);
    return o->cache;
}

void cli_cache_save(cli_opts *o) {
    if (!o->cache) return;
    char *why;
    if (an_cache_save(o->cache, &why) != 0) {
        if (!o->quiet) fprintf(stderr, "xpuify: warning: results cache not saved: %s (--no-cache turns it off)\n", why);
        ut_free(why);
    }
    const char *stats = getenv("XPUIFY_CACHE_STATS");
    if (stats && *stats && strcmp(stats, "0")) {
        size_t hits, misses;
        an_cache_stats(o->cache, &hits, &misses);
        fprintf(stderr, "xpuify: cache: %zu hits, %zu misses\n", hits, misses);
    }
}

bool cli_report_unreadable(const cli_opts *o, const an_results *res) {
    bool err = false;
    for (size_t i = 0; i < res->len; i++) {
        const an_file_result *f = &res->items[i];
        if (f->status == AN_LOAD_OK) continue;
        if (f->file->named) {
            fprintf(stderr, "xpuify: error: %s: %s\n", f->file->path, f->error);
            err = true;
        } else if (!o->quiet) {
            fprintf(stderr, "xpuify: warning: %s: %s; skipped\n", f->file->path, f->error);
        }
    }
    return err;
}
