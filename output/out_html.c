/* out_html: the migration report: one self-contained HTML page (inline CSS and JS, no network: a
 * Content-Security-Policy forbids every load) with the key numbers, findings per rule and per directory as bar
 * charts (SVG drawn by the inline script from the JSON embedded in the page), what `fix` would change (diffs), what
 * needs a human (findings without a safe fix, traps noted by the rules, CUDA kernel sources) and, when given, the
 * verify matrix. */
#include "output/out.h"
#include "output/out_fingerprint.h"
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

static void esc_n(FILE *fp, const char *s, size_t n) {
    char *c = ut_strndup(s, n);
    esc(fp, c);
    ut_free(c);
}

static const char *css =
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;color:#1d2430;background:#f6f7f9}"
    "header{background:#1d2430;color:#fff;padding:18px 28px}header h1{margin:0;font-size:22px}"
    "header p{margin:4px 0 0;color:#c5cbd6}main{padding:8px 28px 40px;max-width:1200px}"
    "section{background:#fff;border:1px solid #e1e4ea;border-radius:8px;padding:14px 18px;margin:16px 0}"
    "h2{font-size:17px;margin:0 0 10px}.cards{display:flex;flex-wrap:wrap;gap:12px}"
    ".card{background:#fff;border:1px solid #e1e4ea;border-radius:8px;padding:10px 16px;min-width:140px}"
    ".card .n{font-size:26px;font-weight:600}.card .l{color:#5b6474;font-size:12px;text-transform:uppercase}"
    "table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #eef0f3;"
    "vertical-align:top}th{color:#5b6474;font-weight:600}code{font-family:ui-monospace,Menlo,Consolas,monospace;"
    "font-size:12.5px}pre{margin:0;overflow-x:auto;font:12px/1.4 ui-monospace,Menlo,Consolas,monospace}"
    ".add{background:#e6f6ea}.del{background:#fdecec}.hunk{color:#6b54c6}"
    "details{margin:6px 0}summary{cursor:pointer}.bar{fill:#3b6fd8}.bar.fix{fill:#2f9e55}svg text{font-size:12px;"
    "fill:#1d2430}.muted{color:#5b6474}.st{font-weight:600;border-radius:4px;padding:1px 6px}"
    ".st-pass{background:#e6f6ea;color:#1e7b3c}.st-fail,.st-error{background:#fdecec;color:#b42318}"
    ".st-skip,.st-not-run{background:#eef0f3;color:#5b6474}.legend span{margin-right:14px}"
    ".sw{display:inline-block;width:10px;height:10px;margin-right:4px}";

static const char *js =
    "(function(){\n"
    "var body=document.body;\n"
    "window.addEventListener('error',function(e){body.setAttribute('data-error',String(e.message));});\n"
    "document.addEventListener('securitypolicyviolation',function(e){body.setAttribute('data-blocked',e.blockedURI);});\n"
    "try{\n"
    "var data=JSON.parse(document.getElementById('xpuify-data').textContent);\n"
    "var NS='http://www.w3.org/2000/svg';\n"
    "function el(n,a,t){var e=document.createElementNS(NS,n);for(var k in a)e.setAttribute(k,a[k]);if(t!==undefined)e.textContent=t;return e;}\n"
    "function bars(id,rows){var box=document.getElementById(id);\n"
    " if(!rows.length){var p=document.createElement('p');p.className='muted';p.textContent='No findings.';box.appendChild(p);return;}\n"
    " var max=1;rows.forEach(function(r){if(r.value>max)max=r.value;});\n"
    " var rowH=22,labelW=300,w=820,h=rows.length*rowH+8,room=w-labelW-70;\n"
    " var svg=el('svg',{width:w,height:h,viewBox:'0 0 '+w+' '+h,role:'img','aria-label':id});\n"
    " rows.forEach(function(r,i){var y=i*rowH+4;\n"
    "  svg.appendChild(el('text',{x:labelW-8,y:y+13,'text-anchor':'end'},r.label));\n"
    "  var fw=room*r.fixable/max,bw=Math.max(2,room*r.value/max);\n"
    "  var b=el('rect',{x:labelW,y:y,width:bw,height:rowH-7,'class':'bar','data-value':r.value});\n"
    "  b.appendChild(el('title',{},r.label+': '+r.value+' finding(s), '+r.fixable+' with a safe fix'));svg.appendChild(b);\n"
    "  if(r.fixable>0)svg.appendChild(el('rect',{x:labelW,y:y,width:Math.max(1,fw),height:rowH-7,'class':'bar fix'}));\n"
    "  svg.appendChild(el('text',{x:labelW+bw+6,y:y+13},String(r.value)));});\n"
    " box.appendChild(svg);}\n"
    "bars('chart-rules',data.rules.map(function(r){return {label:r.code+' '+r.name,value:r.count,fixable:r.fixable};}));\n"
    "bars('chart-dirs',data.dirs.map(function(d){return {label:d.dir,value:d.count,fixable:d.fixable};}));\n"
    "body.setAttribute('data-rendered','ok');\n"
    "}catch(e){body.setAttribute('data-error',String(e));}\n"
    "})();\n";

