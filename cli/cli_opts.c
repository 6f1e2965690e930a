/* cli_opts: shared option parsing and run set-up for check and fix. */
#include "analyzer/core/an_target.h"
#include "cli/cli_opts.h"
#include "analyzer/project/an_project.h"
#include "rewriters/rw_target.h"
#include "analyzer/core/an_cache.h"
#include "cli/cli.h"
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void cli_opts_init(cli_opts *o) {
    memset(o, 0, sizeof *o);
    o->format = OUT_TEXT;
    o->max_file_size = 10u << 20;
    o->walk.langs[AN_LANG_PYTHON] = true;
    o->walk.langs[AN_LANG_C] = true;
    o->walk.langs[AN_LANG_TEXT] = true;
    o->target = CLI_TARGET_AUTO;
    o->helper.module = "xpuify_device";
    o->priority = "cuda,xpu,mps,cpu";
}

static void free_sets(cli_opts *o) {
    for (size_t i = 0; i < o->enabled_sets.len; i++) ut_free(o->enabled_sets.items[i]);
    ut_vec_free(&o->enabled_sets);
    ut_vec_free(&o->set_cfg);
}

void cli_opts_free(cli_opts *o) {
    for (size_t i = 0; i < o->walk.excludes.len; i++) ut_free(o->walk.excludes.items[i]);
    ut_vec_free(&o->walk.excludes);
    ut_vec_free(&o->paths);
    ut_vec_free(&o->selects);
    ut_vec_free(&o->ignores);
    ut_vec_free(&o->rule_dirs);
    ut_vec_free(&o->fail_on);
    an_file_list_free(&o->files);
    an_skip_list_free(&o->skipped);
    ut_free(o->enabled);
    if (o->cache) an_project_use_cache(NULL);
    an_cache_free(o->cache);
    an_catalog_free(o->cat);
    free_sets(o);
    ut_free(o->file_cfg);
    ut_free(o->file_enabled);
    cf_store_free(o->store);
}

