/* cli_verify: `xpuify verify [PATH] --run CMD ...`: copies the project twice, fixes one copy (unsafe fixes
 * too, as a migration would), builds and runs both on every device tier present and compares their outputs
 * (harness/). Exit: 0 the patched program matches the original wherever the original ran and runs on every
 * tier; 1 otherwise; 2 usage or set-up errors. */
#include "harness/hv_report.h"
#include "harness/hv_verify.h"
#include "rewriters/rw_project.h"
#include "cli/cli_layers.h"
#include "cli/cli.h"
#include "cli/cli_opts.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>

static const char *HELP =
    "Usage: xpuify verify [PATH] --run CMD [options]\n\n"
    "Copies the project at PATH (default .) twice into a temporary directory, applies `xpuify fix --unsafe-fixes`\n"
    "to one copy, then runs CMD (with /bin/sh, in each copy's root) on every device tier present and compares\n"
    "the outputs. The project itself is never written.\n\n"
    "Options:\n"
    "      --run CMD           the command that runs the program (required)\n"
    "      --build CMD         a command run once in each copy before the runs\n"
    "      --compare OUT...    what to compare (the operands up to the next option; give PATH before it):\n"
    "                          stdout (default) and/or files the program writes, relative to\n"
    "                          PATH: text (numbers within tolerance), .npy, raw .f32/.f64, other files byte by\n"
    "                          byte; prefixes text:, npy:, f32:, f64:, bytes: force a kind\n"
    "      --rtol R            relative tolerance (default 1e-05)\n"
    "      --atol A            absolute tolerance (default 1e-08)\n"
    "      --devices LIST      auto (default: every tier present) or a list of cuda, xpu, mps, cpu, opencl\n"
    "                          (opencl, the C tier, only by name: a CUDA C/C++ program's patched copy built with\n"
    "                          the layer's OpenCL backend; the build command then runs before each tier's runs\n"
    "                          with XPUIFY_GPU_BACKEND=cuda|opencl, XPUIFY_CC and XPUIFY_LIBS set, e.g.\n"
    "                          --build '$XPUIFY_CC -O2 -o p p.cu $XPUIFY_LIBS'; the original, CUDA, runs on cuda\n"
    "                          only, and the OpenCL run is compared with it, else with --reference, else must\n"
    "                          exit 0)\n"
    "      --reference CMD     where the original fails (CUDA-only code on the CPU), compare the patched run with\n"
    "                          the output of CMD run in the original's copy (a hand-written CPU version, say)\n"
    "      --timeout S         seconds allowed to each build and run (default 600); the process group is killed\n"
    "      --format FMT        text (default) or json\n"
    "      --keep              keep the temporary directory (copies, outputs) and print its path\n"
    "      --python PY         interpreter for the torch.xpu/MPS device probes (default python3)\n"
    "  -q, --quiet             no progress messages\n"
    "  and the fix options: --target, --torch-version, --helper-module, --helper-path (relative to PATH),\n"
    "  --device-priority, --select, --ignore, --exclude, --rules, --no-ignore, -o/--output-file\n\n"
    "Tiers: cuda (nvidia-smi or the CUDA driver), xpu (xpu-smi, Level Zero or torch.xpu), mps (macOS),\n"
    "cpu (always; CUDA_VISIBLE_DEVICES=\"\", ZE_AFFINITY_MASK=\"\", XPUIFY_DEVICE=cpu), opencl (an OpenCL platform\n"
    "with a device, through libOpenCL.so.1; with it, a cuda tier that is absent, or has no nvcc, is skipped and\n"
    "reported, not an error). Each run also sees\n"
    "XPUIFY_VERIFY_TIER and XPUIFY_VERIFY_VARIANT (original, patched, ref-cmd).\n"
    "Exit status: 0 the patched program matches the original wherever the original ran and runs on every tier,\n"
    "1 otherwise, 2 usage or set-up error (or an interruption).\n";

static bool parse_number(const char *flag, const char *v, double *out, bool positive) {
    char *end;
    errno = 0;
    double d = v ? strtod(v, &end) : NAN;
    if (!v || !*v || *end || errno || !isfinite(d) || d < 0 || (positive && d <= 0)) {
        fprintf(stderr, "xpuify: error: %s: `%s` is not a %s number\n", flag, v ? v : "", positive ? "positive" : "non-negative");
        return false;
    }
    *out = d;
    return true;
}

