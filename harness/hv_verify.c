/* hv_verify: copies, builds, runs on each tier, comparisons and verdicts (see hv_verify.h). */
#include "harness/hv_verify.h"
#include "harness/hv_copy.h"
#include "util/ut_buf.h"
#include "util/ut_mem.h"
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const VARIANTS[HV_VARIANT__COUNT] = {"original", "patched", "ref-cmd"};

const char *hv_variant_name(hv_variant v) { return v < HV_VARIANT__COUNT ? VARIANTS[v] : "?"; }

const char *hv_verdict_name(hv_verdict v) {
    switch (v) {
    case HV_V_REFERENCE: return "reference";
    case HV_V_RAN: return "ran";
    case HV_V_FAILS: return "fails";
    case HV_V_MATCH: return "match";
    case HV_V_RUNS: return "runs";
    case HV_V_DIFFERS: return "DIFFERS";
    case HV_V_PATCHED_FAILS: return "FAILS";
    default: return "-";
    }
}

void hv_run_status(const hv_run *r, char *buf, size_t sz) {
    if (!r->ran) snprintf(buf, sz, "build failed");
    else if (!r->proc.started) snprintf(buf, sz, "not started");
    else if (r->proc.interrupted) snprintf(buf, sz, "interrupted");
    else if (r->proc.timed_out) snprintf(buf, sz, "timeout");
    else if (r->proc.term_signal) snprintf(buf, sz, "signal %d", r->proc.term_signal);
    else snprintf(buf, sz, "exit %d", r->proc.exit_code);
}

void hv_verify_init(hv_verify *v) {
    memset(v, 0, sizeof *v);
    v->rtol = 1e-5;
    v->atol = 1e-8;
    v->timeout = 600;
    v->reference = -1;
    v->python = "python3";
}

bool hv_verify_add_output(hv_verify *v, const char *spec, char **why) {
    hv_output o;
    if (!hv_output_parse(spec, &o, why)) return false;
    for (size_t i = 0; i < v->outputs.len; i++)
        if (!strcmp(v->outputs.items[i].spec, o.spec)) {
            hv_output_free(&o);
            return true;
        }
    ut_vec_push(&v->outputs, o);
    return true;
}

static char *path_join(const char *a, const char *b) {
    ut_buf x;
    ut_buf_init(&x);
    ut_buf_printf(&x, "%s/%s", a, b);
    return ut_buf_take(&x);
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...) {
    ut_buf b;
    ut_buf_init(&b);
    va_list ap;
    va_start(ap, f);
    ut_buf_vprintf(&b, f, ap);
    va_end(ap);
    return ut_buf_take(&b);
}

bool hv_verify_prepare(hv_verify *v, char **why) {
    *why = NULL;
    struct stat st;
    if (stat(v->project, &st) != 0) {
        *why = fmt("%s: %s", v->project, strerror(errno));
        return false;
    }
    if (!S_ISDIR(st.st_mode)) {
        *why = fmt("%s: not a directory (verify runs a project: give its directory)", v->project);
        return false;
    }
    char real[PATH_MAX];
    if (!realpath(v->project, real)) {
        *why = fmt("%s: %s", v->project, strerror(errno));
        return false;
    }
    const char *tmpdir = getenv("TMPDIR");
    if (!tmpdir || !*tmpdir) tmpdir = "/tmp";
    char *templ = fmt("%s/xpuify-verify-XXXXXX", tmpdir);
    if (!mkdtemp(templ)) {
        *why = fmt("cannot create a temporary directory in %s: %s", tmpdir, strerror(errno));
        ut_free(templ);
        return false;
    }
    v->tmp = templ;
    const char *base = strrchr(real, '/');
    base = base && base[1] ? base + 1 : "project";
    ut_buf warn, err;
    ut_buf_init(&warn);
    ut_buf_init(&err);
    for (int i = 0; i < 2; i++) {
        char *parent = path_join(v->tmp, VARIANTS[i]);
        mkdir(parent, 0700);
        v->copy[i] = path_join(parent, base);
        ut_free(parent);
        if (!hv_copy_tree(real, v->copy[i], v->tmp, &warn, &err)) {
            *why = fmt("cannot copy the project: %s", err.data ? err.data : "?");
            ut_buf_free(&warn);
            ut_buf_free(&err);
            return false;
        }
        if (i == 0 && warn.len && !v->quiet) fprintf(stderr, "xpuify: warning: %s", warn.data);
        ut_buf_clear(&warn);
    }
    ut_buf_free(&warn);
    ut_buf_free(&err);
    char *results = path_join(v->tmp, "results");
    mkdir(results, 0700);
    ut_free(results);
    hv_tier_detect(v->wanted, v->tmp, v->python, v->tiers);
    return true;
}