const char *cli_opts_help(void) {
    return "  -f, --format FMT        text (default), concise, json, sarif, github, gitlab, junit\n"
           "  -o, --output-file FILE  write the report to FILE instead of standard output\n"
           "      --color WHEN        auto (default: on a terminal, unless NO_COLOR or TERM=dumb; FORCE_COLOR or\n"
           "                          CLICOLOR_FORCE turn it on in CI logs), always, never\n"
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
           "      --config FILE       use this configuration for every file (default: the closest .xpuify.yml)\n"
           "      --no-config         read no configuration file\n"
           "      --fail-on SEV       exit 1 only for findings of this severity or worse: error, warning, info (default)\n"
           "      --force-exclude     apply excludes to paths named on the command line too (for pre-commit)\n"
           "      --no-default-path   without PATH, check nothing (instead of `.`)\n"
           "  -p, --compile-commands DIR  C/C++/CUDA precise mode: flags from DIR/compile_commands.json\n"
           "      --precise           C/C++/CUDA precise mode: real CUDA headers, all includes followed\n"
           "      --cuda-path DIR     the CUDA toolkit for precise mode (default: $CUDA_PATH, /usr/local/cuda)\n"
           "      --no-cache          neither read nor write the results cache\n"
           "      --cache-dir DIR     where the results cache lives (default $XPUIFY_CACHE_DIR, else .xpuify_cache;\n"
           "                          under CI=true none: name a place outside the checkout)\n"
           "      --exit-zero         exit 0 even with findings (errors still exit 2)\n"
           "  -q, --quiet             no warnings about skipped files, no target line\n"
           "  -v, --verbose           say how many files were read, parsed and how long it took (stderr)\n"
           "      --whole-files       parse whole files, not only the statements that can hold a finding (slower;\n"
           "                          the findings are the same, syntax errors are then reported everywhere)\n";
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
    } else if (cli_opt(argc, argv, i, "--color", &v) || cli_opt(argc, argv, i, "--colour", &v)) {
        if (!cli_color_parse(v, &o->color)) {
            fprintf(stderr, "xpuify: error: --color: `%s` is not one of auto, always, never\n", v ? v : "");
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
        o->target_set = true;
        o->target_text = v;
    } else if (cli_opt(argc, argv, i, "--torch-version", &v)) {
        int a, b;
        if (!v || !an_parse_version(v, &a, &b)) {
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
        o->priority_set = true;
    } else if (cli_opt(argc, argv, i, "--config", &v)) {
        if (!v) return -1;
        o->config_file = v;
    } else if (cli_opt(argc, argv, i, "--fail-on", &v)) {
        if (!v || (strcmp(v, "error") && strcmp(v, "warning") && strcmp(v, "info"))) {
            fprintf(stderr, "xpuify: error: --fail-on: `%s` is not one of error, warning, info\n", v ? v : "");
            return -1;
        }
        ut_vec_push(&o->fail_on, v);
    } else if (!strcmp(argv[*i], "--no-config")) o->no_config = true;
    else if (!strcmp(argv[*i], "--force-exclude")) o->walk.force_exclude = true;
    else if (!strcmp(argv[*i], "--no-default-path")) o->no_default_path = true;
    else if (cli_opt(argc, argv, i, "--compile-commands", &v) || cli_opt(argc, argv, i, "-p", &v)) {
        if (!v) return -1;
        char db[4096];
        struct stat st;
        snprintf(db, sizeof db, "%s/compile_commands.json", v);
        if (stat(db, &st) != 0) {
            fprintf(stderr, "xpuify: error: --compile-commands: `%s` holds no compile_commands.json\n", v);
            return -1;
        }
        o->c.compile_db = v;
        o->c.mode = AN_C_PRECISE;
    } else if (cli_opt(argc, argv, i, "--cuda-path", &v)) {
        if (!v) return -1;
        o->c.cuda_path = v;
    } else if (!strcmp(argv[*i], "--precise")) o->c.mode = AN_C_PRECISE;
    else if (cli_opt(argc, argv, i, "--cache-dir", &v)) {
        if (!v || !*v) {
            fprintf(stderr, "xpuify: error: --cache-dir needs a directory\n");
            return -1;
        }
        o->cache_dir = v;
    } else if (!strcmp(argv[*i], "--no-cache")) o->no_cache = true;
    else if (!strcmp(argv[*i], "--exit-zero")) o->exit_zero = true;
    else if (!strcmp(argv[*i], "--no-ignore")) o->walk.no_ignore = true;
    else if (!strcmp(argv[*i], "-q") || !strcmp(argv[*i], "--quiet")) o->quiet = true;
    else if (!strcmp(argv[*i], "-v") || !strcmp(argv[*i], "--verbose")) o->verbose = true;
    else if (!strcmp(argv[*i], "--whole-files")) o->whole_files = true;
    else return 0;
    return 1;
}

typedef struct {
    cli_opts *o;
    ut_buf errs;
    bool failed;
} skip_ctx;

/* the configuration's `exclude`: a directory is judged by the configuration above it */
static bool skip_path(void *vc, const char *path, bool dir) {
    skip_ctx *c = vc;
    const cf_config *cfg;
    if (dir) {
        char parent[4096];
        snprintf(parent, sizeof parent, "%s", path);
        char *sl = strrchr(parent, '/');
        if (sl) *sl = 0;
        else snprintf(parent, sizeof parent, ".");
        cfg = cf_store_for_path(c->o->store, parent, &c->errs);
    } else {
        cfg = cf_store_for_file(c->o->store, path, &c->errs);
    }
    if (!cfg) { c->failed = true; return false; }
    return cf_config_excludes(cfg, path, dir);
}

static void print_errors(const char *what, const ut_buf *errs) {
    for (char *line = errs->data, *nl; line && *line; line = nl + 1) {
        nl = strchr(line, '\n');
        if (!nl) break;
        fprintf(stderr, "xpuify: error: %s%.*s\n", what, (int)(nl - line), line);
    }
}

static bool has_dir(const cf_strs *v, const char *dir) {
    for (size_t i = 0; i < v->len; i++)
        if (!strcmp(v->items[i].text, dir)) return true;
    return false;
}

/* the rules a configuration enables: its selection, and only the user rules of its own rule directories */
static bool *config_set(cli_opts *o, const cf_config *cfg, ut_buf *err, bool *ok) {
    for (size_t i = 0; i < o->set_cfg.len; i++)
        if (o->set_cfg.items[i] == cfg) return o->enabled_sets.items[i];
    size_t n = an_catalog_count(o->cat);
    bool *en = ut_calloc(n ? n : 1, sizeof(bool));
    if (!cf_config_enabled(cfg, o->cat, en, err)) *ok = false;
    for (size_t i = o->builtin_rules; i < n; i++) {
        const an_rule *r = an_catalog_rule(o->cat, i);
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", r->origin);
        char *sl = strrchr(dir, '/');
        if (sl) *sl = 0;
        if (!has_dir(&cfg->rule_dirs, dir)) en[i] = false;
    }
    ut_vec_push(&o->enabled_sets, en);
    ut_vec_push(&o->set_cfg, cfg);
    return en;
}

bool cli_opts_make_store(cli_opts *o) {
    o->store = cf_store_new();
    if (o->no_config) cf_store_force(o->store, NULL, true);
    else if (o->config_file) cf_store_force(o->store, o->config_file, false);
    for (size_t i = 0; i < o->selects.len; i++) cf_store_override(o->store, CF_SELECT, o->selects.items[i]);
    for (size_t i = 0; i < o->ignores.len; i++) cf_store_override(o->store, CF_IGNORE, o->ignores.items[i]);
    for (size_t i = 0; i < o->rule_dirs.len; i++) cf_store_override(o->store, CF_RULE_DIRS, o->rule_dirs.items[i]);
    for (size_t i = 0; i < o->walk.excludes.len; i++) cf_store_override(o->store, CF_EXCLUDE, o->walk.excludes.items[i]);
    if (o->target_set) cf_store_override(o->store, CF_TARGET, o->target_text);
    if (o->torch_version) cf_store_override(o->store, CF_TORCH_VERSION, o->torch_version);
    if (o->priority_set) cf_store_override(o->store, CF_DEVICE_PRIORITY, o->priority);
    if (o->helper.path) cf_store_override(o->store, CF_HELPER_PATH, o->helper.path);
    for (size_t i = 0; i < o->fail_on.len; i++) cf_store_override(o->store, CF_FAIL_ON, o->fail_on.items[i]);
    for (size_t i = 0; i < o->rule_dirs.len; i++) {
        struct stat st;
        if (stat(o->rule_dirs.items[i], &st) != 0 || !S_ISDIR(st.st_mode)) {
            fprintf(stderr, "xpuify: error: --rules: `%s` is not a directory\n", o->rule_dirs.items[i]);
            return false;
        }
    }
    return true;
}

/* The built-in catalog (YAML, PCRE2 JIT, the query set: ~65 ms) is loaded on a thread of its own while the files
 * and configurations are walked; it is used when no configuration adds rule directories (otherwise the catalog is
 * loaded again with them). */
typedef struct {
    pthread_t th;
    bool started, joined;
    an_catalog *cat;
    size_t nbuiltin;
} builtin_job;

static void *load_builtin(void *arg) {
    builtin_job *b = arg;
    b->cat = cli_load_catalog_ex(NULL, 0, &b->nbuiltin);
    return NULL;
}

static void join_builtin(builtin_job *b) {
    if (b->started && !b->joined) pthread_join(b->th, NULL);
    b->joined = true;
}

static bool prepare(cli_opts *o, builtin_job *bj);

bool cli_opts_prepare(cli_opts *o) {
    builtin_job bj = {0};
    bj.started = pthread_create(&bj.th, NULL, load_builtin, &bj) == 0;
    bool ok = prepare(o, &bj);
    join_builtin(&bj);
    if (bj.cat) an_catalog_free(bj.cat); /* not used */
    return ok;
}

static bool prepare(cli_opts *o, builtin_job *bj) {
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    clock_gettime(CLOCK_REALTIME, &now); /* before any file is stat-ed: the results cache's stamps */
    o->began_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
    if (!cli_opts_make_store(o)) return false;
    bool no_paths = !o->paths.len;
    if (no_paths) ut_vec_push(&o->paths, ".");
    skip_ctx sc = {o, {0}, false};
    ut_buf_init(&sc.errs);
    o->root_cfg = cf_store_for_path(o->store, o->paths.items[0], &sc.errs);
    if (!o->root_cfg) {
        print_errors("", &sc.errs);
        ut_buf_free(&sc.errs);
        return false;
    }
    /* run-wide settings from the first path's configuration (command-line values are already in it) */
    if (!cli_target_parse(o->root_cfg->target, &o->target)) o->target = CLI_TARGET_AUTO;
    o->torch_version = o->root_cfg->torch_version;
    o->priority = o->root_cfg->device_priority;
    if (o->root_cfg->helper_path) {
        snprintf(o->helper_buf, sizeof o->helper_buf, "%s", o->root_cfg->helper_path);
        /* shown relative to the working directory when inside it */
        char cwd[4096];
        if (getcwd(cwd, sizeof cwd)) {
            size_t n = strlen(cwd);
            if (!strncmp(o->helper_buf, cwd, n) && o->helper_buf[n] == '/')
                memmove(o->helper_buf, o->helper_buf + n + 1, strlen(o->helper_buf + n + 1) + 1);
        }
        o->helper.path = o->helper_buf;
        const char *b = strrchr(o->helper.path, '/');
        b = b ? b + 1 : o->helper.path;
        size_t n = strlen(b);
        if (n < 4 || strcmp(b + n - 3, ".py") || n - 3 >= sizeof o->module_buf) {
            fprintf(stderr, "xpuify: error: --helper-path: `%s` must name a .py file\n", o->helper.path);
            ut_buf_free(&sc.errs);
            return false;
        }
        memcpy(o->module_buf, b, n - 3);
        o->module_buf[n - 3] = 0;
        o->helper.module = o->module_buf;
    }
    /* the files, with the configurations' excludes */
    o->walk.skip = skip_path;
    o->walk.skip_ctx = &sc;
    o->walk.skipped = &o->skipped;
    ut_buf errs;
    ut_buf_init(&errs);
    int missing = 0;
    if (!(no_paths && o->no_default_path))
        missing = an_walk(o->paths.items, o->paths.len, &o->walk, &o->files, &errs);
    print_errors("", &errs);
    ut_buf_free(&errs);
    o->walk.skip = NULL; /* sc lives on this stack frame */
    o->walk.skip_ctx = NULL;
    o->input_error = missing > 0;
    o->file_cfg = ut_calloc(o->files.len ? o->files.len : 1, sizeof(cf_config *));
    for (size_t i = 0; i < o->files.len && !sc.failed; i++) {
        o->file_cfg[i] = cf_store_for_file(o->store, o->files.items[i].path, &sc.errs);
        if (!o->file_cfg[i]) sc.failed = true;
    }
    if (sc.failed) {
        print_errors("", &sc.errs);
        ut_buf_free(&sc.errs);
        return false;
    }
    ut_buf_free(&sc.errs);
    o->ms_files = cli_ms_since(&t0);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    /* the catalog: built-in rules plus every configuration's rule directories */
    UT_VEC(const char *) dirs = {0};
    for (size_t i = 0; i < cf_store_count(o->store); i++) {
        const cf_config *c = cf_store_at(o->store, i);
        for (size_t j = 0; j < c->rule_dirs.len; j++) {
            bool seen = false;
            for (size_t k = 0; k < dirs.len && !seen; k++) seen = !strcmp(dirs.items[k], c->rule_dirs.items[j].text);
            if (!seen) ut_vec_push(&dirs, c->rule_dirs.items[j].text);
        }
    }
    join_builtin(bj);
    if (!dirs.len && bj->cat) {
        o->cat = bj->cat, o->builtin_rules = bj->nbuiltin;
        bj->cat = NULL;
    } else {
        o->cat = cli_load_catalog_ex(dirs.items, dirs.len, &o->builtin_rules);
    }
    ut_vec_free(&dirs);
    if (!o->cat) return false;
    o->ms_rules = cli_ms_since(&t0);
    ut_buf err;
    ut_buf_init(&err);
    bool ok = true;
    size_t nrules = an_catalog_count(o->cat);
    o->enabled = ut_calloc(nrules ? nrules : 1, sizeof(bool));
    memcpy(o->enabled, config_set(o, o->root_cfg, &err, &ok), nrules * sizeof(bool));
    o->file_enabled = ut_calloc(o->files.len ? o->files.len : 1, sizeof(bool *));
    for (size_t i = 0; i < o->files.len; i++) {
        const cf_config *cfg = o->file_cfg[i];
        bool *base = config_set(o, cfg, &err, &ok);
        bool *mine = base;
        if (cfg->per_file_ignores.len) {
            bool *en = ut_malloc(nrules ? nrules : 1);
            memcpy(en, base, nrules);
            cf_config_file_enabled(cfg, o->cat, o->files.items[i].path, en);
            mine = NULL;
            for (size_t k = 0; k < o->enabled_sets.len && !mine; k++)
                if (o->set_cfg.items[k] == cfg && !memcmp(o->enabled_sets.items[k], en, nrules)) mine = o->enabled_sets.items[k];
            if (mine) ut_free(en);
            else {
                ut_vec_push(&o->enabled_sets, en);
                ut_vec_push(&o->set_cfg, cfg);
                mine = en;
            }
        }
        o->file_enabled[i] = mine;
    }
    /* errors of configurations are reported once each */
    if (!ok) {
        ut_buf uniq;
        ut_buf_init(&uniq);
        for (char *line = err.data, *nl; line && *line; line = nl + 1) {
            nl = strchr(line, '\n');
            if (!nl) break;
            size_t n = (size_t)(nl - line + 1);
            if (!uniq.data || !memmem(uniq.data, uniq.len, line, n)) ut_buf_append(&uniq, line, n);
        }
        print_errors("", &uniq);
        ut_buf_free(&uniq);
    }
    ut_buf_free(&err);
    return ok;
}

void cli_opts_filter_files(cli_opts *o, const bool *keep) {
    size_t w = 0;
    for (size_t i = 0; i < o->files.len; i++) {
        if (!keep[i]) {
            ut_free(o->files.items[i].path);
            continue;
        }
        o->files.items[w] = o->files.items[i];
        o->file_cfg[w] = o->file_cfg[i];
        o->file_enabled[w] = o->file_enabled[i];
        w++;
    }
    o->files.len = w;
}

static const cf_config *cfg_of(const cli_opts *o, const an_file_result *f) {
    size_t i = (size_t)(f->file - o->files.items);
    return i < o->files.len ? o->file_cfg[i] : o->root_cfg;
}

void cli_opts_apply_severity(const cli_opts *o, an_results *res) {
    for (size_t i = 0; i < res->len; i++) {
        const cf_config *c = cfg_of(o, &res->items[i]);
        if (!c->rule_options.len) continue;
        for (size_t j = 0; j < res->items[i].diags.len; j++) {
            an_diag *d = &res->items[i].diags.items[j];
            d->severity = cf_config_severity(c, d->rule);
        }
    }
}

/* XPU812 (cuda-by-design) only records code left as it is by design: nothing to do, so it fails no run and is
 * not counted as remaining */
bool cli_record_only(const an_diag *d) {
    return d->rule && d->rule->builtin && !strcmp(d->rule->builtin, "cuda-by-design");
}

bool cli_opts_fails(const cli_opts *o, const an_results *res) {
    for (size_t i = 0; i < res->len; i++) {
        const cf_config *c = cfg_of(o, &res->items[i]);
        for (size_t j = 0; j < res->items[i].diags.len; j++)
            if (res->items[i].diags.items[j].severity <= c->fail_on && !cli_record_only(&res->items[i].diags.items[j]))
                return true;
    }
    return false;
}

bool cli_in_ci(void) {
    const char *ci = getenv("CI");
    return ci && *ci && strcmp(ci, "0") && strcasecmp(ci, "false");
}

struct an_cache *cli_cache_open(cli_opts *o) {
    if (o->no_cache || !o->cat) return NULL;
    const char *dir = o->cache_dir;
    if (!dir) dir = getenv("XPUIFY_CACHE_DIR");
    /* in CI the checkout is the untrusted input: no cache inside it unless a place is named (docs/security.md) */
    if ((!dir || !*dir) && cli_in_ci()) return NULL;
    if (!dir || !*dir) dir = ".xpuify_cache";
    if (o->cache) an_project_use_cache(NULL);
    an_cache_free(o->cache);
    o->cache = NULL;
    static uint8_t secret[AN_CACHEKEY_LEN];
    static int have = -1;
    char *why = NULL;
    if (have < 0) have = an_cachekey_load(secret, &why);
    if (have) o->cache = an_cache_open(dir, XPUIFY_VERSION, o->cat, secret, &why);
    if (!o->cache) {
        if (why && !o->quiet) fprintf(stderr, "xpuify: warning: results cache off: %s\n", why);
        ut_free(why);
        return NULL;
    }
    if (o->began_ns) an_cache_trust_stamps(o->cache, o->began_ns);
    /* the project model keeps each file's import summary beside its findings */
    an_project_use_cache(o->cache);
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
        fprintf(stderr, "xpuify: cache: %zu hits, %zu misses, %zu files unchanged by size and times, %zu entries not authentic\n",
                hits, misses, an_cache_stamp_hits(o->cache), an_cache_forged(o->cache));
    }
}

bool cli_report_unreadable(const cli_opts *o, const an_results *res) {
    bool err = false;
    size_t skipped = o->skipped.len;
    for (size_t i = 0; i < res->len; i++) {
        const an_file_result *f = &res->items[i];
        if (f->status == AN_LOAD_OK) continue;
        if (f->file->named) {
            fprintf(stderr, "xpuify: error: %s: %s\n", f->file->path, f->error);
            err = true;
        } else {
            skipped++;
            if (!o->quiet) fprintf(stderr, "xpuify: warning: %s: %s; skipped\n", f->file->path, f->error);
        }
    }
    for (size_t i = 0; i < o->skipped.len && !o->quiet; i++)
        fprintf(stderr, "xpuify: warning: %s: %s\n", o->skipped.items[i].path, o->skipped.items[i].why);
    /* a gate must not pass what it did not read: in CI, anything skipped fails the run (exit 2) */
    if (skipped && cli_in_ci()) {
        fprintf(stderr, "xpuify: error: %zu path%s not checked (see above); under CI=true that fails the run\n",
                skipped, skipped == 1 ? " was" : "s were");
        err = true;
    }
    return err;
}
