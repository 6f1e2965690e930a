/* hv_tier: device tier detection and per-tier environments (see hv_tier.h). CUDA: `nvidia-smi -L`, else the
 * driver library (libcuda.so.1: cuInit, cuDeviceGetCount). XPU: `xpu-smi discovery`, else the Level Zero
 * loader (libze_loader.so.1: zeInit for GPUs, zeDriverGet, zeDeviceGet), else `torch.xpu.is_available()`.
 * MPS (macOS only): `torch.backends.mps.is_available()`. The libraries are opened at run time, so xpuify
 * needs neither installed. */
#include "harness/hv_tier.h"
#include "harness/hv_compare.h"
#include "util/ut_buf.h"
#include "util/ut_mem.h"
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *const NAMES[HV_TIER__COUNT] = {"cuda", "xpu", "mps", "cpu", "opencl"};

const char *hv_tier_name(hv_tier t) { return t < HV_TIER__COUNT ? NAMES[t] : "?"; }

bool hv_tier_parse(const char *name, hv_tier *t) {
    for (int i = 0; i < HV_TIER__COUNT; i++)
        if (!strcasecmp(name, NAMES[i])) { *t = (hv_tier)i; return true; }
    return false;
}

bool hv_tier_is_accelerator(hv_tier t) { return t != HV_TIER_CPU && t != HV_TIER_OPENCL; }

void hv_tier_info_free(hv_tier_info *t) {
    ut_free(t->how);
    t->how = NULL;
}

/* runs a probe command; its trimmed stdout in *out (heap) when it exits 0 */
static bool probe(const char *cmd, const char *scratch, char **out) {
    char path[4096];
    snprintf(path, sizeof path, "%s/probe.out", scratch);
    hv_proc_spec s = {0};
    s.cmd = cmd;
    s.stdout_path = path;
    s.timeout = 60;
    hv_proc_result r;
    hv_proc_run(&s, &r);
    bool ok = hv_proc_ok(&r);
    hv_proc_result_free(&r);
    *out = NULL;
    if (!ok) return false;
    size_t n;
    char *t = hv_read_file(path, &n);
    if (!t) return false;
    while (n && (t[n - 1] == '\n' || t[n - 1] == ' ' || t[n - 1] == '\r')) t[--n] = 0;
    *out = t;
    return true;
}

static void set_how(hv_tier_info *t, bool present, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_how(hv_tier_info *t, bool present, const char *fmt, ...) {
    ut_buf b;
    ut_buf_init(&b);
    va_list ap;
    va_start(ap, fmt);
    ut_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    ut_free(t->how);
    t->how = ut_buf_take(&b);
    t->present = present;
}

static bool hidden(const char *var) {
    const char *v = getenv(var);
    return v && (!*v || !strcmp(v, "-1"));
}

static void detect_cuda(const char *scratch, hv_tier_info *t) {
    if (hidden("CUDA_VISIBLE_DEVICES")) {
        set_how(t, false, "hidden by CUDA_VISIBLE_DEVICES in this environment");
        return;
    }
    char *out;
    if (probe("nvidia-smi -L 2>/dev/null", scratch, &out)) {
        int n = 0;
        char first[256] = "";
        for (char *line = out; line && *line;) {
            char *nl = strchr(line, '\n');
            if (!strncmp(line, "GPU ", 4)) {
                if (!n) {
                    const char *c = strchr(line, ':'), *u = strstr(line, " (UUID");
                    if (c && u && u > c + 2) snprintf(first, sizeof first, "%.*s", (int)(u - c - 2), c + 2);
                }
                n++;
            }
            line = nl ? nl + 1 : NULL;
        }
        ut_free(out);
        if (n) {
            set_how(t, true, "nvidia-smi: %d GPU%s%s%s", n, n == 1 ? "" : "s", *first ? ": " : "", first);
            return;
        }
    }
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        set_how(t, false, "no NVIDIA GPU: nvidia-smi found none and libcuda.so.1 is not installed");
        return;
    }
    int (*cu_init)(unsigned) = (int (*)(unsigned))dlsym(h, "cuInit");
    int (*cu_count)(int *) = (int (*)(int *))dlsym(h, "cuDeviceGetCount");
    int n = 0;
    if (cu_init && cu_count && cu_init(0) == 0 && cu_count(&n) == 0 && n > 0)
        set_how(t, true, "CUDA driver: %d device%s", n, n == 1 ? "" : "s");
    else
        set_how(t, false, "no NVIDIA GPU: the CUDA driver reports no device");
    /* stays loaded: driver loaders keep platform state for the process and are not made to be unloaded */
}