/* ---- running ---------------------------------------------------------------------------------------------- */

static char *tail_of(const char *path, int max_lines) {
    size_t n;
    char *t = hv_read_file(path, &n);
    if (!t || !n) {
        ut_free(t);
        return NULL;
    }
    while (n && t[n - 1] == '\n') t[--n] = 0;
    size_t start = n;
    int lines = 0;
    while (start > 0 && n - start < 2000) {
        if (t[start - 1] == '\n' && ++lines >= max_lines) break;
        start--;
    }
    char *r = ut_strdup(t + start);
    ut_free(t);
    return r;
}

static char *output_store_name(size_t i, const hv_output *o) {
    const char *b = strrchr(o->path, '/');
    return fmt("%zu-%s", i, b ? b + 1 : o->path);
}

static void run_one(hv_verify *v, hv_tier t, hv_variant var) {
    hv_run r;
    memset(&r, 0, sizeof r);
    r.tier = t, r.variant = var, r.compared_with = -1;
    hv_cmp_init(&r.cmp);
    char name[64];
    snprintf(name, sizeof name, "results/%s-%s", hv_tier_name(t), VARIANTS[var]);
    r.dir = path_join(v->tmp, name);
    mkdir(r.dir, 0700);
    int copy = var == HV_PATCHED ? HV_PATCHED : HV_ORIGINAL;
    /* the C tier's reference command needs no build: the original's copy is built for CUDA only */
    bool built = !v->build_cmd || hv_proc_ok(&v->build[copy]) || (var == HV_REFCMD && v->wanted[HV_TIER_OPENCL]);
    if (built && !hv_interrupted) {
        /* stale outputs of an earlier run must not count for this one */
        for (size_t i = 0; i < v->outputs.len; i++) {
            if (!v->outputs.items[i].path) continue;
            char *p = path_join(v->copy[copy], v->outputs.items[i].path);
            unlink(p);
            ut_free(p);
        }
        hv_proc_spec s = {0};
        s.cmd = var == HV_REFCMD ? v->ref_cmd : v->run_cmd;
        s.cwd = v->copy[copy];
        char *so = path_join(r.dir, "stdout"), *se = path_join(r.dir, "stderr");
        s.stdout_path = so, s.stderr_path = se;
        s.timeout = v->timeout;
        hv_tier_env(t, &s);
        hv_proc_spec_env(&s, "XPUIFY_VERIFY_VARIANT", VARIANTS[var]);
        if (!v->quiet) fprintf(stderr, "xpuify: verify: %s on %s ...\n", VARIANTS[var], hv_tier_name(t));
        hv_proc_run(&s, &r.proc);
        r.ran = true;
        r.outputs_ok = true;
        for (size_t i = 0; i < v->outputs.len; i++) {
            const hv_output *o = &v->outputs.items[i];
            if (!o->path) continue;
            char *p = path_join(v->copy[copy], o->path), *sn = output_store_name(i, o), *dst = path_join(r.dir, sn);
            if (rename(p, dst) != 0) {
                r.outputs_ok = false;
                if (!r.missing) r.missing = ut_strdup(o->path);
            }
            ut_free(p), ut_free(sn), ut_free(dst);
        }
        if (!hv_proc_ok(&r.proc)) r.stderr_tail = tail_of(se, 8);
        ut_free(so), ut_free(se);
        if (!v->quiet) {
            char st[64];
            hv_run_status(&r, st, sizeof st);
            fprintf(stderr, "xpuify: verify: %s on %s: %s (%.2f s)\n", VARIANTS[var], hv_tier_name(t), st, r.proc.seconds);
        }
    }
    ut_vec_push(&v->runs, r);
}

