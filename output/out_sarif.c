/* out_sarif: SARIF 2.1.0: one run, the tool's rules (id, name, descriptions, help), results with regions in
 * Unicode code points, fixes as artifactChanges (marked safe or unsafe in their properties; a compat fix also
 * creates the helper module it imports), relative paths under the declared base %SRCROOT%. */
#include "output/out.h"
#include "output/out_fingerprint.h"
#include <cjson/cJSON.h>

static const char *level(an_severity s) {
    return s == AN_SEV_ERROR ? "error" : s == AN_SEV_WARNING ? "warning" : "note";
}

static char *uri(const char *path) {
    ut_buf b;
    ut_buf_init(&b);
    if (!strncmp(path, "./", 2)) path += 2;
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || strchr("-._~/", *p))
            ut_buf_putc(&b, (char)*p);
        else ut_buf_printf(&b, "%%%02X", *p);
    }
    return ut_buf_take(&b);
}

/* An artifact location: a relative path under %SRCROOT%, an absolute one as a file: URI. */
static void add_location(cJSON *art, const char *path) {
    char *u = uri(path);
    if (path[0] == '/') {
        ut_buf b;
        ut_buf_init(&b);
        ut_buf_printf(&b, "file://%s", u);
        cJSON_AddStringToObject(art, "uri", b.data);
        ut_buf_free(&b);
    } else {
        cJSON_AddStringToObject(art, "uri", u);
        cJSON_AddStringToObject(art, "uriBaseId", "%SRCROOT%");
    }
    ut_free(u);
}

static cJSON *region(uint32_t l, uint32_t c, uint32_t el, uint32_t ec) {
    cJSON *reg = cJSON_CreateObject();
    out_json_add_uint(reg, "startLine", l);
    out_json_add_uint(reg, "startColumn", c);
    out_json_add_uint(reg, "endLine", el);
    out_json_add_uint(reg, "endColumn", ec);
    return reg;
}

/* The change that creates the compat helper module: its whole text inserted at the start of an empty artifact,
 * so that applying a fix alone gives code whose `import xpuify_device` resolves. Every fix of the run that needs
 * the helper carries the same change (as they carry the same import insertion): a consumer applies it once. */
static cJSON *helper_change(const char *path, const char *text) {
    cJSON *ch = cJSON_CreateObject();
    cJSON *art = cJSON_CreateObject();
    add_location(art, path);
    cJSON_AddItemToObject(ch, "artifactLocation", art);
    cJSON *reps = cJSON_AddArrayToObject(ch, "replacements");
    cJSON *rep = cJSON_CreateObject();
    cJSON *del = cJSON_CreateObject();
    out_json_add_uint(del, "charOffset", 0);
    out_json_add_uint(del, "charLength", 0);
    cJSON_AddItemToObject(rep, "deletedRegion", del);
    cJSON *ins = cJSON_CreateObject();
    cJSON_AddStringToObject(ins, "text", text);
    cJSON_AddItemToObject(rep, "insertedContent", ins);
    cJSON_AddItemToArray(reps, rep);
    return ch;
}