static bool level_zero_gpus(int *count) {
    void *h = dlopen("libze_loader.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) return false;
    typedef int (*init_fn)(uint32_t);
    typedef int (*drv_fn)(uint32_t *, void **);
    typedef int (*dev_fn)(void *, uint32_t *, void **);
    init_fn ze_init = (init_fn)dlsym(h, "zeInit");
    drv_fn ze_drivers = (drv_fn)dlsym(h, "zeDriverGet");
    dev_fn ze_devices = (dev_fn)dlsym(h, "zeDeviceGet");
    *count = 0;
    uint32_t nd = 0;
    if (ze_init && ze_drivers && ze_devices && ze_init(1 /* ZE_INIT_FLAG_GPU_ONLY */) == 0 && ze_drivers(&nd, NULL) == 0 &&
        nd > 0 && nd < 64) {
        void *drivers[64];
        if (ze_drivers(&nd, drivers) == 0)
            for (uint32_t i = 0; i < nd; i++) {
                uint32_t n = 0;
                if (ze_devices(drivers[i], &n, NULL) == 0) *count += (int)n;
            }
    }
    /* stays loaded: driver loaders keep platform state for the process and are not made to be unloaded */
    return true;
}

static void detect_xpu(const char *scratch, const char *python, hv_tier_info *t) {
    if (hidden("ZE_AFFINITY_MASK")) {
        set_how(t, false, "hidden by ZE_AFFINITY_MASK in this environment");
        return;
    }
    char *out;
    if (probe("xpu-smi discovery 2>/dev/null", scratch, &out)) {
        bool any = strstr(out, "Device Name") || strstr(out, "Device ID");
        ut_free(out);
        if (any) {
            set_how(t, true, "xpu-smi discovery lists a GPU");
            return;
        }
    }
    int n = 0;
    bool loader = level_zero_gpus(&n);
    if (n > 0) {
        set_how(t, true, "Level Zero: %d GPU%s", n, n == 1 ? "" : "s");
        return;
    }
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "'%s' -c 'import torch,sys; sys.exit(0 if hasattr(torch, \"xpu\") and torch.xpu.is_available() else 3)' 2>/dev/null",
             python);
    if (probe(cmd, scratch, &out)) {
        ut_free(out);
        set_how(t, true, "torch.xpu.is_available() (%s)", python);
        return;
    }
    set_how(t, false, "no Intel GPU: xpu-smi found none, %s, torch.xpu (%s) is unavailable", loader ? "Level Zero reports no GPU" : "no Level Zero loader", python);
}

static void detect_mps(const char *scratch, const char *python, hv_tier_info *t) {
#ifdef __APPLE__
    char cmd[1024], *out;
    snprintf(cmd, sizeof cmd,
             "'%s' -c 'import torch,sys; sys.exit(0 if torch.backends.mps.is_available() else 3)' 2>/dev/null", python);
    if (probe(cmd, scratch, &out)) {
        ut_free(out);
        set_how(t, true, "torch.backends.mps.is_available() (%s)", python);
        return;
    }
    set_how(t, false, "torch.backends.mps is unavailable (%s)", python);
#else
    (void)scratch, (void)python;
    set_how(t, false, "MPS exists on macOS only");
#endif
}