static bool run_ok(const hv_run *r) { return r->ran && hv_proc_ok(&r->proc); }

static void compare_runs(hv_verify *v, hv_run *a, int bi) {
    const hv_run *b = &v->runs.items[bi];
    a->compared_with = bi;
    a->compared = true;
    hv_cmp_init(&a->cmp);
    for (size_t i = 0; i < v->outputs.len; i++) {
        const hv_output *o = &v->outputs.items[i];
        char *pa, *pb;
        if (o->kind == HV_OUT_STDOUT) {
            pa = path_join(a->dir, "stdout");
            pb = path_join(b->dir, "stdout");
        } else {
            char *sn = output_store_name(i, o);
            pa = path_join(a->dir, sn);
            pb = path_join(b->dir, sn);
            ut_free(sn);
        }
        size_t na = 0, nb = 0;
        char *da = hv_read_file(pa, &na), *db = hv_read_file(pb, &nb);
        hv_cmp one;
        hv_cmp_init(&one);
        const char *label = o->kind == HV_OUT_STDOUT ? "stdout" : o->path;
        if (!da && !db) {
            one.equal = false; /* a named output that no run writes is a mistake in the command line */
            one.detail = fmt("%s: neither run produced it", label);
        } else if (!da) {
            one.equal = false;
            one.detail = fmt("%s: not produced (the reference has it)", label);
        } else if (!db) {
            one.equal = false;
            one.detail = fmt("%s: the reference did not produce it", label);
        } else {
            hv_compare_bytes(o->kind == HV_OUT_STDOUT ? HV_OUT_STDOUT : hv_output_kind_for(o), label, da, na, db, nb,
                             v->rtol, v->atol, &one);
        }
        hv_cmp_merge(&a->cmp, &one);
        hv_cmp_free(&one);
        ut_free(da), ut_free(db), ut_free(pa), ut_free(pb);
    }
}

static int find_run(const hv_verify *v, hv_tier t, hv_variant var) {
    for (size_t i = 0; i < v->runs.len; i++)
        if (v->runs.items[i].tier == t && v->runs.items[i].variant == var) return (int)i;
    return -1;
}

static void judge(hv_verify *v) {
    /* the reference: the original on the first accelerator it ran on, else on the CPU */
    v->reference = -1;
    for (int t = 0; t < HV_TIER__COUNT && v->reference < 0; t++) {
        int i = find_run(v, (hv_tier)t, HV_ORIGINAL);
        if (i >= 0 && run_ok(&v->runs.items[i])) v->reference = i;
    }
    bool pass = true, any_patched = false;
    for (size_t i = 0; i < v->runs.len; i++) {
        hv_run *r = &v->runs.items[i];
        switch (r->variant) {
        case HV_ORIGINAL:
            if (!run_ok(r)) r->verdict = HV_V_FAILS;
            else if ((int)i == v->reference) r->verdict = HV_V_REFERENCE;
            else {
                r->verdict = HV_V_RAN;
                compare_runs(v, r, v->reference); /* for information: another device may round differently */
            }
            break;
        case HV_REFCMD:
            r->verdict = run_ok(r) ? HV_V_RAN : HV_V_FAILS;
            if (!run_ok(r)) pass = false; /* a comparison was asked for and cannot be made */
            break;
        case HV_PATCHED: {
            any_patched = true;
            if (!run_ok(r)) {
                r->verdict = HV_V_PATCHED_FAILS;
                pass = false;
                break;
            }
            int o = find_run(v, r->tier, HV_ORIGINAL), rc = find_run(v, r->tier, HV_REFCMD);
            int base = o >= 0 && run_ok(&v->runs.items[o]) ? o : rc >= 0 && run_ok(&v->runs.items[rc]) ? rc : -1;
            /* the C tier: the OpenCL backend's output must equal the original's on the CUDA tier */
            if (base < 0 && r->tier == HV_TIER_OPENCL && v->reference >= 0) base = v->reference;
            if (base >= 0) {
                compare_runs(v, r, base);
                r->verdict = r->cmp.equal ? HV_V_MATCH : HV_V_DIFFERS;
                if (!r->cmp.equal) pass = false;
            } else {
                r->verdict = HV_V_RUNS;
                if (v->reference >= 0) compare_runs(v, r, v->reference); /* for information */
            }
            break;
        }
        default:
            break;
        }
    }
    v->passed = pass && any_patched && !hv_interrupted;
}