static bool parse_devices(const char *v, hv_verify *hv, bool *explicit_) {
    memset(hv->wanted, 0, sizeof hv->wanted);
    if (!strcmp(v, "auto")) {
        for (int t = 0; t < HV_TIER__COUNT; t++) hv->wanted[t] = t != HV_TIER_OPENCL;
        *explicit_ = false;
        return true;
    }
    *explicit_ = true;
    char *copy = ut_strdup(v), *save = NULL;
    bool ok = true, any = false;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ') tok++;
        hv_tier t;
        if (!hv_tier_parse(tok, &t)) {
            fprintf(stderr, "xpuify: error: --devices: `%s` is not one of auto, cuda, xpu, mps, cpu, opencl\n", tok);
            ok = false;
            continue;
        }
        hv->wanted[t] = any = true;
    }
    ut_free(copy);
    if (ok && !any) {
        fprintf(stderr, "xpuify: error: --devices: the list is empty\n");
        ok = false;
    }
    return ok;
}

int cli_verify(int argc, char **argv) {
    cli_opts o;
    cli_opts_init(&o);
    hv_verify hv;
    hv_verify_init(&hv);
    for (int t = 0; t < HV_TIER__COUNT; t++) hv.wanted[t] = t != HV_TIER_OPENCL;
    bool bad = false, json = false, devices_explicit = false, saw_compare = false;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if (a[0] != '-' || !strcmp(a, "-")) {
            if (path) {
                fprintf(stderr, "xpuify: error: verify takes one project directory (got `%s` and `%s`)\n", path, a);
                bad = true;
            }
            path = a;
            continue;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(HELP, stdout);
            hv_verify_free(&hv);
            cli_opts_free(&o);
            return CLI_EXIT_OK;
        }
        if (cli_opt(argc, argv, &i, "--run", &v)) { if (!v) bad = true; else hv.run_cmd = v; }
        else if (cli_opt(argc, argv, &i, "--build", &v)) { if (!v) bad = true; else hv.build_cmd = v; }
        else if (cli_opt(argc, argv, &i, "--reference", &v)) { if (!v) bad = true; else hv.ref_cmd = v; }
        else if (cli_opt(argc, argv, &i, "--python", &v)) { if (!v) bad = true; else hv.python = v; }
        else if (cli_opt(argc, argv, &i, "--rtol", &v)) { if (!parse_number("--rtol", v, &hv.rtol, false)) bad = true; }
        else if (cli_opt(argc, argv, &i, "--atol", &v)) { if (!parse_number("--atol", v, &hv.atol, false)) bad = true; }
        else if (cli_opt(argc, argv, &i, "--timeout", &v)) { if (!parse_number("--timeout", v, &hv.timeout, true)) bad = true; }
        else if (cli_opt(argc, argv, &i, "--devices", &v)) { if (!v || !parse_devices(v, &hv, &devices_explicit)) bad = true; }
        else if (cli_opt(argc, argv, &i, "--format", &v) || cli_opt(argc, argv, &i, "-f", &v)) {
            if (!v) bad = true;
            else if (!strcmp(v, "json")) json = true;
            else if (!strcmp(v, "text")) json = false;
            else {
                fprintf(stderr, "xpuify: error: verify --format: `%s` is not one of text, json\n", v);
                bad = true;
            }
        } else if (!strncmp(a, "--compare", 9) && (a[9] == 0 || a[9] == '=')) {
            saw_compare = true;
            UT_VEC(const char *) specs = {0};
            if (a[9] == '=') ut_vec_push(&specs, a + 10);
            else
                while (i + 1 < argc && argv[i + 1][0] != '-') ut_vec_push(&specs, argv[++i]);
            if (!specs.len) {
                fprintf(stderr, "xpuify: error: --compare needs stdout or a file\n");
                bad = true;
            }
            for (size_t k = 0; k < specs.len; k++) {
                char *why;
                if (!hv_verify_add_output(&hv, specs.items[k], &why)) {
                    fprintf(stderr, "xpuify: error: --compare: %s\n", why);
                    ut_free(why);
                    bad = true;
                }
            }
            ut_vec_free(&specs);
        } else if (!strcmp(a, "--keep")) hv.keep = true;
        else {
            int r = cli_opts_parse(&o, argc, argv, &i);
            if (r < 0) bad = true;
            else if (r == 0) {
                fprintf(stderr, "xpuify: error: unknown option `%s` (see `xpuify verify --help`)\n", a);
                bad = true;
            }
        }
    }
    if (!hv.run_cmd && !bad) {
        fprintf(stderr, "xpuify: error: verify needs --run CMD, the command that runs the program (see `xpuify verify --help`)\n");
        bad = true;
    }
    if (o.helper.path && o.helper.path[0] == '/') {
        fprintf(stderr, "xpuify: error: --helper-path: give it relative to the project (verify fixes a copy)\n");
        bad = true;
    }
    if (!saw_compare) {
        char *why;
        hv_verify_add_output(&hv, "stdout", &why);
    }
    hv.project = path ? path : ".";
    hv.quiet = o.quiet;
    int rc = CLI_EXIT_USAGE;
    FILE *out = stdout;
    char *helper_path = NULL;
    char *why = NULL;
    if (bad) goto done;
    if (!hv_verify_prepare(&hv, &why)) {
        fprintf(stderr, "xpuify: error: %s\n", why);
        goto done;
    }
    if (devices_explicit)
        for (int t = 0; t < HV_TIER__COUNT; t++)
            if (hv.wanted[t] && !hv.tiers[t].present && !(t == HV_TIER_CUDA && hv.wanted[HV_TIER_OPENCL])) {
                fprintf(stderr, "xpuify: error: --devices %s: not present on this machine: %s\n", hv_tier_name((hv_tier)t),
                        hv.tiers[t].how);
                bad = true;
            }
    if (bad) goto done;

    /* fix the patched copy in-process, as `xpuify fix --unsafe-fixes` would */
    ut_vec_push(&o.paths, hv.copy[HV_PATCHED]);
    if (o.helper.path) {
        ut_buf b;
        ut_buf_init(&b);
        ut_buf_printf(&b, "%s/%s", hv.copy[HV_PATCHED], o.helper.path);
        helper_path = ut_buf_take(&b);
        o.helper.path = helper_path;
    }
    if (!cli_opts_prepare(&o)) goto done;
    an_fix_options fo;
    ut_buf reason;
    ut_buf_init(&reason);
    cli_target_choose(o.target, o.torch_version, o.paths.items, o.paths.len, o.cat, &o.files, o.enabled, &fo, &reason,
                      NULL);
    rw_project pj;
    rw_project_init(&pj);
    pj.cat = o.cat, pj.enabled = o.enabled, pj.fix = fo;
    /* C/C++/CUDA files include the portable layers, written at the root of the patched copy (fix's default) */
    cli_layers lc = {&o.helper, hv.copy[HV_PATCHED], false, true, {false, false}, "", "", o.cat, false};
    pj.fix_for_file = cli_layers_fix_for_file, pj.fix_ctx = &lc;
    pj.on_fixed = cli_layers_write, pj.on_fixed_ctx = &lc;
    pj.helper_module = o.helper.module, pj.helper_path = o.helper.path, pj.priority = o.priority;
    pj.unsafe = true, pj.quiet = true;
    for (size_t i = 0; i < o.files.len; i++) {
        const an_file *f = &o.files.items[i];
        an_source src;
        char *err = NULL;
        if (an_source_load(&src, f->path, o.max_file_size, &err) != AN_LOAD_OK) {
            ut_free(err);
            continue;
        }
        rw_project_fix_file(&pj, f, &src);
        an_source_free(&src);
    }
    if (!o.quiet)
        fprintf(stderr, "xpuify: verify: target %s; fixed %zu finding%s in %zu file%s of the patched copy\n", reason.data,
                pj.fixed, pj.fixed == 1 ? "" : "s", pj.files_changed, pj.files_changed == 1 ? "" : "s");

    hv_verify_run(&hv);

    if (o.output_file) {
        out = fopen(o.output_file, "w");
        if (!out) {
            fprintf(stderr, "xpuify: error: %s: cannot write: %s\n", o.output_file, strerror(errno));
            out = stdout;
        }
    }
    hv_report rep = {&hv, XPUIFY_VERSION,
                     fo.target == AN_TARGET_COMPAT ? "compat" : fo.target == AN_TARGET_ACCELERATOR ? "accelerator" : "none",
                     reason.data, pj.fixed, pj.files_changed, pj.errors};
    if (json) hv_report_json(&rep, out);
    else hv_report_text(&rep, out);
    rc = hv.passed ? CLI_EXIT_OK : CLI_EXIT_FINDINGS;
    if (hv_interrupted) rc = CLI_EXIT_USAGE;
    rw_project_free(&pj);
    ut_buf_free(&reason);
done:
    if (out != stdout) fclose(out);
    ut_free(why);
    hv_verify_free(&hv);
    ut_free(helper_path);
    cli_opts_free(&o);
    return rc;
}