void out_sarif(const out_report *r, FILE *fp) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "$schema", "https://json.schemastore.org/sarif-2.1.0.json");
    cJSON_AddStringToObject(root, "version", "2.1.0");
    cJSON *runs = cJSON_AddArrayToObject(root, "runs");
    cJSON *run = cJSON_CreateObject();
    cJSON_AddItemToArray(runs, run);
    cJSON *driver = cJSON_CreateObject();
    cJSON *tool = cJSON_CreateObject();
    cJSON_AddItemToObject(tool, "driver", driver);
    cJSON_AddItemToObject(run, "tool", tool);
    cJSON_AddStringToObject(driver, "name", "xpuify");
    cJSON_AddStringToObject(driver, "version", r->version);
    cJSON_AddStringToObject(driver, "informationUri", "https://github.com/xpuify/xpuify");
    cJSON *rules = cJSON_AddArrayToObject(driver, "rules");
    size_t nrules = an_catalog_count(r->cat);
    for (size_t i = 0; i < nrules; i++) {
        const an_rule *ru = an_catalog_rule(r->cat, i);
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "id", ru->code);
        cJSON_AddStringToObject(o, "name", ru->name);
        cJSON *sd = cJSON_CreateObject();
        cJSON_AddStringToObject(sd, "text", ru->summary);
        cJSON_AddItemToObject(o, "shortDescription", sd);
        cJSON *fd = cJSON_CreateObject();
        cJSON_AddStringToObject(fd, "text", ru->doc ? ru->doc : ru->summary);
        cJSON_AddItemToObject(o, "fullDescription", fd);
        cJSON *help = cJSON_CreateObject();
        cJSON_AddStringToObject(help, "text", ru->doc ? ru->doc : ru->summary);
        cJSON_AddStringToObject(help, "markdown", ru->doc ? ru->doc : ru->summary);
        cJSON_AddItemToObject(o, "help", help);
        char href[256];
        snprintf(href, sizeof href, "https://github.com/xpuify/xpuify/blob/main/docs/rules.md#%s", ru->code);
        cJSON_AddStringToObject(o, "helpUri", href);
        cJSON *cfg = cJSON_CreateObject();
        cJSON_AddStringToObject(cfg, "level", level(ru->severity));
        cJSON_AddItemToObject(o, "defaultConfiguration", cfg);
        cJSON *props = cJSON_CreateObject();
        cJSON_AddStringToObject(props, "fix", an_applicability_name(ru->fix));
        cJSON_AddStringToObject(props, "language", an_lang_name(ru->lang));
        cJSON_AddItemToObject(o, "properties", props);
        cJSON_AddItemToArray(rules, o);
    }
    /* what the run did not check: toolExecutionNotifications of the invocation (SARIF 2.1.0 3.20.21), so that code
     * scanning shows them as tool errors rather than as a clean result */
    out_skip *sk;
    size_t nskip = out_skips(r, &sk);
    if (nskip || r->failed) {
        bool failed = r->failed;
        for (size_t i = 0; i < nskip; i++) failed |= sk[i].error;
        cJSON *invs = cJSON_AddArrayToObject(run, "invocations");
        cJSON *inv = cJSON_CreateObject();
        cJSON_AddItemToArray(invs, inv);
        cJSON_AddBoolToObject(inv, "executionSuccessful", !failed);
        cJSON *notes = cJSON_AddArrayToObject(inv, "toolExecutionNotifications");
        for (size_t i = 0; i < nskip; i++) {
            cJSON *n = cJSON_CreateObject();
            cJSON_AddStringToObject(n, "level", sk[i].error ? "error" : "warning");
            char *path = out_utf8_lossy(sk[i].path), *why = out_utf8_lossy(sk[i].why), *u = uri(sk[i].path);
            ut_buf m;
            ut_buf_init(&m);
            ut_buf_printf(&m, "%s: not checked: %s", path, why);
            cJSON *msg = cJSON_CreateObject();
            cJSON_AddStringToObject(msg, "text", m.data);
            cJSON_AddItemToObject(n, "message", msg);
            cJSON *desc = cJSON_CreateObject();
            cJSON_AddStringToObject(desc, "id", "xpuify/not-checked");
            cJSON_AddItemToObject(n, "descriptor", desc);
            cJSON *locs = cJSON_AddArrayToObject(n, "locations");
            cJSON *loc = cJSON_CreateObject(), *phys = cJSON_CreateObject(), *art = cJSON_CreateObject();
            cJSON_AddStringToObject(art, "uri", u);
            cJSON_AddStringToObject(art, "uriBaseId", "%SRCROOT%");
            cJSON_AddItemToObject(phys, "artifactLocation", art);
            cJSON_AddItemToObject(loc, "physicalLocation", phys);
            cJSON_AddItemToArray(locs, loc);
            cJSON_AddItemToArray(notes, n);
            ut_buf_free(&m);
            ut_free(path), ut_free(why), ut_free(u);
        }
    }
    ut_free(sk);
    /* the base every relative artifact location names (SARIF 3.14.14): the directory xpuify ran in */
    cJSON *bases = cJSON_AddObjectToObject(run, "originalUriBaseIds");
    cJSON *srcroot = cJSON_AddObjectToObject(bases, "%SRCROOT%");
    if (r->srcroot) {
        char *u = uri(r->srcroot);
        ut_buf b;
        ut_buf_init(&b);
        ut_buf_printf(&b, "file://%s", u);
        cJSON_AddStringToObject(srcroot, "uri", b.data);
        ut_buf_free(&b);
        ut_free(u);
    }
    cJSON *sd = cJSON_AddObjectToObject(srcroot, "description");
    cJSON_AddStringToObject(sd, "text", "The directory xpuify ran in; result paths are relative to it.");
    cJSON_AddStringToObject(run, "columnKind", "unicodeCodePoints");
    cJSON *results = cJSON_AddArrayToObject(run, "results");
    char **own = r->fingerprints ? NULL : out_fingerprints(r->res);
    char **fps = r->fingerprints ? r->fingerprints : own;
    size_t k = 0;
    for (size_t i = 0; i < r->res->len; i++) {
        const an_file_result *f = &r->res->items[i];
        for (size_t j = 0; j < f->diags.len; j++, k++) {
            const an_diag *d = &f->diags.items[j];
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "ruleId", d->rule->code);
            out_json_add_uint(o, "ruleIndex", d->rule->index);
            cJSON_AddStringToObject(o, "level", level(d->severity));
            cJSON *msg = cJSON_CreateObject();
            cJSON_AddStringToObject(msg, "text", d->message);
            cJSON_AddItemToObject(o, "message", msg);
            cJSON *locs = cJSON_AddArrayToObject(o, "locations");
            cJSON *loc = cJSON_CreateObject();
            cJSON *phys = cJSON_CreateObject();
            cJSON *art = cJSON_CreateObject();
            add_location(art, f->file->path);
            cJSON_AddItemToObject(phys, "artifactLocation", art);
            cJSON_AddItemToObject(phys, "region", region(d->line, d->col, d->end_line, d->end_col));
            cJSON_AddItemToObject(loc, "physicalLocation", phys);
            cJSON_AddItemToArray(locs, loc);
            if (d->scope_end) { /* the code a design finding leaves as it is (XPU810's backend, XPU811's branch) */
                cJSON *rel = cJSON_AddArrayToObject(o, "relatedLocations");
                cJSON *rl = cJSON_CreateObject(), *rp = cJSON_CreateObject(), *ra = cJSON_CreateObject();
                out_json_add_uint(rl, "id", 1);
                add_location(ra, f->file->path);
                cJSON_AddItemToObject(rp, "artifactLocation", ra);
                cJSON_AddItemToObject(rp, "region", region(d->scope_line, d->scope_col, d->scope_end_line, d->scope_end_col));
                cJSON_AddItemToObject(rl, "physicalLocation", rp);
                cJSON *rm = cJSON_CreateObject();
                cJSON_AddStringToObject(rm, "text", "the CUDA-only code this finding leaves as it is");
                cJSON_AddItemToObject(rl, "message", rm);
                cJSON_AddItemToArray(rel, rl);
            }
            /* the baseline fingerprint: rule, project path, normalized line, occurrence */
            cJSON *pf = cJSON_AddObjectToObject(o, "partialFingerprints");
            cJSON_AddStringToObject(pf, "xpuify/v1", fps[k]);
            if (d->fix) {
                cJSON *fixes = cJSON_AddArrayToObject(o, "fixes");
                cJSON *fx = cJSON_CreateObject();
                cJSON *desc = cJSON_CreateObject();
                cJSON_AddStringToObject(desc, "text", d->fix->title ? d->fix->title : "");
                cJSON_AddItemToObject(fx, "description", desc);
                /* a consumer applying fixes unattended must be able to leave the unsafe ones out (docs/ci.md) */
                cJSON *fp_ = cJSON_AddObjectToObject(fx, "properties");
                cJSON_AddStringToObject(fp_, "applicability", an_applicability_name(d->fix->applicability));
                cJSON *changes = cJSON_AddArrayToObject(fx, "artifactChanges");
                cJSON *ch = cJSON_CreateObject();
                cJSON *a2 = cJSON_CreateObject();
                add_location(a2, f->file->path);
                cJSON_AddItemToObject(ch, "artifactLocation", a2);
                cJSON *reps = cJSON_AddArrayToObject(ch, "replacements");
                for (size_t m = 0; m < d->fix->edits.len; m++) {
                    const an_edit *e = &d->fix->edits.items[m];
                    uint32_t l, c, el, ec;
                    an_source_position(&f->src, e->start, &l, &c);
                    an_source_position(&f->src, e->end, &el, &ec);
                    cJSON *rep = cJSON_CreateObject();
                    cJSON_AddItemToObject(rep, "deletedRegion", region(l, c, el, ec));
                    cJSON *ins = cJSON_CreateObject();
                    cJSON_AddStringToObject(ins, "text", e->text ? e->text : "");
                    cJSON_AddItemToObject(rep, "insertedContent", ins);
                    cJSON_AddItemToArray(reps, rep);
                }
                cJSON_AddItemToArray(changes, ch);
                if ((d->fix->needs & AN_NEED_HELPER) && r->helper_paths && r->helper_paths[i] && r->helper_text)
                    cJSON_AddItemToArray(changes, helper_change(r->helper_paths[i], r->helper_text));
                cJSON_AddItemToArray(fixes, fx);
            }
            cJSON_AddItemToArray(results, o);
        }
    }
    out_fingerprints_free(own, r->res);
    char *s = cJSON_Print(root);
    fputs(s, fp);
    fputc('\n', fp);
    cJSON_free(s);
    cJSON_Delete(root);
}