static void summarize(hv_verify *v) {
    ut_buf b;
    ut_buf_init(&b);
    ut_buf_puts(&b, v->passed ? "PASS: " : "FAIL: ");
    bool first = true;
    for (int t = 0; t < HV_TIER__COUNT; t++) {
        int p = find_run(v, (hv_tier)t, HV_PATCHED);
        if (p < 0) continue;
        const hv_run *r = &v->runs.items[p];
        int o = find_run(v, (hv_tier)t, HV_ORIGINAL), rc = find_run(v, (hv_tier)t, HV_REFCMD);
        bool orig_ok = o >= 0 && run_ok(&v->runs.items[o]);
        ut_buf_printf(&b, "%s%s: ", first ? "" : "; ", hv_tier_name((hv_tier)t));
        first = false;
        char st[64];
        switch (r->verdict) {
        case HV_V_MATCH:
            if (orig_ok) ut_buf_puts(&b, "patched matches the original");
            else if (t == HV_TIER_OPENCL && r->compared_with == v->reference && v->reference >= 0)
                ut_buf_printf(&b, "patched (OpenCL backend) matches the original on %s", hv_tier_name(v->runs.items[v->reference].tier));
            else ut_buf_puts(&b, "original fails, patched runs and matches the reference command");
            break;
        case HV_V_RUNS:
            if (t == HV_TIER_OPENCL) ut_buf_puts(&b, "patched (OpenCL backend) runs and exits 0; the original (CUDA) ran nowhere, nothing to compare with");
            else ut_buf_puts(&b, "original fails, patched runs");
            if (rc >= 0) ut_buf_puts(&b, " (the reference command failed: nothing to compare with)");
            break;
        case HV_V_DIFFERS:
            ut_buf_printf(&b, "patched differs from the %s (%s)", orig_ok ? "original" : "reference command",
                          r->cmp.detail ? r->cmp.detail : "?");
            break;
        default:
            hv_run_status(r, st, sizeof st);
            ut_buf_printf(&b, "patched fails (%s)", st);
            break;
        }
    }
    if (first) ut_buf_puts(&b, "nothing ran");
    if (hv_interrupted) ut_buf_puts(&b, " (interrupted)");
    if (v->reference < 0 && !v->ref_cmd && !first)
        ut_buf_puts(&b, ". The original ran on no tier, so nothing was compared: give --reference CMD");
    v->summary = ut_buf_take(&b);
}

/* The C tier (the OpenCL tier asked for): the build command runs in a copy before each tier's runs, with that tier's
 * backend (hv_tier_c_build_env); the original, a CUDA program, is built and run on the CUDA tier only. */
static void build_for_tier(hv_verify *v, int i, hv_tier t) {
    hv_proc_result_free(&v->build[i]);
    ut_free(v->build_err[i]);
    v->build_err[i] = NULL;
    hv_proc_spec s = {0};
    s.cmd = v->build_cmd;
    s.cwd = v->copy[i];
    char *so = fmt("%s/results/build-%s-%s.stdout", v->tmp, hv_tier_name(t), VARIANTS[i]);
    char *se = fmt("%s/results/build-%s-%s.stderr", v->tmp, hv_tier_name(t), VARIANTS[i]);
    s.stdout_path = so, s.stderr_path = se;
    s.timeout = v->timeout;
    hv_proc_spec_env(&s, "XPUIFY_VERIFY_VARIANT", VARIANTS[i]);
    hv_tier_c_build_env(t, &s);
    if (!v->quiet) fprintf(stderr, "xpuify: verify: building the %s for %s ...\n", VARIANTS[i], hv_tier_name(t));
    hv_proc_run(&s, &v->build[i]);
    v->build_ran[i] = true;
    if (!hv_proc_ok(&v->build[i])) {
        char *tl = tail_of(se, 12);
        if (!v->quiet)
            fprintf(stderr, "xpuify: verify: the build of the %s for %s failed%s%s\n", VARIANTS[i], hv_tier_name(t), tl ? ":\n" : "", tl ? tl : "");
        v->build_err[i] = tl;
    }
    ut_free(so), ut_free(se);
}

