/* cli_report: `xpuify report --html FILE [PATH...]`: checks PATH as `check` would (same configuration and options),
 * works out what `fix` would change (safe fixes; --unsafe-fixes for all), finds C/C++/CUDA kernel sources, reads an
 * optional `xpuify verify --format json` document (--verify FILE), and writes one self-contained HTML page. */
#include "output/out_fingerprint.h"
#include "rewriters/rw_diff.h"
#include "rewriters/rw_fixer.h"
#include "rewriters/rw_write.h"
#include "cli/cli.h"
#include "cli/cli_opts.h"
#include "cli/cli_progress.h"
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* `xpuify verify --format json` writes devices as objects and one run per (tier, variant); the report's matrix wants
 * device names and one row per check. Turns the former into the latter (rows: the original and patched programs, and
 * the reference command if any); returns NULL for a document of any other shape, which is then checked as is. */
static cJSON *from_verify_output(const cJSON *v) {
    const cJSON *devs = cJSON_GetObjectItemCaseSensitive(v, "devices"), *runs = cJSON_GetObjectItemCaseSensitive(v, "runs");
    if (!cJSON_IsArray(devs) || !cJSON_IsArray(runs) || !cJSON_IsObject(cJSON_GetArrayItem(devs, 0))) return NULL;
    cJSON *m = cJSON_CreateObject(), *names = cJSON_AddArrayToObject(m, "devices");
    cJSON *checks = cJSON_AddArrayToObject(m, "checks");
    const cJSON *summary = cJSON_GetObjectItemCaseSensitive(v, "summary"), *cmd = cJSON_GetObjectItemCaseSensitive(v, "run");
    if (cJSON_IsString(summary) && *summary->valuestring) cJSON_AddStringToObject(m, "note", summary->valuestring);
    static const char *const variants[] = {"original", "patched", "ref-cmd"};
    cJSON *rows[3] = {NULL, NULL, NULL};
    const cJSON *d;
    cJSON_ArrayForEach(d, devs) {
        const cJSON *tier = cJSON_GetObjectItemCaseSensitive(d, "tier");
        if (cJSON_IsString(tier)) cJSON_AddItemToArray(names, cJSON_CreateString(tier->valuestring));
    }
    const cJSON *r;
    cJSON_ArrayForEach(r, runs) {
        const cJSON *tier = cJSON_GetObjectItemCaseSensitive(r, "tier"), *var = cJSON_GetObjectItemCaseSensitive(r, "variant");
        const cJSON *verdict = cJSON_GetObjectItemCaseSensitive(r, "verdict"), *st = cJSON_GetObjectItemCaseSensitive(r, "status");
        const cJSON *with = cJSON_GetObjectItemCaseSensitive(r, "compared_with");
        const cJSON *diff = cJSON_GetObjectItemCaseSensitive(r, "difference");
        if (!cJSON_IsString(tier) || !cJSON_IsString(var) || !cJSON_IsString(verdict)) continue;
        int k = 0;
        while (k < 3 && strcmp(variants[k], var->valuestring)) k++;
        if (k == 3) continue;
        if (!rows[k]) {
            rows[k] = cJSON_CreateObject();
            char name[512];
            snprintf(name, sizeof name, "%s%s%s", variants[k], cJSON_IsString(cmd) && k < 2 ? ": " : "",
                     cJSON_IsString(cmd) && k < 2 ? cmd->valuestring : "");
            cJSON_AddStringToObject(rows[k], "name", name);
            cJSON_AddObjectToObject(rows[k], "results");
            cJSON_AddItemToArray(checks, rows[k]);
        }
        const char *vd = verdict->valuestring, *status = vd;
        if (!strcmp(vd, "match") || !strcmp(vd, "runs") || !strcmp(vd, "ran") || !strcmp(vd, "reference")) status = "pass";
        else if (!strcmp(vd, "DIFFERS") || !strcmp(vd, "FAILS") || !strcmp(vd, "fails")) status = "fail";
        ut_buf detail;
        ut_buf_init(&detail);
        ut_buf_puts(&detail, vd);
        if (cJSON_IsString(st)) ut_buf_printf(&detail, "; %s", st->valuestring);
        if (cJSON_IsString(with)) ut_buf_printf(&detail, "; compared with %s", with->valuestring);
        if (cJSON_IsString(diff)) ut_buf_printf(&detail, ": %s", diff->valuestring);
        cJSON *cell = cJSON_CreateObject();
        cJSON_AddStringToObject(cell, "status", status);
        cJSON_AddStringToObject(cell, "detail", detail.data ? detail.data : "");
        ut_buf_free(&detail);
        cJSON_AddItemToObject(cJSON_GetObjectItemCaseSensitive(rows[k], "results"), tier->valuestring, cell);
    }
    /* a tier not present: every row says why it did not run */
    cJSON_ArrayForEach(d, devs) {
        const cJSON *tier = cJSON_GetObjectItemCaseSensitive(d, "tier"), *present = cJSON_GetObjectItemCaseSensitive(d, "present");
        const cJSON *how = cJSON_GetObjectItemCaseSensitive(d, "how");
        if (!cJSON_IsString(tier) || cJSON_IsTrue(present)) continue;
        for (int k = 0; k < 3; k++) {
            if (!rows[k]) continue;
            cJSON *cell = cJSON_CreateObject();
            cJSON_AddStringToObject(cell, "status", "not-run");
            cJSON_AddStringToObject(cell, "detail", cJSON_IsString(how) ? how->valuestring : "device not present");
            cJSON_AddItemToObject(cJSON_GetObjectItemCaseSensitive(rows[k], "results"), tier->valuestring, cell);
        }
    }
    return m;
}

