/* hv_verify: `xpuify verify`'s model and procedure. The project is copied twice into a temporary directory,
 * one copy is fixed (by the caller, between hv_verify_prepare and hv_verify_run), the build command runs in
 * each copy, then the run command in each copy on each device tier. The reference is the original on the
 * first accelerator it ran on (else on the CPU). On a tier where the original fails, an optional reference
 * command (a hand-written CPU version, say) runs in the original's copy and the patched run is compared with
 * it. Verdict: the patched program must match the original wherever the original ran (the reference command
 * where it did not) and must run on every tier. */
#ifndef HV_VERIFY_H
#define HV_VERIFY_H
#include "harness/hv_compare.h"
#include "harness/hv_proc.h"
#include "harness/hv_tier.h"
#include "util/ut_mem.h"

typedef enum { HV_ORIGINAL, HV_PATCHED, HV_REFCMD, HV_VARIANT__COUNT } hv_variant;

typedef enum {
    HV_V_NONE,
    HV_V_REFERENCE,  /* original: the reference of the whole matrix */
    HV_V_RAN,        /* original on another tier, or the reference command: ran */
    HV_V_FAILS,      /* original/refcmd: did not run (exit status, signal, timeout, failed build) */
    HV_V_MATCH,      /* patched: same output as the original (or the reference command) on this tier */
    HV_V_RUNS,       /* patched: ran where the original fails and there is nothing to compare with */
    HV_V_DIFFERS,    /* patched: output differs */
    HV_V_PATCHED_FAILS,
} hv_verdict;

typedef struct {
    hv_tier tier;
    hv_variant variant;
    bool ran;             /* the command was started (false: the build failed) */
    hv_proc_result proc;
    char *dir;            /* where its stdout, stderr and output files were collected */
    bool outputs_ok;      /* every named output file was produced */
    char *missing;        /* the first output file it did not produce (heap) */
    /* comparison */
    int compared_with;    /* index of the run compared with, or -1 */
    hv_cmp cmp;
    bool compared;
    hv_verdict verdict;
    char *stderr_tail;    /* last lines of stderr of a run that failed (heap) */
} hv_run;

typedef struct {
    /* what to do (set by the caller) */
    const char *project;  /* the directory to verify */
    const char *run_cmd, *build_cmd, *ref_cmd;
    UT_VEC(hv_output) outputs;
    double rtol, atol, timeout;
    bool wanted[HV_TIER__COUNT];
    const char *python;   /* probes */
    bool keep, quiet;
    /* set up by hv_verify_prepare */
    char *tmp;            /* the temporary directory */
    char *copy[2];        /* project copies: [HV_ORIGINAL], [HV_PATCHED] */
    hv_tier_info tiers[HV_TIER__COUNT];
    /* results */
    hv_proc_result build[2];
    bool build_ran[2];
    char *build_err[2];   /* last lines of stderr of a build that failed (heap) */
    UT_VEC(hv_run) runs;
    int reference;        /* index of the reference run or -1 */
    bool passed;
    char *summary;        /* one sentence (heap) */
} hv_verify;

void hv_verify_init(hv_verify *v);
/* Adds a --compare operand. false: *why (heap). */
bool hv_verify_add_output(hv_verify *v, const char *spec, char **why);
/* Creates the temporary directory, copies the project twice, detects the tiers. false: *why (heap), a
 * usage or set-up error (the caller exits 2). */
bool hv_verify_prepare(hv_verify *v, char **why);
/* Builds, runs and compares; sets passed and summary. */
void hv_verify_run(hv_verify *v);
/* Removes the temporary directory unless keep. */
void hv_verify_free(hv_verify *v);

const char *hv_variant_name(hv_variant v);
const char *hv_verdict_name(hv_verdict v);
/* "exit 1", "signal 9", "timeout", "build failed", "not started" */
void hv_run_status(const hv_run *r, char *buf, size_t sz);
#endif