/* An OpenCL platform with a device, through the ICD loader (libOpenCL.so.1) opened at run time. */
static void detect_opencl(hv_tier_info *t) {
    void *h = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        set_how(t, false, "no OpenCL ICD loader (libOpenCL.so.1)");
        return;
    }
    typedef int (*plat_fn)(uint32_t, void **, uint32_t *);
    typedef int (*pinfo_fn)(void *, uint32_t, size_t, void *, size_t *);
    typedef int (*dev_fn)(void *, uint64_t, uint32_t, void **, uint32_t *);
    plat_fn get_platforms = (plat_fn)dlsym(h, "clGetPlatformIDs");
    pinfo_fn platform_info = (pinfo_fn)dlsym(h, "clGetPlatformInfo");
    dev_fn get_devices = (dev_fn)dlsym(h, "clGetDeviceIDs");
    void *plats[16];
    uint32_t np = 0;
    int devices = 0;
    char first[128] = "";
    if (get_platforms && platform_info && get_devices && get_platforms(16, plats, &np) == 0) {
        for (uint32_t i = 0; i < np && i < 16; i++) {
            uint32_t nd = 0;
            if (get_devices(plats[i], 0xFFFFFFFFu /* CL_DEVICE_TYPE_ALL */, 0, NULL, &nd) != 0 || !nd) continue;
            if (!devices) platform_info(plats[i], 0x0902 /* CL_PLATFORM_NAME */, sizeof first - 1, first, NULL);
            devices += (int)nd;
        }
    }
    if (devices)
        set_how(t, true, "OpenCL: %u platform%s, %d device%s; first: %s", np, np == 1 ? "" : "s", devices,
                devices == 1 ? "" : "s", first);
    else
        set_how(t, false, "no OpenCL platform with a device (the ICD loader lists none)");
    /* stays loaded: driver loaders keep platform state for the process and are not made to be unloaded */
}

/* nvcc on PATH (the C tier builds the original and the CUDA backend with it) */
static bool have_nvcc(void) {
    const char *path = getenv("PATH");
    if (!path) return false;
    char *p = ut_strdup(path), *save = NULL;
    bool found = false;
    for (char *d = strtok_r(p, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
        char f[4096];
        snprintf(f, sizeof f, "%s/nvcc", *d ? d : ".");
        found = access(f, X_OK) == 0;
    }
    ut_free(p);
    return found;
}

void hv_tier_detect(const bool wanted[HV_TIER__COUNT], const char *scratch, const char *python,
                    hv_tier_info out[HV_TIER__COUNT]) {
    memset(out, 0, sizeof(hv_tier_info) * HV_TIER__COUNT);
    for (int i = 0; i < HV_TIER__COUNT; i++) {
        if (!wanted[i]) {
            set_how(&out[i], false, i == HV_TIER_OPENCL ? "not asked for (--devices ...,opencl: the C tier)" : "not asked for (--devices)");
            continue;
        }
        switch ((hv_tier)i) {
        case HV_TIER_CUDA: detect_cuda(scratch, &out[i]); break;
        case HV_TIER_XPU: detect_xpu(scratch, python, &out[i]); break;
        case HV_TIER_MPS: detect_mps(scratch, python, &out[i]); break;
        case HV_TIER_OPENCL: detect_opencl(&out[i]); break;
        default: set_how(&out[i], true, "always; accelerators hidden"); break;
        }
    }
    /* the C tier: the original and the CUDA backend need nvcc */
    if (wanted[HV_TIER_OPENCL] && wanted[HV_TIER_CUDA] && !have_nvcc()) {
        char *h = out[HV_TIER_CUDA].how;
        set_how(&out[HV_TIER_CUDA], false, "%s; nvcc is not on PATH (the original and the CUDA backend build with it)", h ? h : "");
    }
}

void hv_tier_c_build_env(hv_tier t, hv_proc_spec *s) {
    bool cl = t == HV_TIER_OPENCL;
    hv_proc_spec_env(s, "XPUIFY_GPU_BACKEND", cl ? "opencl" : "cuda");
    hv_proc_spec_env(s, "XPUIFY_CC", cl ? "c++ -x c++ -DXPU_BACKEND_OPENCL" : "nvcc");
    hv_proc_spec_env(s, "XPUIFY_LIBS", cl ? "-lOpenCL" : "");
}

void hv_tier_env(hv_tier t, hv_proc_spec *s) {
    /* hide the accelerators the tier is not about */
    if (t != HV_TIER_CUDA) {
        hv_proc_spec_env(s, "CUDA_VISIBLE_DEVICES", "");
        hv_proc_spec_env(s, "HIP_VISIBLE_DEVICES", "");
    }
    if (t != HV_TIER_XPU) hv_proc_spec_env(s, "ZE_AFFINITY_MASK", "");
    /* the compat helper takes the tier's device */
    hv_proc_spec_env(s, "XPUIFY_DEVICE", NAMES[t]);
    hv_proc_spec_env(s, "XPUIFY_VERIFY_TIER", NAMES[t]);
    if (t == HV_TIER_OPENCL) hv_proc_spec_env(s, "XPUIFY_GPU_BACKEND", "opencl");
}
