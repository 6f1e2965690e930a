/* out_html: the migration report: one self-contained HTML page (inline CSS and JS from out_html_assets, no network:
 * a Content-Security-Policy forbids every load) for whoever plans the migration: the key numbers; where the work is,
 * by directory (rolled up by out_dirs so the chart sums to the total) and by rule; how much is mechanical (fixed by
 * `xpuify fix`, or by `--unsafe-fixes` after review) and how much needs a human; an effort estimate with its method;
 * every finding, grouped by rule and filterable by rule, directory, severity, kind of fix and path, each linked to
 * its file and line and to its rule's documentation; what `fix` would change (diffs); the kernel sources and traps;
 * and, when given, the verify matrix. */
#include "output/out.h"
#include "output/out_dirs.h"
#include "output/out_fingerprint.h"
#include "output/out_html_assets.h"
#include <cjson/cJSON.h>
static void esc(FILE *fp, const char *s) {
    for (; s && *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", fp); break;
        case '<': fputs("&lt;", fp); break;
        case '>': fputs("&gt;", fp); break;
        case '"': fputs("&quot;", fp); break;
        default: fputc(*s, fp);
        }
    }
}

/* text with `code spans` (rule summaries and messages): the spans become <code> */
static void esc_code(FILE *fp, const char *s) {
    bool open = false;
    for (; s && *s; s++) {
        if (*s == '`' && (open || strchr(s + 1, '`'))) {
            fputs(open ? "</code>" : "<code>", fp);
            open = !open;
            continue;
        }
        char c[2] = {*s, 0};
        esc(fp, c);
    }
    if (open) fputs("</code>", fp);
}

static void esc_n(FILE *fp, const char *s, size_t n) {
    char *c = ut_strndup(s, n);
    esc(fp, c);
    ut_free(c);
}

/* The effort estimate's rates, in minutes per finding; the page states them. */
enum { MIN_SAFE = 1, MIN_UNSAFE = 5, MIN_HUMAN = 15, MIN_KERNEL = 240 };
#define DIR_ROWS 20 /* rows of the per-directory chart, "other" included */
#define DOCS_URL "https://github.com/xpuify/xpuify/blob/main/docs/rules.md#"

static const char *const kind_name[OUT_FIX_CLASSES] = {"safe", "unsafe", "human"};
static const char *const kind_label[OUT_FIX_CLASSES] = {"xpuify fix", "--unsafe-fixes", "by hand"};

static int fix_kind(const an_diag *d) {
    if (!d->fix || !d->fix->edits.len) return OUT_FIX_HUMAN;
    return d->fix->applicability == AN_FIX_SAFE ? OUT_FIX_SAFE : d->fix->applicability == AN_FIX_UNSAFE ? OUT_FIX_UNSAFE
                                                                                                       : OUT_FIX_HUMAN;
}

static bool is_kernel(const an_diag *d) { return !strcmp(d->rule->name, "cuda-kernel-definition"); }

static size_t minutes(const an_diag *d) {
    static const size_t rate[OUT_FIX_CLASSES] = {MIN_SAFE, MIN_UNSAFE, MIN_HUMAN};
    return is_kernel(d) ? MIN_KERNEL : rate[fix_kind(d)];
}

static void hours(FILE *fp, size_t min) {
    if (min < 60) fprintf(fp, "%zu min", min);
    else fprintf(fp, "%.1f h", (double)min / 60.0);
}

static void card(FILE *fp, const char *id, size_t n, const char *label) {
    fprintf(fp, "<div class=\"card\"><div class=\"n\" id=\"%s\">%zu</div><div class=\"l\">%s</div></div>\n", id, n, label);
}

/* file:// address of a reported path (percent-encoded; relative paths are under the project root) */
static void file_url(FILE *fp, const char *path) {
    ut_buf b;
    ut_buf_init(&b);
    if (path[0] != '/') ut_buf_printf(&b, "%s/", out_project_root());
    ut_buf_puts(&b, path);
    fputs("file://", fp);
    for (const unsigned char *p = (const unsigned char *)b.data; p && *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || strchr("/-._~", *p))
            fputc(*p, fp);
        else fprintf(fp, "%%%02X", *p);
    }
    ut_buf_free(&b);
}

typedef struct {
    size_t file, diag, rank;
} ref;