static cJSON *read_verify(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "xpuify: error: --verify: %s: %s\n", path, strerror(errno));
        return NULL;
    }
    ut_buf b;
    ut_buf_init(&b);
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) ut_buf_append(&b, chunk, n);
    fclose(f);
    cJSON *v = cJSON_ParseWithLength(b.data ? b.data : "", b.len);
    ut_buf_free(&b);
    char *why = NULL;
    cJSON *m = v ? from_verify_output(v) : NULL;
    if (m) cJSON_Delete(v), v = m;
    if (!v) fprintf(stderr, "xpuify: error: --verify: %s: not valid JSON\n", path);
    else if (!out_verify_valid(v, &why)) {
        fprintf(stderr, "xpuify: error: --verify: %s: %s (see docs/report.md for the expected shape)\n", path, why);
        ut_free(why);
        cJSON_Delete(v);
        v = NULL;
    }
    return v;
}

int cli_report(int argc, char **argv) {
    cli_opts o;
    cli_opts_init(&o);
    bool bad = false, only_paths = false, unsafe = false, no_progress = false;
    const char *html = NULL, *verify = NULL, *title = "xpuify migration report", *v;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_paths || a[0] != '-' || !strcmp(a, "-")) { ut_vec_push(&o.paths, a); continue; }
        if (!strcmp(a, "--")) { only_paths = true; continue; }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            printf("Usage: xpuify report --html FILE [options] [PATH...]\n\nOptions:\n"
                   "      --html FILE         write the report to FILE (required)\n"
                   "      --verify FILE       add the verify matrix from `xpuify verify --format json` (docs/report.md)\n"
                   "      --title TEXT        the page title\n"
                   "      --unsafe-fixes      show the unsafe fixes in the diffs too\n"
                   "      --no-progress       no progress line (shown only on a terminal, for long runs)\n%s",
                   cli_opts_help());
            cli_opts_free(&o);
            return 0;
        }
        if (cli_opt(argc, argv, &i, "--html", &v)) { if (!v) bad = true; html = v; continue; }
        if (cli_opt(argc, argv, &i, "--verify", &v)) { if (!v) bad = true; verify = v; continue; }
        if (cli_opt(argc, argv, &i, "--title", &v)) { if (!v) bad = true; else title = v; continue; }
        if (!strcmp(a, "--unsafe-fixes")) { unsafe = true; continue; }
        if (!strcmp(a, "--no-progress")) { no_progress = true; continue; }
        int r = cli_opts_parse(&o, argc, argv, &i);
        if (r < 0) bad = true;
        else if (r == 0) {
            fprintf(stderr, "xpuify: error: unknown option `%s` (see `xpuify report --help`)\n", a);
            bad = true;
        }
    }
    if (!bad && !html) {
        fprintf(stderr, "xpuify: error: report needs --html FILE\n");
        bad = true;
    }
    int rc = CLI_EXIT_USAGE;
    an_results res = {0};
    cJSON *vdoc = NULL;
    UT_VEC(out_html_diff) diffs = {0};
    an_file_list kernels = {0};
    if (bad || !cli_opts_prepare(&o)) goto done;
    if (verify && !(vdoc = read_verify(verify))) goto done;
    an_options opt = {0};
    opt.max_file_size = o.max_file_size;
    opt.threads = o.threads;
    opt.enabled = o.enabled;
    opt.file_enabled = o.file_enabled;
    ut_buf reason;
    ut_buf_init(&reason);
    cli_target_choose(o.target, o.torch_version, o.paths.items, o.paths.len, o.cat, &o.files, o.enabled, &opt.fix,
                      &reason, NULL);
    opt.fix.unsafe = true;
    opt.fix_for_file = cli_target_fix_for_file;
    opt.fix_ctx = &o.helper;
    cli_progress prog;
    cli_progress_init(&prog, !no_progress && !o.quiet, "checked");
    opt.progress = cli_progress_update;
    opt.progress_ctx = &prog;
    an_engine_fixes_begin(o.cat, &o.files, o.enabled, (const bool *const *)o.file_enabled, &opt.fix, opt.fix_for_file,
                          opt.fix_ctx, !o.whole_files);
    an_engine_run(o.cat, &o.files, &opt, &res);
    an_engine_fixes_end();
    cli_progress_stage(&prog, "computed the fixes of");
    cli_opts_apply_severity(&o, &res);
    bool input_error = o.input_error | cli_report_unreadable(&o, &res);
    /* what `fix` would write, file by file */
    for (size_t i = 0; i < res.len; i++) {
        an_file_result *f = &res.items[i];
        cli_progress_update(&prog, i + 1, res.len);
        if (!f->diags.len) continue;
        an_fix_options ffo = opt.fix;
        char buf[1024];
        cli_target_fix_for_file(&o.helper, f->file->path, &ffo, buf, sizeof buf);
        size_t idx = (size_t)(f->file - o.files.items);
        rw_file_fix ff;
        rw_fix_source(o.cat, f->file->lang, &f->src, o.file_enabled[idx], &ffo, unsafe, &ff);
        if (ff.error) {
            cli_progress_pause(&prog);
            fprintf(stderr, "xpuify: warning: %s: %s\n", f->file->path, ff.error);
        }
        if (ff.text) {
            ut_buf d;
            ut_buf_init(&d);
            rw_diff_unified(f->file->path, f->src.text, f->src.len, ff.text, ff.len, &d);
            out_html_diff x = {f->file->path, ut_buf_take(&d), ff.fixed};
            ut_vec_push(&diffs, x);
        }
        rw_file_fix_free(&ff);
    }
    cli_progress_end(&prog);
    /* kernel sources: C, C++ and CUDA files under the same paths */
    an_walk_options kw = o.walk;
    memset(kw.langs, 0, sizeof kw.langs);
    kw.langs[AN_LANG_C] = true;
    ut_buf kerr;
    ut_buf_init(&kerr);
    if (o.files.len || o.paths.len) an_walk(o.paths.items, o.paths.len, &kw, &kernels, &kerr);
    ut_buf_free(&kerr);
    const char **kpaths = ut_calloc(kernels.len + 1, sizeof(char *));
    size_t nk = 0;
    for (size_t i = 0; i < kernels.len; i++)
        if (kernels.items[i].lang == AN_LANG_C) kpaths[nk++] = kernels.items[i].path;
    char **fps = out_fingerprints(&res);
    out_report rep = {.cat = o.cat, .res = &res, .version = XPUIFY_VERSION, .fingerprints = fps, .skipped = &o.skipped,
                      .failed = input_error};
    out_html_input in = {&rep, title, reason.data, diffs.items, diffs.len, kpaths, nk, vdoc};
    char *page = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&page, &len);
    out_html(&in, mem);
    fclose(mem);
    char *why = NULL;
    int w = access(html, F_OK) == 0 ? rw_write_atomic(html, page, len, &why) : rw_create_atomic(html, page, len, &why);
    if (w != 0) {
        fprintf(stderr, "xpuify: error: %s: %s\n", html, why ? why : "cannot write");
        ut_free(why);
    } else {
        if (!o.quiet) fprintf(stderr, "xpuify: wrote the report %s (%zu finding%s in %zu file%s)\n", html, out_count(&res),
                              out_count(&res) == 1 ? "" : "s", res.len, res.len == 1 ? "" : "s");
        rc = input_error ? CLI_EXIT_USAGE : CLI_EXIT_OK;
    }
    free(page);
    ut_free(kpaths);
    out_fingerprints_free(fps, &res);
    ut_buf_free(&reason);
done:
    for (size_t i = 0; i < diffs.len; i++) ut_free((char *)diffs.items[i].diff);
    ut_vec_free(&diffs);
    an_file_list_free(&kernels);
    cJSON_Delete(vdoc);
    an_results_free(&res);
    cli_opts_free(&o);
    return rc;
}
