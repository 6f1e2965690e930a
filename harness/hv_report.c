/* hv_report: text table and JSON of a verification (see hv_report.h). */
#include "harness/hv_report.h"
#include "util/ut_buf.h"
#include "util/ut_mem.h"
#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

static void num(char *buf, size_t sz, const hv_run *r, double x) {
    if (!r->compared || !r->cmp.numeric || !r->cmp.numbers) snprintf(buf, sz, "-");
    else if (isinf(x)) snprintf(buf, sz, "inf");
    else if (x == 0) snprintf(buf, sz, "0");
    else snprintf(buf, sz, "%.3g", x);
}

static void with(char *buf, size_t sz, const hv_verify *v, const hv_run *r) {
    if (!r->compared || r->compared_with < 0) {
        snprintf(buf, sz, "-");
        return;
    }
    const hv_run *b = &v->runs.items[r->compared_with];
    snprintf(buf, sz, "%s/%s", hv_variant_name(b->variant), hv_tier_name(b->tier));
}

void hv_report_text(const hv_report *rep, FILE *fp) {
    const hv_verify *v = rep->v;
    fprintf(fp, "xpuify verify %s\n", v->project);
    fprintf(fp, "  fix:      target %s: %zu finding%s fixed in %zu file%s%s\n", rep->target_reason ? rep->target_reason : rep->target,
            rep->fixed, rep->fixed == 1 ? "" : "s", rep->files_changed, rep->files_changed == 1 ? "" : "s",
            rep->fix_errors ? " (some files could not be fixed: see the messages above)" : "");
    if (v->build_cmd) fprintf(fp, "  build:    %s\n", v->build_cmd);
    fprintf(fp, "  run:      %s\n", v->run_cmd);
    if (v->ref_cmd) fprintf(fp, "  reference command (where the original fails): %s\n", v->ref_cmd);
    fprintf(fp, "  compare:  ");
    for (size_t i = 0; i < v->outputs.len; i++) fprintf(fp, "%s%s", i ? ", " : "", v->outputs.items[i].spec);
    fprintf(fp, " (rtol %g, atol %g); timeout %g s\n", v->rtol, v->atol, v->timeout);
    fprintf(fp, "  devices:  ");
    bool first = true;
    for (int t = 0; t < HV_TIER__COUNT; t++) {
        if (!v->tiers[t].present) continue;
        fprintf(fp, "%s%s (%s)", first ? "" : ", ", hv_tier_name((hv_tier)t), v->tiers[t].how);
        first = false;
    }
    fprintf(fp, "\n  absent:   ");
    first = true;
    for (int t = 0; t < HV_TIER__COUNT; t++) {
        if (v->tiers[t].present) continue;
        fprintf(fp, "%s%s (%s)", first ? "" : ", ", hv_tier_name((hv_tier)t), v->tiers[t].how);
        first = false;
    }
    if (first) fprintf(fp, "none");
    fprintf(fp, "\n\n");
    fprintf(fp, "%-5s %-10s %-13s %8s  %-18s %-10s %-10s %s\n", "tier", "variant", "status", "seconds", "compared with",
            "max abs", "max rel", "verdict");
    for (size_t i = 0; i < v->runs.len; i++) {
        const hv_run *r = &v->runs.items[i];
        char st[64], w[64], ma[32], mr[32], secs[32];
        hv_run_status(r, st, sizeof st);
        with(w, sizeof w, v, r);
        num(ma, sizeof ma, r, r->cmp.max_abs);
        num(mr, sizeof mr, r, r->cmp.max_rel);
        if (r->ran) snprintf(secs, sizeof secs, "%.2f", r->proc.seconds);
        else snprintf(secs, sizeof secs, "-");
        fprintf(fp, "%-5s %-10s %-13s %8s  %-18s %-10s %-10s %s\n", hv_tier_name(r->tier), hv_variant_name(r->variant), st,
                secs, w, ma, mr, hv_verdict_name(r->verdict));
    }
    /* details: what differs, why a run failed */
    bool head = false;
    for (size_t i = 0; i < v->runs.len; i++) {
        const hv_run *r = &v->runs.items[i];
        bool show_diff = r->compared && !r->cmp.equal && r->cmp.detail;
        bool show_err = r->stderr_tail && (r->variant != HV_ORIGINAL || r->verdict == HV_V_FAILS);
        if (!show_diff && !show_err) continue;
        if (!head) fprintf(fp, "\n");
        head = true;
        if (show_diff) {
            char w[64];
            with(w, sizeof w, v, r);
            fprintf(fp, "%s on %s vs %s: %s%s\n", hv_variant_name(r->variant), hv_tier_name(r->tier), w, r->cmp.detail,
                    r->verdict == HV_V_RAN || r->verdict == HV_V_RUNS ? " (for information: another device)" : "");
        }
        if (show_err) {
            char st[64];
            hv_run_status(r, st, sizeof st);
            fprintf(fp, "%s on %s: %s; the end of its stderr:\n", hv_variant_name(r->variant), hv_tier_name(r->tier), st);
            for (const char *l = r->stderr_tail; l && *l;) {
                const char *nl = strchr(l, '\n');
                int n = nl ? (int)(nl - l) : (int)strlen(l);
                fprintf(fp, "    | %.*s\n", n, l);
                l = nl ? nl + 1 : NULL;
            }
        }
    }
    if (v->build_cmd)
        for (int i = 0; i < 2; i++)
            if (v->build_ran[i] && !hv_proc_ok(&v->build[i])) {
                fprintf(fp, "\nthe build of the %s failed (%s)\n", i ? "patched copy" : "original",
                        v->build[i].timed_out ? "timeout" : "non-zero exit");
                for (const char *l = v->build_err[i]; l && *l;) {
                    const char *nl = strchr(l, '\n');
                    fprintf(fp, "  | %.*s\n", (int)(nl ? nl - l : (long)strlen(l)), l);
                    l = nl ? nl + 1 : NULL;
                }
            }
    fprintf(fp, "\n%s\n", v->summary ? v->summary : "");
    if (v->keep) fprintf(fp, "kept: %s\n", v->tmp);
}