static int ref_cmp(const void *a, const void *b) {
    const ref *x = a, *y = b;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    if (x->file != y->file) return x->file < y->file ? -1 : 1;
    return x->diag < y->diag ? -1 : x->diag > y->diag;
}

/* the directory of a project-relative path ("" at the root), heap */
static char *dir_of(const char *path) {
    char *p = out_project_path(path), *slash = strrchr(p, '/');
    if (slash) *slash = 0;
    else *p = 0;
    return p;
}

static void counts_cells(FILE *fp, size_t count, const size_t n[OUT_FIX_CLASSES], size_t min) {
    fprintf(fp, "<td class=\"r\">%zu</td><td class=\"r\">%zu</td><td class=\"r\">%zu</td><td class=\"r\">%zu</td>"
                "<td class=\"r\">", count, n[OUT_FIX_SAFE], n[OUT_FIX_UNSAFE], n[OUT_FIX_HUMAN]);
    hours(fp, min);
    fputs("</td>", fp);
}

static const char *counts_head = "<th class=\"r\">findings</th><th class=\"r\">fixed by <code>xpuify fix</code></th>"
                                 "<th class=\"r\">with <code>--unsafe-fixes</code></th><th class=\"r\">by hand</th>"
                                 "<th class=\"r\">effort</th>";

static void verify_section(FILE *fp, const cJSON *v) {
    fputs("<section id=\"verify\"><h2>Verify matrix</h2>\n", fp);
    const cJSON *devs = cJSON_GetObjectItemCaseSensitive(v, "devices");
    const cJSON *checks = cJSON_GetObjectItemCaseSensitive(v, "checks");
    const cJSON *note = cJSON_GetObjectItemCaseSensitive(v, "note");
    if (cJSON_IsString(note)) { fputs("<p class=\"muted\">", fp); esc(fp, note->valuestring); fputs("</p>\n", fp); }
    fputs("<table id=\"verify-matrix\"><tr><th>check</th>", fp);
    const cJSON *d;
    cJSON_ArrayForEach(d, devs) { fputs("<th>", fp); esc(fp, d->valuestring); fputs("</th>", fp); }
    fputs("</tr>\n", fp);
    const cJSON *c;
    cJSON_ArrayForEach(c, checks) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(c, "name");
        const cJSON *res = cJSON_GetObjectItemCaseSensitive(c, "results");
        fputs("<tr><td><code>", fp);
        esc(fp, cJSON_IsString(name) ? name->valuestring : "?");
        fputs("</code></td>", fp);
        cJSON_ArrayForEach(d, devs) {
            const cJSON *r = cJSON_GetObjectItemCaseSensitive(res, d->valuestring);
            const char *st = "not-run", *detail = NULL;
            if (cJSON_IsString(r)) st = r->valuestring;
            else if (cJSON_IsObject(r)) {
                const cJSON *s = cJSON_GetObjectItemCaseSensitive(r, "status"), *dt = cJSON_GetObjectItemCaseSensitive(r, "detail");
                if (cJSON_IsString(s)) st = s->valuestring;
                if (cJSON_IsString(dt)) detail = dt->valuestring;
            }
            char cls[64];
            size_t k = 0;
            for (const char *p = st; *p && k + 1 < sizeof cls; p++)
                cls[k++] = (*p >= 'a' && *p <= 'z') || *p == '-' ? *p : '-';
            cls[k] = 0;
            fprintf(fp, "<td><span class=\"st st-%s\">", cls);
            esc(fp, st);
            fputs("</span>", fp);
            if (detail) { fputs(" <span class=\"muted\">", fp); esc(fp, detail); fputs("</span>", fp); }
            fputs("</td>", fp);
        }
        fputs("</tr>\n", fp);
    }
    fputs("</table></section>\n", fp);
}