typedef struct {
    char *dir;
    size_t count, fixable;
} dir_row;

static bool safe_fix(const an_diag *d) { return d->fix && d->fix->applicability == AN_FIX_SAFE && d->fix->edits.len; }

static void card(FILE *fp, const char *id, size_t n, const char *label) {
    fprintf(fp, "<div class=\"card\"><div class=\"n\" id=\"%s\">%zu</div><div class=\"l\">%s</div></div>\n", id, n, label);
}

static int dir_cmp(const void *a, const void *b) {
    const dir_row *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return strcmp(x->dir, y->dir);
}

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
    size_t nrules = an_catalog_count(r->cat);
    size_t *by_rule = ut_calloc(nrules ? nrules : 1, sizeof(size_t)), *fix_rule = ut_calloc(nrules ? nrules : 1, sizeof(size_t));
    UT_VEC(dir_row) dirs = {0};
    size_t total = 0, fixable = 0, human = 0;
    for (size_t i = 0; i < res->len; i++) {
        const an_file_result *f = &res->items[i];
        if (!f->diags.len) continue;
        char *p = out_project_path(f->file->path);
        char *slash = strrchr(p, '/');
        const char *dir = slash ? (*slash = 0, p) : ".";
        dir_row *row = NULL;
        for (size_t k = 0; k < dirs.len && !row; k++)
            if (!strcmp(dirs.items[k].dir, dir)) row = &dirs.items[k];
        if (!row) {
            dir_row n = {ut_strdup(dir), 0, 0};
            ut_vec_push(&dirs, n);
            row = &dirs.items[dirs.len - 1];
        }
        ut_free(p);
        for (size_t j = 0; j < f->diags.len; j++) {
            const an_diag *d = &f->diags.items[j];
            total++, by_rule[d->rule->index]++, row->count++;
            if (safe_fix(d)) fixable++, fix_rule[d->rule->index]++, row->fixable++;
            else human++;
        }
    }
    if (dirs.len > 1) qsort(dirs.items, dirs.len, sizeof(dir_row), dir_cmp);
    /* the data the charts are drawn from */
    cJSON *data = cJSON_CreateObject();
    cJSON *jr = cJSON_AddArrayToObject(data, "rules");
    UT_VEC(size_t) order = {0};
    for (size_t i = 0; i < nrules; i++)
        if (by_rule[i]) ut_vec_push(&order, i);
    for (size_t a = 1; a < order.len; a++) /* most findings first (insertion sort: few rules) */
        for (size_t b = a; b > 0 && by_rule[order.items[b]] > by_rule[order.items[b - 1]]; b--) {
            size_t t = order.items[b];
            order.items[b] = order.items[b - 1];
            order.items[b - 1] = t;
        }
    for (size_t k = 0; k < order.len; k++) {
        const an_rule *ru = an_catalog_rule(r->cat, order.items[k]);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "code", ru->code);
        cJSON_AddStringToObject(o, "name", ru->name);
        cJSON_AddNumberToObject(o, "count", (double)by_rule[ru->index]);
        cJSON_AddNumberToObject(o, "fixable", (double)fix_rule[ru->index]);
        cJSON_AddItemToArray(jr, o);
    }
    cJSON *jd = cJSON_AddArrayToObject(data, "dirs");
    for (size_t k = 0; k < dirs.len && k < 25; k++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "dir", dirs.items[k].dir);
        cJSON_AddNumberToObject(o, "count", (double)dirs.items[k].count);
        cJSON_AddNumberToObject(o, "fixable", (double)dirs.items[k].fixable);
        cJSON_AddItemToArray(jd, o);
    }
    cJSON_AddNumberToObject(data, "findings", (double)total);
    char *json = cJSON_PrintUnformatted(data);
    cJSON_Delete(data);

    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n", fp);
    fputs("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
          "script-src 'unsafe-inline'; img-src data:\">\n", fp);
    fputs("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>", fp);
    esc(fp, in->title);
    fprintf(fp, "</title>\n<style>%s</style>\n</head>\n<body>\n<header><h1>", css);
    esc(fp, in->title);
    fprintf(fp, "</h1><p>xpuify %s &middot; fix target: ", r->version);
    esc(fp, in->target ? in->target : "?");
    fputs("</p></header>\n<main>\n<section id=\"summary\"><h2>Summary</h2><div class=\"cards\">\n", fp);
    card(fp, "n-files", res->len, "files checked");
    card(fp, "n-findings", total, "findings");
    card(fp, "n-fixable", fixable, "fixed by <code>xpuify fix</code>");
    card(fp, "n-human", human, "need a human");
    card(fp, "n-changed", in->ndiffs, "files <code>fix</code> changes");
    card(fp, "n-kernels", in->nkernels, "CUDA kernel sources");
    fputs("</div></section>\n", fp);

    fputs("<section id=\"by-rule\"><h2>Findings per rule</h2><div class=\"legend muted\"><span><i class=\"sw\" "
          "style=\"background:#2f9e55\"></i>fixed by <code>xpuify fix</code></span><span><i class=\"sw\" "
          "style=\"background:#3b6fd8\"></i>other</span></div><div id=\"chart-rules\"></div>\n<table id=\"rule-table\">"
          "<tr><th>rule</th><th>findings</th><th>safe fixes</th><th>summary</th></tr>\n", fp);
    for (size_t k = 0; k < order.len; k++) {
        const an_rule *ru = an_catalog_rule(r->cat, order.items[k]);
        fprintf(fp, "<tr><td><code>%s</code> %s</td><td>%zu</td><td>%zu</td><td>", ru->code, ru->name,
                by_rule[ru->index], fix_rule[ru->index]);
        esc(fp, ru->summary);
        fputs("</td></tr>\n", fp);
    }
    fputs("</table></section>\n", fp);
    fputs("<section id=\"by-dir\"><h2>Findings per directory</h2><div id=\"chart-dirs\"></div></section>\n", fp);

    fputs("<section id=\"fixes\"><h2>What <code>xpuify fix</code> would change</h2>\n", fp);
    if (!in->ndiffs) fputs("<p class=\"muted\">Nothing: no finding has a safe fix.</p>\n", fp);
    for (size_t i = 0; i < in->ndiffs; i++) {
        const out_html_diff *df = &in->diffs[i];
        fputs("<details", fp);
        if (i < 5) fputs(" open", fp);
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
    fputs("</section>\n", fp);

    fputs("<section id=\"human\"><h2>Needs a human</h2>\n<p class=\"muted\">Findings that <code>xpuify fix</code> "
          "leaves alone (no fix, or only an unsafe one to review with <code>--unsafe-fixes</code>), and traps the "
          "rules point out.</p>\n<table id=\"human-table\"><tr><th>where</th><th>rule</th><th>why</th><th>message</th></tr>\n", fp);
    for (size_t i = 0; i < res->len; i++) {
        const an_file_result *f = &res->items[i];
        for (size_t j = 0; j < f->diags.len; j++) {
            const an_diag *d = &f->diags.items[j];
            bool trap = d->entry && d->entry->note;
            if (safe_fix(d) && !trap) continue;
            const char *why = !d->fix ? "no automatic fix" : d->fix->applicability == AN_FIX_UNSAFE ? "unsafe fix: review it"
                                                                                                   : "fixed; see the note";
            fputs("<tr><td><code>", fp);
            esc(fp, f->file->path);
            fprintf(fp, ":%u:%u</code></td><td><code>%s</code></td><td>%s%s</td><td>", d->line, d->col, d->rule->code, why,
                    trap ? " &middot; <b>trap</b>" : "");
            esc(fp, d->message);
            if (trap && !strstr(d->message, d->entry->note)) {
                fputs(" <i>", fp);
                esc(fp, d->entry->note);
                fputs("</i>", fp);
            }
            fputs("</td></tr>\n", fp);
        }
    }
    fputs("</table>\n", fp);
    if (in->nkernels) {
        fprintf(fp, "<h3>CUDA kernel sources (%zu)</h3><p class=\"muted\">C, C++ and CUDA files: kernels need porting "
                    "by hand (SYCL, Triton) or a C front end.</p><ul id=\"kernels\">\n", in->nkernels);
        for (size_t i = 0; i < in->nkernels; i++) {
            fputs("<li><code>", fp);
            esc(fp, in->kernels[i]);
            fputs("</code></li>\n", fp);
        }
        fputs("</ul>\n", fp);
    }
    fputs("</section>\n", fp);
    if (in->verify) verify_section(fp, in->verify);
    fputs("</main>\n<script type=\"application/json\" id=\"xpuify-data\">", fp);
    /* "</" would end the script element */
    for (const char *p = json; *p; p++) {
        if (p[0] == '<' && p[1] == '/') fputs("<\\/", fp), p++;
        else fputc(*p, fp);
    }
    fprintf(fp, "</script>\n<script>\n%s</script>\n</body></html>\n", js);
    cJSON_free(json);
    for (size_t k = 0; k < dirs.len; k++) ut_free(dirs.items[k].dir);
    ut_vec_free(&dirs);
    ut_vec_free(&order);
    ut_free(by_rule);
    ut_free(fix_rule);
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