static cJSON *jnum(double x) { return isfinite(x) ? cJSON_CreateNumber(x) : cJSON_CreateNull(); }

void hv_report_json(const hv_report *rep, FILE *fp) {
    const hv_verify *v = rep->v;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "version", rep->version);
    cJSON_AddStringToObject(o, "path", v->project);
    cJSON *fx = cJSON_AddObjectToObject(o, "fix");
    cJSON_AddStringToObject(fx, "target", rep->target);
    cJSON_AddStringToObject(fx, "reason", rep->target_reason ? rep->target_reason : "");
    cJSON_AddNumberToObject(fx, "fixed", (double)rep->fixed);
    cJSON_AddNumberToObject(fx, "files_changed", (double)rep->files_changed);
    cJSON_AddBoolToObject(fx, "errors", rep->fix_errors);
    cJSON_AddItemToObject(o, "build", v->build_cmd ? cJSON_CreateString(v->build_cmd) : cJSON_CreateNull());
    cJSON_AddStringToObject(o, "run", v->run_cmd);
    cJSON_AddItemToObject(o, "reference_command", v->ref_cmd ? cJSON_CreateString(v->ref_cmd) : cJSON_CreateNull());
    cJSON *cmp = cJSON_AddArrayToObject(o, "compare");
    for (size_t i = 0; i < v->outputs.len; i++) cJSON_AddItemToArray(cmp, cJSON_CreateString(v->outputs.items[i].spec));
    cJSON_AddNumberToObject(o, "rtol", v->rtol);
    cJSON_AddNumberToObject(o, "atol", v->atol);
    cJSON_AddNumberToObject(o, "timeout", v->timeout);
    cJSON *tiers = cJSON_AddArrayToObject(o, "devices");
    for (int t = 0; t < HV_TIER__COUNT; t++) {
        cJSON *d = cJSON_CreateObject();
        cJSON_AddStringToObject(d, "tier", hv_tier_name((hv_tier)t));
        cJSON_AddBoolToObject(d, "present", v->tiers[t].present);
        cJSON_AddStringToObject(d, "how", v->tiers[t].how ? v->tiers[t].how : "");
        cJSON_AddItemToArray(tiers, d);
    }
    if (v->build_cmd) {
        cJSON *b = cJSON_AddArrayToObject(o, "builds");
        for (int i = 0; i < 2; i++) {
            if (!v->build_ran[i]) continue;
            cJSON *x = cJSON_CreateObject();
            cJSON_AddStringToObject(x, "variant", hv_variant_name((hv_variant)i));
            cJSON_AddBoolToObject(x, "ok", hv_proc_ok(&v->build[i]));
            cJSON_AddItemToObject(x, "exit", v->build[i].exit_code >= 0 ? cJSON_CreateNumber(v->build[i].exit_code) : cJSON_CreateNull());
            cJSON_AddBoolToObject(x, "timed_out", v->build[i].timed_out);
            cJSON_AddNumberToObject(x, "seconds", v->build[i].seconds);
            cJSON_AddItemToObject(x, "stderr_tail", v->build_err[i] ? cJSON_CreateString(v->build_err[i]) : cJSON_CreateNull());
            cJSON_AddItemToArray(b, x);
        }
    }
    cJSON *runs = cJSON_AddArrayToObject(o, "runs");
    for (size_t i = 0; i < v->runs.len; i++) {
        const hv_run *r = &v->runs.items[i];
        cJSON *x = cJSON_CreateObject();
        char st[64];
        hv_run_status(r, st, sizeof st);
        cJSON_AddStringToObject(x, "tier", hv_tier_name(r->tier));
        cJSON_AddStringToObject(x, "variant", hv_variant_name(r->variant));
        cJSON_AddBoolToObject(x, "ran", r->ran);
        cJSON_AddStringToObject(x, "status", st);
        cJSON_AddItemToObject(x, "exit", r->ran && r->proc.exit_code >= 0 ? cJSON_CreateNumber(r->proc.exit_code) : cJSON_CreateNull());
        cJSON_AddBoolToObject(x, "timed_out", r->proc.timed_out);
        cJSON_AddItemToObject(x, "seconds", r->ran ? cJSON_CreateNumber(r->proc.seconds) : cJSON_CreateNull());
        if (r->compared && r->compared_with >= 0) {
            const hv_run *b = &v->runs.items[r->compared_with];
            char w[64];
            snprintf(w, sizeof w, "%s/%s", hv_variant_name(b->variant), hv_tier_name(b->tier));
            cJSON_AddStringToObject(x, "compared_with", w);
            cJSON_AddBoolToObject(x, "equal", r->cmp.equal);
            cJSON_AddNumberToObject(x, "numbers", (double)r->cmp.numbers);
            cJSON_AddItemToObject(x, "max_abs", r->cmp.numeric && r->cmp.numbers ? jnum(r->cmp.max_abs) : cJSON_CreateNull());
            cJSON_AddItemToObject(x, "max_rel", r->cmp.numeric && r->cmp.numbers ? jnum(r->cmp.max_rel) : cJSON_CreateNull());
            cJSON_AddItemToObject(x, "difference", r->cmp.detail ? cJSON_CreateString(r->cmp.detail) : cJSON_CreateNull());
        } else {
            cJSON_AddNullToObject(x, "compared_with");
        }
        cJSON_AddStringToObject(x, "verdict", hv_verdict_name(r->verdict));
        cJSON_AddItemToObject(x, "stderr_tail", r->stderr_tail ? cJSON_CreateString(r->stderr_tail) : cJSON_CreateNull());
        cJSON_AddItemToArray(runs, x);
    }
    if (v->reference >= 0) {
        const hv_run *b = &v->runs.items[v->reference];
        char w[64];
        snprintf(w, sizeof w, "%s/%s", hv_variant_name(b->variant), hv_tier_name(b->tier));
        cJSON_AddStringToObject(o, "reference", w);
    } else {
        cJSON_AddNullToObject(o, "reference");
    }
    cJSON_AddBoolToObject(o, "passed", v->passed);
    cJSON_AddStringToObject(o, "summary", v->summary ? v->summary : "");
    cJSON_AddItemToObject(o, "kept", v->keep && v->tmp ? cJSON_CreateString(v->tmp) : cJSON_CreateNull());
    char *s = cJSON_Print(o);
    fputs(s, fp);
    fputc('\n', fp);
    cJSON_free(s);
    cJSON_Delete(o);
}