void out_html(const out_html_input *in, FILE *fp) {
    const out_report *r = in->rep;
    const an_results *res = r->res;
    size_t nrules = an_catalog_count(r->cat), nr = nrules ? nrules : 1;
    size_t *by_rule = ut_calloc(nr, sizeof(size_t)), *rule_n = ut_calloc(nr * OUT_FIX_CLASSES, sizeof(size_t));
    size_t *rule_min = ut_calloc(nr, sizeof(size_t)), *rank = ut_calloc(nr, sizeof(size_t));
    UT_VEC(out_dir_leaf) leaves = {0};
    UT_VEC(size_t) dir_min = {0};
    char **file_dir = ut_calloc(res->len ? res->len : 1, sizeof(char *));
    size_t total = 0, kind[OUT_FIX_CLASSES] = {0}, total_min = 0, kernels = 0, kernel_min = 0;
    size_t knum[OUT_FIX_CLASSES] = {0}, kmin[OUT_FIX_CLASSES] = {0}; /* the findings that are not kernels */
    bool sev_seen[3] = {false, false, false};
    for (size_t i = 0; i < res->len; i++) {
        const an_file_result *f = &res->items[i];
        if (!f->diags.len) continue;
        file_dir[i] = dir_of(f->file->path);
        out_dir_leaf *leaf = NULL;
        for (size_t k = leaves.len; k-- > 0 && !leaf;) /* files come directory by directory: look back */
            if (!strcmp(leaves.items[k].dir, file_dir[i])) leaf = &leaves.items[k];
        if (!leaf) {
            out_dir_leaf n = {ut_strdup(file_dir[i]), {0}};
            ut_vec_push(&leaves, n);
            leaf = &leaves.items[leaves.len - 1];
        }
        for (size_t j = 0; j < f->diags.len; j++) {
            const an_diag *d = &f->diags.items[j];
            int k = fix_kind(d);
            size_t m = minutes(d);
            total++, kind[k]++, leaf->n[k]++, total_min += m;
            by_rule[d->rule->index]++, rule_n[d->rule->index * OUT_FIX_CLASSES + k]++, rule_min[d->rule->index] += m;
            if (is_kernel(d)) kernels++, kernel_min += m;
            else knum[k]++, kmin[k] += m;
            sev_seen[d->severity <= AN_SEV_INFO ? d->severity : AN_SEV_INFO] = true;
        }
    }
    out_dir_rows dirs;
    out_dirs_rollup(leaves.items, leaves.len, DIR_ROWS, &dirs);
    for (size_t k = 0; k < dirs.len; k++) { /* effort per row: from the findings it covers */
        size_t m = 0;
        for (size_t i = 0; i < res->len; i++)
            if (file_dir[i] && out_dir_row_covers(&dirs.items[k], file_dir[i]))
                for (size_t j = 0; j < res->items[i].diags.len; j++) m += minutes(&res->items[i].diags.items[j]);
        ut_vec_push(&dir_min, m);
    }
    /* rules by findings, most first */
    UT_VEC(size_t) order = {0};
    for (size_t i = 0; i < nrules; i++)
        if (by_rule[i]) ut_vec_push(&order, i);
    for (size_t a = 1; a < order.len; a++) /* insertion sort: few rules */
        for (size_t b = a; b > 0 && by_rule[order.items[b]] > by_rule[order.items[b - 1]]; b--) {
            size_t t = order.items[b];
            order.items[b] = order.items[b - 1];
            order.items[b - 1] = t;
        }
    for (size_t k = 0; k < order.len; k++) rank[order.items[k]] = k;
    /* the data the charts and filters are drawn from */
    cJSON *data = cJSON_CreateObject();
    cJSON *jr = cJSON_AddArrayToObject(data, "rules");
    for (size_t k = 0; k < order.len; k++) {
        const an_rule *ru = an_catalog_rule(r->cat, order.items[k]);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "code", ru->code);
        cJSON_AddStringToObject(o, "name", ru->name);
        cJSON_AddNumberToObject(o, "count", (double)by_rule[ru->index]);
        for (int c = 0; c < OUT_FIX_CLASSES; c++)
            cJSON_AddNumberToObject(o, kind_name[c], (double)rule_n[ru->index * OUT_FIX_CLASSES + c]);
        cJSON_AddNumberToObject(o, "minutes", (double)rule_min[ru->index]);
        cJSON_AddItemToArray(jr, o);
    }
    cJSON *jd = cJSON_AddArrayToObject(data, "dirs");
    for (size_t k = 0; k < dirs.len; k++) {
        const out_dir_row *row = &dirs.items[k];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "label", row->label);
        cJSON_AddNumberToObject(o, "count", (double)row->count);
        for (int c = 0; c < OUT_FIX_CLASSES; c++) cJSON_AddNumberToObject(o, kind_name[c], (double)row->n[c]);
        cJSON_AddNumberToObject(o, "minutes", (double)dir_min.items[k]);
        cJSON *m = cJSON_AddArrayToObject(o, "match");
        for (size_t x = 0; x < row->nmatch; x++) {
            cJSON *pair = cJSON_CreateArray();
            cJSON_AddItemToArray(pair, cJSON_CreateString(row->match[x].prefix));
            cJSON_AddItemToArray(pair, cJSON_CreateBool(row->match[x].exact));
            cJSON_AddItemToArray(m, pair);
        }
        if (row->other) cJSON_AddBoolToObject(o, "other", true);
        cJSON_AddItemToArray(jd, o);
    }
    cJSON_AddNumberToObject(data, "findings", (double)total);
    cJSON *rates = cJSON_AddObjectToObject(data, "minutesPerFinding");
    cJSON_AddNumberToObject(rates, "safe", MIN_SAFE);
    cJSON_AddNumberToObject(rates, "unsafe", MIN_UNSAFE);
    cJSON_AddNumberToObject(rates, "human", MIN_HUMAN);
    cJSON_AddNumberToObject(rates, "kernel", MIN_KERNEL);
    char *json = cJSON_PrintUnformatted(data);
    cJSON_Delete(data);

    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n", fp);
    fputs("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
          "script-src 'unsafe-inline'; img-src data:\">\n", fp);
    fputs("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>", fp);
    esc(fp, in->title);
    fprintf(fp, "</title>\n<style>%s</style>\n</head>\n<body>\n<header><h1>", out_html_css);
    esc(fp, in->title);
    fprintf(fp, "</h1><p>xpuify %s &middot; fix target: ", r->version);
    esc(fp, in->target ? in->target : "?");
    fputs("</p></header>\n<main>\n", fp);
    fprintf(fp, "<nav class=\"toc\" id=\"toc\"><b>Contents</b> &middot; <a href=\"#summary\">Summary</a>"
                "<a href=\"#by-dir\">By directory (%zu)</a><a href=\"#by-rule\">By rule (%zu)</a>"
                "<a href=\"#effort\">Effort</a><a href=\"#findings\">Findings (%zu)</a>"
                "<a href=\"#fixes\">What <code>fix</code> changes (%zu)</a><a href=\"#human\">Needs a human (%zu)</a>",
            dirs.len, order.len, total, in->ndiffs, kind[OUT_FIX_HUMAN] + kind[OUT_FIX_UNSAFE]);
    if (in->verify) fputs("<a href=\"#verify\">Verify matrix</a>", fp);
    fputs("</nav>\n", fp);

    fputs("<section id=\"summary\"><h2>Summary</h2><div class=\"cards\">\n", fp);
    card(fp, "n-files", res->len, "files checked");
    card(fp, "n-findings", total, "findings");
    card(fp, "n-fixable", kind[OUT_FIX_SAFE], "fixed by <code>xpuify fix</code>");
    card(fp, "n-unsafe", kind[OUT_FIX_UNSAFE], "fixed with <code>--unsafe-fixes</code>, after review");
    card(fp, "n-human", kind[OUT_FIX_HUMAN] + kind[OUT_FIX_UNSAFE], "need a human");
    card(fp, "n-changed", in->ndiffs, "files <code>fix</code> changes");
    card(fp, "n-kernels", in->nkernels, "CUDA kernel sources");
    fprintf(fp, "<div class=\"card\"><div class=\"n\" id=\"n-effort\">%.1f h</div><div class=\"l\">"
                "<a href=\"#effort\">estimated effort</a></div></div>\n", (double)total_min / 60.0);
    fputs("</div>\n", fp);
    if (total) {
        fputs("<div class=\"split\" id=\"split\" role=\"img\" aria-label=\"mechanical and human work\">", fp);
        for (int c = 0; c < OUT_FIX_CLASSES; c++)
            if (kind[c])
                fprintf(fp, "<div class=\"sw %s\" style=\"width:%.3f%%\" title=\"%zu: %s\"></div>", kind_name[c],
                        100.0 * (double)kind[c] / (double)total, kind[c], kind_label[c]);
        fputs("</div>\n", fp);
    }
    fprintf(fp, "<div class=\"legend muted\"><span><i class=\"sw safe\"></i><b>%.0f%%</b> mechanical now: "
                "<code>xpuify fix</code> (safe fixes)</span><span><i class=\"sw unsafe\"></i><b>%.0f%%</b> mechanical "
                "after review: <code>xpuify fix --unsafe-fixes</code></span><span><i class=\"sw human\"></i><b>%.0f%%"
                "</b> by hand (no automatic fix)</span></div>\n</section>\n",
            total ? 100.0 * (double)kind[0] / (double)total : 0.0, total ? 100.0 * (double)kind[1] / (double)total : 0.0,
            total ? 100.0 * (double)kind[2] / (double)total : 0.0);

    /* where the work is: by directory */
    fprintf(fp, "<section id=\"by-dir\"><h2>Where the work is: by directory</h2><p class=\"muted\">Directories rolled "
                "up to at most %d rows, split where the findings are; the rows sum to all %zu findings. Click a bar "
                "or a row to list its findings.</p><div id=\"chart-dirs\"></div>\n<table id=\"dir-table\"><tr>"
                "<th>directory</th>%s</tr>\n", DIR_ROWS, total, counts_head);
    for (size_t k = 0; k < dirs.len; k++) {
        fprintf(fp, "<tr class=\"pick\"><td><a href=\"#findings\" data-pick=\"dir=%zu\"><code>", k);
        esc(fp, dirs.items[k].label);
        fputs("</code></a></td>", fp);
        counts_cells(fp, dirs.items[k].count, dirs.items[k].n, dir_min.items[k]);
        fputs("</tr>\n", fp);
    }
    fputs("</table></section>\n", fp);

    /* by rule */
    fputs("<section id=\"by-rule\"><h2>Where the work is: by rule</h2><div class=\"legend muted\"><span><i class=\"sw "
          "safe\"></i>fixed by <code>xpuify fix</code></span><span><i class=\"sw unsafe\"></i>with "
          "<code>--unsafe-fixes</code></span><span><i class=\"sw human\"></i>by hand</span></div>"
          "<div id=\"chart-rules\"></div>\n<table id=\"rule-table\"><tr><th>rule</th><th>severity</th>", fp);
    fprintf(fp, "%s<th>summary (<code>xpuify rule CODE</code> explains it)</th></tr>\n", counts_head);
    for (size_t k = 0; k < order.len; k++) {
        const an_rule *ru = an_catalog_rule(r->cat, order.items[k]);
        fprintf(fp, "<tr id=\"rule-%s\"><td><a href=\"#findings\" data-pick=\"rule=%s\"><code>%s</code></a> %s "
                    "<a class=\"muted\" href=\"" DOCS_URL "%s\" title=\"the rule's documentation (docs/rules.md)\">docs"
                    "</a></td><td class=\"sev-%s\">%s</td>",
                ru->code, ru->code, ru->code, ru->name, ru->code, an_severity_name(ru->severity),
                an_severity_name(ru->severity));
        counts_cells(fp, by_rule[ru->index], &rule_n[ru->index * OUT_FIX_CLASSES], rule_min[ru->index]);
        fputs("<td>", fp);
        esc_code(fp, ru->summary);
        fputs("</td></tr>\n", fp);
    }
    fputs("</table></section>\n", fp);

    /* the estimate and how it is made */
    fputs("<section id=\"effort\"><h2>Effort estimate</h2>\n<p><b id=\"effort-total\">", fp);
    hours(fp, total_min);
    fprintf(fp, "</b> of engineering time (%.1f person-days of 8 hours), before running the tests on each device.</p>\n"
                "<p class=\"muted\">Method: every finding is counted at a fixed rate for its kind of work, and the rates "
                "are summed. The rates are planning assumptions, not measurements: the counts are in the tables, so "
                "other rates are a multiplication away.</p>\n<table id=\"effort-table\"><tr><th>kind of work</th>"
                "<th class=\"r\">findings</th><th class=\"r\">minutes each</th><th class=\"r\">total</th><th>why</th>"
                "</tr>\n", (double)total_min / 480.0);
    static const char *const why[OUT_FIX_CLASSES] = {
        "review the diff <code>xpuify fix</code> writes",
        "review a rewrite that can change behaviour, then apply it with <code>xpuify fix --unsafe-fixes</code>",
        "read the code, rewrite it by hand, test it"};
    for (int c = 0; c < OUT_FIX_CLASSES; c++) {
        static const size_t rate[OUT_FIX_CLASSES] = {MIN_SAFE, MIN_UNSAFE, MIN_HUMAN};
        size_t n = knum[c];
        fprintf(fp, "<tr><td><span class=\"k k-%s\">%s</span></td><td class=\"r\">%zu</td><td class=\"r\">%zu</td>"
                    "<td class=\"r\">", kind_name[c], kind_label[c], n, rate[c]);
        hours(fp, kmin[c]);
        fprintf(fp, "</td><td>%s</td></tr>\n", why[c]);
    }
    fprintf(fp, "<tr><td><span class=\"k k-human\">CUDA kernel</span></td><td class=\"r\">%zu</td><td class=\"r\">%d</td>"
                "<td class=\"r\">", kernels, MIN_KERNEL);
    hours(fp, kernel_min);
    fputs("</td><td>port a <code>__global__</code> kernel by hand and validate it (xpuify fix translates the kernels whose "
          "constructs all have an OpenCL C form; docs/c-kernels.md)</td></tr>\n</table></section>\n", fp);

    /* every finding, grouped by rule, filterable */
    fprintf(fp, "<section id=\"findings\"><h2>Findings</h2>\n<div class=\"filters\" id=\"filters\">"
                "<select id=\"f-rule\" aria-label=\"rule\"><option value=\"\">every rule</option></select>"
                "<select id=\"f-dir\" aria-label=\"directory\"><option value=\"\">every directory</option></select>"
                "<select id=\"f-sev\" aria-label=\"severity\"><option value=\"\">every severity</option>");
    for (int sv = AN_SEV_ERROR; sv <= AN_SEV_INFO; sv++)
        if (sev_seen[sv]) fprintf(fp, "<option value=\"%s\">%s</option>", an_severity_name(sv), an_severity_name(sv));
    fputs("</select><select id=\"f-fix\" aria-label=\"kind of fix\"><option value=\"\">any fix</option>"
          "<option value=\"safe\">fixed by xpuify fix</option><option value=\"unsafe\">with --unsafe-fixes</option>"
          "<option value=\"human\">by hand</option></select>"
          "<input id=\"f-q\" type=\"search\" placeholder=\"path contains\" aria-label=\"path\">"
          "<button id=\"f-clear\" type=\"button\">clear</button>", fp);
    fprintf(fp, "<span class=\"muted\"><b id=\"n-shown\">%zu</b> of %zu shown</span></div>\n", total, total);
    if (!total) fputs("<p class=\"muted\">No findings.</p>\n", fp);
    UT_VEC(ref) refs = {0};
    for (size_t i = 0; i < res->len; i++)
        for (size_t j = 0; j < res->items[i].diags.len; j++) {
            ref x = {i, j, rank[res->items[i].diags.items[j].rule->index]};
            ut_vec_push(&refs, x);
        }
    if (refs.len > 1) qsort(refs.items, refs.len, sizeof(ref), ref_cmp);
    for (size_t a = 0; a < refs.len;) {
        const an_rule *ru = res->items[refs.items[a].file].diags.items[refs.items[a].diag].rule;
        size_t b = a;
        while (b < refs.len && res->items[refs.items[b].file].diags.items[refs.items[b].diag].rule == ru) b++;
        fprintf(fp, "<details class=\"grp\" data-rule=\"%s\"><summary><code>%s</code> %s &middot; <span class=\"gn\">"
                    "%zu</span> finding%s &middot; <a href=\"#rule-%s\">summary</a> &middot; <a href=\"" DOCS_URL
                    "%s\">docs</a></summary>\n<table><tr><th>where</th><th>severity</th><th>fix</th><th>message</th>"
                    "</tr>\n", ru->code, ru->code, ru->name, b - a, b - a == 1 ? "" : "s", ru->code, ru->code);
        for (size_t x = a; x < b; x++) {
            const an_file_result *f = &res->items[refs.items[x].file];
            const an_diag *d = &f->diags.items[refs.items[x].diag];
            int k = fix_kind(d);
            char *pp = out_project_path(f->file->path);
            fprintf(fp, "<tr class=\"f\" data-rule=\"%s\" data-sev=\"%s\" data-fix=\"%s\" data-dir=\"", ru->code,
                    an_severity_name(d->severity), kind_name[k]);
            esc(fp, file_dir[refs.items[x].file]);
            fputs("\" data-path=\"", fp);
            esc(fp, pp);
            fputs("\"><td><a href=\"", fp);
            file_url(fp, f->file->path);
            fputs("\"><code>", fp);
            esc(fp, pp);
            fprintf(fp, ":%u:%u</code></a></td><td class=\"sev-%s\">%s</td><td><span class=\"k k-%s\">%s</span></td><td>",
                    d->line, d->col, an_severity_name(d->severity), an_severity_name(d->severity), kind_name[k],
                    kind_label[k]);
            esc_code(fp, d->message);
            if (d->entry && d->entry->note && !strstr(d->message, d->entry->note)) {
                fputs(" <i>", fp);
                esc(fp, d->entry->note);
                fputs("</i>", fp);
            }
            fputs("</td></tr>\n", fp);
            ut_free(pp);
        }
        fputs("</table></details>\n", fp);
        a = b;
    }
    ut_vec_free(&refs);
    fputs("</section>\n", fp);

    fprintf(fp, "<section id=\"fixes\"><h2>What <code>xpuify fix</code> would change</h2>\n");
    if (!in->ndiffs) fputs("<p class=\"muted\">Nothing: no finding has a safe fix.</p>\n", fp);
    else fprintf(fp, "<p class=\"muted\">%zu file%s; the first ones open.</p>\n", in->ndiffs, in->ndiffs == 1 ? "" : "s");
    bool fold = in->ndiffs > 20; /* many files: one more level, so that the page stays short */
    if (fold) fprintf(fp, "<details id=\"all-diffs\"><summary>the %zu diffs</summary>\n", in->ndiffs);
    for (size_t i = 0; i < in->ndiffs; i++) {
        const out_html_diff *df = &in->diffs[i];
        fputs("<details", fp);
        if (i < 3) fputs(" open", fp);
        fputs("><summary><code>", fp);
        esc(fp, df->path);
        fprintf(fp, "</code> &middot; %zu fix%s</summary><pre>", df->fixes, df->fixes == 1 ? "" : "es");
        for (const char *line = df->diff, *nl; line && *line; line = nl + 1) {
            nl = strchr(line, '\n');
            size_t n = nl ? (size_t)(nl - line) : strlen(line);
            const char *cls = !strncmp(line, "@@", 2) ? "hunk" : !strncmp(line, "+++", 3) || !strncmp(line, "---", 3) ? "muted"
                              : line[0] == '+' ? "add" : line[0] == '-' ? "del" : NULL;
            if (cls) fprintf(fp, "<span class=\"%s\">", cls);
            esc_n(fp, line, n);
            fputs(cls ? "</span>\n" : "\n", fp);
            if (!nl) break;
        }
        fputs("</pre></details>\n", fp);
    }
    if (fold) fputs("</details>\n", fp);
    fputs("</section>\n", fp);

    /* what needs a human, by rule, and the traps the tables note */
    fprintf(fp, "<section id=\"human\"><h2>Needs a human</h2>\n<p class=\"muted\">%zu finding%s that <code>xpuify fix"
                "</code> leaves alone: %zu with no automatic fix (<a href=\"#findings\" data-pick=\"fix=human\">list "
                "them</a>), %zu with only an unsafe fix to review with <code>--unsafe-fixes</code> (<a href=\"#findings"
                "\" data-pick=\"fix=unsafe\">list them</a>).</p>\n<table id=\"human-table\"><tr><th>rule</th>"
                "<th class=\"r\">by hand</th><th class=\"r\">unsafe fix</th><th>traps the rule notes</th></tr>\n",
            kind[1] + kind[2], kind[1] + kind[2] == 1 ? "" : "s", kind[OUT_FIX_HUMAN], kind[OUT_FIX_UNSAFE]);
    for (size_t k = 0; k < order.len; k++) {
        const an_rule *ru = an_catalog_rule(r->cat, order.items[k]);
        size_t h = rule_n[ru->index * OUT_FIX_CLASSES + OUT_FIX_HUMAN], u = rule_n[ru->index * OUT_FIX_CLASSES + OUT_FIX_UNSAFE];
        UT_VEC(const char *) notes = {0};
        for (size_t i = 0; i < res->len; i++)
            for (size_t j = 0; j < res->items[i].diags.len; j++) {
                const an_diag *d = &res->items[i].diags.items[j];
                if (d->rule != ru || !d->entry || !d->entry->note) continue;
                bool dup = false;
                for (size_t q = 0; q < notes.len && !dup; q++) dup = notes.items[q] == d->entry->note;
                if (!dup && notes.len < 8) ut_vec_push(&notes, d->entry->note);
            }
        if (!h && !u && !notes.len) { ut_vec_free(&notes); continue; }
        fprintf(fp, "<tr><td><a href=\"#findings\" data-pick=\"rule=%s\"><code>%s</code></a> %s</td><td class=\"r\">%zu"
                    "</td><td class=\"r\">%zu</td><td>", ru->code, ru->code, ru->name, h, u);
        for (size_t q = 0; q < notes.len; q++) {
            fputs(q ? "<br><b>trap</b>: " : "<b>trap</b>: ", fp);
            esc(fp, notes.items[q]);
        }
        fputs("</td></tr>\n", fp);
        ut_vec_free(&notes);
    }
    fputs("</table>\n", fp);
    if (in->nkernels) {
        fprintf(fp, "<details%s><summary><b>CUDA kernel sources (%zu)</b></summary><p class=\"muted\">C, C++ and CUDA "
                    "files: kernels need porting by hand (SYCL, Triton) or a C front end.</p><ul id=\"kernels\">\n",
                in->nkernels <= 20 ? " open" : "", in->nkernels);
        for (size_t i = 0; i < in->nkernels; i++) {
            fputs("<li><a href=\"", fp);
            file_url(fp, in->kernels[i]);
            fputs("\"><code>", fp);
            esc(fp, in->kernels[i]);
            fputs("</code></a></li>\n", fp);
        }
        fputs("</ul></details>\n", fp);
    }
    fputs("</section>\n", fp);
    if (in->verify) verify_section(fp, in->verify);
    fputs("</main>\n<script type=\"application/json\" id=\"xpuify-data\">", fp);
    /* "</" would end the script element */
    for (const char *p = json; *p; p++) {
        if (p[0] == '<' && p[1] == '/') fputs("<\\/", fp), p++;
        else fputc(*p, fp);
    }
    fprintf(fp, "</script>\n<script>\n%s</script>\n</body></html>\n", out_html_js);
    cJSON_free(json);
    for (size_t i = 0; i < res->len; i++) ut_free(file_dir[i]);
    ut_free(file_dir);
    for (size_t k = 0; k < leaves.len; k++) ut_free(leaves.items[k].dir);
    ut_vec_free(&leaves);
    ut_vec_free(&dir_min);
    out_dir_rows_free(&dirs);
    ut_vec_free(&order);
    ut_free(by_rule);
    ut_free(rule_n);
    ut_free(rule_min);
    ut_free(rank);
}