static void run_c_tiers(hv_verify *v) {
    for (int t = 0; t < HV_TIER__COUNT && !hv_interrupted; t++) {
        if (!v->tiers[t].present) continue;
        if (t != HV_TIER_OPENCL) {
            if (v->build_cmd) build_for_tier(v, HV_ORIGINAL, (hv_tier)t);
            run_one(v, (hv_tier)t, HV_ORIGINAL);
        }
        bool orig_ok = t != HV_TIER_OPENCL && run_ok(&v->runs.items[v->runs.len - 1]);
        if (v->ref_cmd && !orig_ok && !hv_interrupted) run_one(v, (hv_tier)t, HV_REFCMD);
        if (hv_interrupted) break;
        if (v->build_cmd) build_for_tier(v, HV_PATCHED, (hv_tier)t);
        run_one(v, (hv_tier)t, HV_PATCHED);
    }
}

void hv_verify_run(hv_verify *v) {
    hv_proc_catch_signals();
    if (v->wanted[HV_TIER_OPENCL]) {
        run_c_tiers(v);
        judge(v);
        summarize(v);
        hv_proc_restore_signals();
        return;
    }
    if (v->build_cmd) {
        for (int i = 0; i < 2 && !hv_interrupted; i++) {
            hv_proc_spec s = {0};
            s.cmd = v->build_cmd;
            s.cwd = v->copy[i];
            char *so = fmt("%s/results/build-%s.stdout", v->tmp, VARIANTS[i]);
            char *se = fmt("%s/results/build-%s.stderr", v->tmp, VARIANTS[i]);
            s.stdout_path = so, s.stderr_path = se;
            s.timeout = v->timeout;
            hv_proc_spec_env(&s, "XPUIFY_VERIFY_VARIANT", VARIANTS[i]);
            if (!v->quiet) fprintf(stderr, "xpuify: verify: building the %s ...\n", VARIANTS[i]);
            hv_proc_run(&s, &v->build[i]);
            v->build_ran[i] = true;
            if (!hv_proc_ok(&v->build[i])) {
                char *t = tail_of(se, 12);
                if (!v->quiet)
                    fprintf(stderr, "xpuify: verify: the build of the %s failed%s%s\n", VARIANTS[i], t ? ":\n" : "", t ? t : "");
                v->build_err[i] = t;
            }
            ut_free(so), ut_free(se);
        }
    }
    for (int t = 0; t < HV_TIER__COUNT && !hv_interrupted; t++) {
        if (!v->tiers[t].present) continue;
        run_one(v, (hv_tier)t, HV_ORIGINAL);
        if (v->ref_cmd && !run_ok(&v->runs.items[v->runs.len - 1]) && !hv_interrupted) run_one(v, (hv_tier)t, HV_REFCMD);
        if (!hv_interrupted) run_one(v, (hv_tier)t, HV_PATCHED);
    }
    judge(v);
    summarize(v);
    hv_proc_restore_signals();
}

void hv_verify_free(hv_verify *v) {
    if (v->tmp) {
        if (v->keep) {
            if (!v->quiet) fprintf(stderr, "xpuify: verify: kept %s\n", v->tmp);
        } else {
            hv_remove_tree(v->tmp);
        }
    }
    for (size_t i = 0; i < v->runs.len; i++) {
        hv_run *r = &v->runs.items[i];
        hv_proc_result_free(&r->proc);
        hv_cmp_free(&r->cmp);
        ut_free(r->dir);
        ut_free(r->missing);
        ut_free(r->stderr_tail);
    }
    ut_vec_free(&v->runs);
    for (size_t i = 0; i < v->outputs.len; i++) hv_output_free(&v->outputs.items[i]);
    ut_vec_free(&v->outputs);
    for (int i = 0; i < 2; i++) {
        ut_free(v->copy[i]);
        hv_proc_result_free(&v->build[i]);
        ut_free(v->build_err[i]);
    }
    for (int t = 0; t < HV_TIER__COUNT; t++) hv_tier_info_free(&v->tiers[t]);
    ut_free(v->tmp);
    ut_free(v->summary);
    memset(v, 0, sizeof *v);
}