bool out_verify_valid(const cJSON *v, char **why) {
    ut_buf b;
    ut_buf_init(&b);
    const cJSON *devs = cJSON_GetObjectItemCaseSensitive(v, "devices");
    const cJSON *checks = cJSON_GetObjectItemCaseSensitive(v, "checks");
    if (!cJSON_IsObject(v)) ut_buf_puts(&b, "the document must be a JSON object");
    else if (!cJSON_IsArray(devs) || !cJSON_GetArraySize(devs)) ut_buf_puts(&b, "`devices` must be a non-empty list of device names");
    else if (!cJSON_IsArray(checks)) ut_buf_puts(&b, "`checks` must be a list");
    else {
        int i = 0;
        const cJSON *d;
        cJSON_ArrayForEach(d, devs) {
            if (!cJSON_IsString(d)) { ut_buf_printf(&b, "devices[%d] must be a string", i); break; }
            i++;
        }
        i = 0;
        const cJSON *c;
        cJSON_ArrayForEach(c, checks) {
            if (b.len) break;
            const cJSON *name = cJSON_GetObjectItemCaseSensitive(c, "name"), *res = cJSON_GetObjectItemCaseSensitive(c, "results");
            if (!cJSON_IsString(name)) ut_buf_printf(&b, "checks[%d].name must be a string", i);
            else if (!cJSON_IsObject(res)) ut_buf_printf(&b, "checks[%d].results must map device names to results", i);
            else {
                const cJSON *r;
                cJSON_ArrayForEach(r, res) {
                    const cJSON *st = cJSON_IsObject(r) ? cJSON_GetObjectItemCaseSensitive(r, "status") : r;
                    if (!cJSON_IsString(st)) {
                        ut_buf_printf(&b, "checks[%d].results.%s must be a status string or {\"status\": ..., \"detail\": ...}",
                                      i, r->string ? r->string : "?");
                        break;
                    }
                }
            }
            i++;
        }
    }
    if (!b.len) { ut_buf_free(&b); return true; }
    *why = ut_buf_take(&b);
    return false;
}
