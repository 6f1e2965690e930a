/* fake_ze_loader: a stand-in for the oneAPI Level Zero loader (libze_loader.so.1) that records what the layer's
 * Level Zero backend asks of it, for tests/runtime/test_kernels_level_zero.py. No Intel GPU is reachable here, so a
 * fixed program built against libze-dev's headers is run with LD_LIBRARY_PATH pointing at this library instead.
 *
 * It is one device on the host: memory is malloc'd (copies and fills really happen), command lists execute what is
 * appended at once, events are always signalled. It CANNOT execute SPIR-V: a launched kernel does nothing, so the
 * program's results are not the kernel's; what it checks and records is the launch itself:
 *   - zeModuleCreate: the format is ZE_MODULE_FORMAT_IL_SPIRV, the input starts with the SPIR-V magic number; the
 *     module's entry points (OpEntryPoint) and their parameters (OpFunctionParameter types) are read from it;
 *   - zeKernelCreate: the name must be an entry point of the module;
 *   - zeKernelSetArgumentValue: the index must be a parameter of the kernel, the size that of the parameter's type
 *     (a CrossWorkgroup pointer 8 bytes, an integer or float its width), a Workgroup (__local) pointer takes a size
 *     and a NULL value;
 *   - zeCommandListAppendLaunchKernel: every argument set; one line with the group size, the group counts and each
 *     argument decoded by its SPIR-V type (a pointer named by the allocation it points into: dev1+0).
 * Everything goes to the file $FAKE_ZE_LOG (one line per call). $FAKE_ZE_BUILD_FAIL makes zeModuleCreate fail with
 * a build log. Written for these tests; the API is Level Zero 1.x's (libze-dev's ze_api.h). */
#include <level_zero/ze_api.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXP 64
typedef struct { int kind; unsigned width; } ptype; /* kind: 'i' int, 'f' float, 'g' global pointer, 'l' local pointer, '?' */
typedef struct { char name[256]; uint32_t fn; int np; ptype p[MAXP]; } entry;
struct _ze_module_handle_t { int n; entry *e; };
struct _ze_kernel_handle_t {
    entry *e;
    uint32_t gx, gy, gz;
    int set[MAXP];
    size_t size[MAXP];
    unsigned char val[MAXP][16];
};
struct _ze_command_list_handle_t { int id, sync; };
struct _ze_event_pool_handle_t { int unused; };
struct _ze_event_handle_t { int unused; };
struct _ze_module_build_log_handle_t { const char *text; };
static int driver_, device_, context_;

typedef struct { char *p; size_t n; char kind; int id; } alloc;
static alloc allocs[4096];
static int nallocs, ndev, nhost, nlists;

static void logf_(const char *fmt, ...) {
    const char *path = getenv("FAKE_ZE_LOG");
    FILE *f = path ? fopen(path, "a") : NULL;
    if (!f) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fputc('\n', f);
    fclose(f);
}

ze_result_t zeInit(ze_init_flags_t flags) { logf_("zeInit flags=%u", (unsigned)flags); return ZE_RESULT_SUCCESS; }
ze_result_t zeDriverGet(uint32_t *n, ze_driver_handle_t *d) {
    if (d && *n) d[0] = (ze_driver_handle_t)&driver_;
    *n = 1;
    return ZE_RESULT_SUCCESS;
}
ze_result_t zeDeviceGet(ze_driver_handle_t drv, uint32_t *n, ze_device_handle_t *d) {
    (void)drv;
    if (d && *n) d[0] = (ze_device_handle_t)&device_;
    *n = 1;
    return ZE_RESULT_SUCCESS;
}
ze_result_t zeContextCreate(ze_driver_handle_t d, const ze_context_desc_t *cd, ze_context_handle_t *c) {
    (void)d, (void)cd;
    *c = (ze_context_handle_t)&context_;
    return ZE_RESULT_SUCCESS;
}
ze_result_t zeDeviceGetProperties(ze_device_handle_t d, ze_device_properties_t *p) {
    (void)d;
    ze_structure_type_t st = p->stype;
    memset(p, 0, sizeof *p);
    p->stype = st;
    p->type = ZE_DEVICE_TYPE_GPU;
    snprintf(p->name, sizeof p->name, "fake Level Zero device (records launches, runs nothing)");
    p->timerResolution = 1;
    p->timestampValidBits = 64;
    return ZE_RESULT_SUCCESS;
}
ze_result_t zeDeviceGetComputeProperties(ze_device_handle_t d, ze_device_compute_properties_t *p) {
    (void)d;
    p->maxTotalGroupSize = 1024;
    p->maxGroupSizeX = p->maxGroupSizeY = p->maxGroupSizeZ = 1024;
    p->maxGroupCountX = p->maxGroupCountY = p->maxGroupCountZ = 0xffffffffu;
    p->maxSharedLocalMemory = 65536;
    return ZE_RESULT_SUCCESS;
}
ze_result_t zeDeviceGetMemoryProperties(ze_device_handle_t d, uint32_t *n, ze_device_memory_properties_t *p) {
    (void)d, (void)p;
    *n = 0;
    return ZE_RESULT_SUCCESS;
}

/* ---- memory: host memory standing in for device memory ---- */
static ze_result_t new_alloc(size_t n, char kind, void **out) {
    if (nallocs == (int)(sizeof allocs / sizeof *allocs)) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    char *p = (char *)calloc(1, n ? n : 1);
    if (!p) return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
    alloc a = {p, n, kind, kind == 'd' ? ++ndev : ++nhost};
    allocs[nallocs++] = a;
    logf_("alloc %s%d size=%zu", kind == 'd' ? "dev" : "host", a.id, n);
    *out = p;
    return ZE_RESULT_SUCCESS;
}
ze_result_t zeMemAllocDevice(ze_context_handle_t c, const ze_device_mem_alloc_desc_t *d, size_t n, size_t align,
                             ze_device_handle_t dev, void **out) {
    (void)c, (void)d, (void)align, (void)dev;
    return new_alloc(n, 'd', out);
}
ze_result_t zeMemAllocHost(ze_context_handle_t c, const ze_host_mem_alloc_desc_t *d, size_t n, size_t align, void **out) {
    (void)c, (void)d, (void)align;
    return new_alloc(n, 'h', out);
}
ze_result_t zeMemAllocShared(ze_context_handle_t c, const ze_device_mem_alloc_desc_t *dd, const ze_host_mem_alloc_desc_t *hd,
                             size_t n, size_t align, ze_device_handle_t dev, void **out) {
    (void)c, (void)dd, (void)hd, (void)align, (void)dev;
    return new_alloc(n, 'h', out);
}
ze_result_t zeMemFree(ze_context_handle_t c, void *p) {
    (void)c;
    for (int i = 0; i < nallocs; i++)
        if (allocs[i].p == p) { /* kept in the table (a later pointer may not reuse its name); the memory is freed */
            free(p);
            allocs[i].p = NULL;
            return ZE_RESULT_SUCCESS;
        }
    logf_("error: zeMemFree of %p, which is no allocation", p);
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
}
static void name_ptr(const void *p, char *buf, size_t sz) {
    if (!p) { snprintf(buf, sz, "null"); return; }
    for (int i = 0; i < nallocs; i++)
        if (allocs[i].p && (const char *)p >= allocs[i].p && (const char *)p <= allocs[i].p + allocs[i].n) {
            snprintf(buf, sz, "%s%d+%zu", allocs[i].kind == 'd' ? "dev" : "host", allocs[i].id, (size_t)((const char *)p - allocs[i].p));
            return;
        }
    snprintf(buf, sz, "unknown(%p)", p);
}

/* ---- command lists: immediate, executed as appended ---- */
ze_result_t zeCommandListCreateImmediate(ze_context_handle_t c, ze_device_handle_t d, const ze_command_queue_desc_t *qd,
                                         ze_command_list_handle_t *out) {
    (void)c, (void)d;
    struct _ze_command_list_handle_t *l = (struct _ze_command_list_handle_t *)calloc(1, sizeof *l);
    l->id = ++nlists;
    l->sync = qd->mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS;
    logf_("list %d %s", l->id, l->sync ? "synchronous" : "asynchronous");
    *out = l;
    return ZE_RESULT_SUCCESS;
}
ze_result_t zeCommandListDestroy(ze_command_list_handle_t l) { free(l); return ZE_RESULT_SUCCESS; }
ze_result_t zeCommandListAppendMemoryCopy(ze_command_list_handle_t l, void *dst, const void *src, size_t n, ze_event_handle_t ev,
                                          uint32_t nw, ze_event_handle_t *w) {
    (void)ev, (void)nw, (void)w;
    char a[64], b[64];
    name_ptr(dst, a, sizeof a), name_ptr(src, b, sizeof b);
    logf_("copy list=%d %s <- %s size=%zu", l->id, a, b, n);
    memmove(dst, src, n);
    return ZE_RESULT_SUCCESS;
}
ze_result_t zeCommandListAppendMemoryFill(ze_command_list_handle_t l, void *p, const void *pat, size_t ps, size_t n,
                                          ze_event_handle_t ev, uint32_t nw, ze_event_handle_t *w) {
    (void)l, (void)ev, (void)nw, (void)w;
    for (size_t i = 0; i < n; i++) ((char *)p)[i] = ((const char *)pat)[i % ps];
    return ZE_RESULT_SUCCESS;
}
ze_result_t zeCommandListAppendMemoryPrefetch(ze_command_list_handle_t l, const void *p, size_t n) { (void)l, (void)p, (void)n; return ZE_RESULT_SUCCESS; }
ze_result_t zeCommandListAppendSignalEvent(ze_command_list_handle_t l, ze_event_handle_t e) { (void)l, (void)e; return ZE_RESULT_SUCCESS; }
ze_result_t zeCommandListAppendWaitOnEvents(ze_command_list_handle_t l, uint32_t n, ze_event_handle_t *e) {
    (void)e;
    logf_("wait list=%d events=%u", l->id, n);
    return ZE_RESULT_SUCCESS;
}
static uint64_t clock_;
ze_result_t zeCommandListAppendWriteGlobalTimestamp(ze_command_list_handle_t l, uint64_t *dst, ze_event_handle_t ev, uint32_t nw,
                                                    ze_event_handle_t *w) {
    (void)l, (void)ev, (void)nw, (void)w;
    *dst = clock_ += 1000;
    return ZE_RESULT_SUCCESS;
}

/* ---- events: always signalled ---- */
ze_result_t zeEventPoolCreate(ze_context_handle_t c, const ze_event_pool_desc_t *d, uint32_t n, ze_device_handle_t *dev,
                              ze_event_pool_handle_t *out) {
    (void)c, (void)d, (void)n, (void)dev;
    *out = (ze_event_pool_handle_t)calloc(1, sizeof(struct _ze_event_pool_handle_t));
    return ZE_RESULT_SUCCESS;
}
ze_result_t zeEventPoolDestroy(ze_event_pool_handle_t p) { free(p); return ZE_RESULT_SUCCESS; }
ze_result_t zeEventCreate(ze_event_pool_handle_t p, const ze_event_desc_t *d, ze_event_handle_t *out) {
    (void)p, (void)d;
    *out = (ze_event_handle_t)calloc(1, sizeof(struct _ze_event_handle_t));
    return ZE_RESULT_SUCCESS;
}
ze_result_t zeEventDestroy(ze_event_handle_t e) { free(e); return ZE_RESULT_SUCCESS; }
ze_result_t zeEventHostReset(ze_event_handle_t e) { (void)e; return ZE_RESULT_SUCCESS; }
ze_result_t zeEventHostSynchronize(ze_event_handle_t e, uint64_t t) { (void)e, (void)t; return ZE_RESULT_SUCCESS; }
ze_result_t zeEventQueryStatus(ze_event_handle_t e) { (void)e; return ZE_RESULT_SUCCESS; }

/* ---- modules: SPIR-V read for its entry points and their parameter types ---- */
static const char *build_log_text = "fake loader: FAKE_ZE_BUILD_FAIL is set: error: this module was refused on purpose";

static void parse_spirv(const uint32_t *w, size_t nw, struct _ze_module_handle_t *m) {
    enum { ENTRY = 15, TINT = 21, TFLOAT = 22, TPTR = 32, FUNC = 54, FPARAM = 55 };
    static ptype types[1 << 16];
    static unsigned char known[1 << 16];
    memset(known, 0, sizeof known);
    m->e = (entry *)calloc(256, sizeof *m->e);
    entry *cur = NULL;
    for (size_t i = 5; i < nw;) {
        uint32_t n = w[i] >> 16, op = w[i] & 0xffff;
        if (!n || i + n > nw) break;
        const uint32_t *a = w + i + 1;
        if (op == ENTRY && m->n < 256 && n >= 4) {
            entry *e = &m->e[m->n++];
            e->fn = a[1];
            snprintf(e->name, sizeof e->name, "%s", (const char *)(a + 2));
        } else if ((op == TINT || op == TFLOAT) && a[0] < (1u << 16)) {
            known[a[0]] = 1, types[a[0]].kind = op == TINT ? 'i' : 'f', types[a[0]].width = a[1];
        } else if (op == TPTR && a[0] < (1u << 16)) {
            known[a[0]] = 1, types[a[0]].kind = a[1] == 4 ? 'l' : 'g', types[a[0]].width = 64;
        } else if (op == FUNC) {
            cur = NULL;
            for (int k = 0; k < m->n; k++)
                if (m->e[k].fn == a[1]) cur = &m->e[k];
        } else if (op == FPARAM && cur && cur->np < MAXP) {
            ptype t = {'?', 0};
            if (a[0] < (1u << 16) && known[a[0]]) t = types[a[0]];
            cur->p[cur->np++] = t;
        }
        i += n;
    }
}
ze_result_t zeModuleCreate(ze_context_handle_t c, ze_device_handle_t d, const ze_module_desc_t *md, ze_module_handle_t *out,
                           ze_module_build_log_handle_t *log) {
    (void)c, (void)d;
    if (log) *log = NULL;
    if (md->format != ZE_MODULE_FORMAT_IL_SPIRV) { logf_("error: module format %d is not IL_SPIRV", (int)md->format); return ZE_RESULT_ERROR_INVALID_ENUMERATION; }
    const uint32_t *w = (const uint32_t *)md->pInputModule;
    if (md->inputSize < 20 || md->inputSize % 4 || w[0] != 0x07230203u) {
        logf_("error: module of %zu bytes without the SPIR-V magic number", md->inputSize);
        return ZE_RESULT_ERROR_INVALID_NATIVE_BINARY;
    }
    if (getenv("FAKE_ZE_BUILD_FAIL")) {
        if (log) {
            struct _ze_module_build_log_handle_t *l = (struct _ze_module_build_log_handle_t *)calloc(1, sizeof *l);
            l->text = build_log_text;
            *log = l;
        }
        logf_("module build failed on purpose");
        return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
    }
    struct _ze_module_handle_t *m = (struct _ze_module_handle_t *)calloc(1, sizeof *m);
    parse_spirv(w, md->inputSize / 4, m);
    char names[4096] = "";
    for (int k = 0; k < m->n; k++) {
        size_t l = strlen(names);
        snprintf(names + l, sizeof names - l, "%s%s(%d)", k ? "," : "", m->e[k].name, m->e[k].np);
    }
    logf_("module spirv version=%u.%u bytes=%zu flags=\"%s\" entry-points=%s", (w[1] >> 16) & 0xff, (w[1] >> 8) & 0xff, md->inputSize,
          md->pBuildFlags ? md->pBuildFlags : "(null)", names);
    if (log) {
        struct _ze_module_build_log_handle_t *l = (struct _ze_module_build_log_handle_t *)calloc(1, sizeof *l);
        l->text = "";
        *log = l;
    }
    *out = m;
    return ZE_RESULT_SUCCESS;
}
ze_result_t zeModuleDestroy(ze_module_handle_t m) { free(m->e); free(m); return ZE_RESULT_SUCCESS; }
ze_result_t zeModuleBuildLogGetString(ze_module_build_log_handle_t l, size_t *n, char *out) {
    size_t need = strlen(l->text) + 1;
    if (!out) { *n = need; return ZE_RESULT_SUCCESS; }
    if (*n < need) return ZE_RESULT_ERROR_INVALID_SIZE;
    memcpy(out, l->text, need);
    return ZE_RESULT_SUCCESS;
}
ze_result_t zeModuleBuildLogDestroy(ze_module_build_log_handle_t l) { free(l); return ZE_RESULT_SUCCESS; }

/* ---- kernels ---- */
ze_result_t zeKernelCreate(ze_module_handle_t m, const ze_kernel_desc_t *kd, ze_kernel_handle_t *out) {
    for (int k = 0; k < m->n; k++)
        if (!strcmp(m->e[k].name, kd->pKernelName)) {
            struct _ze_kernel_handle_t *h = (struct _ze_kernel_handle_t *)calloc(1, sizeof *h);
            h->e = &m->e[k];
            logf_("kernel %s", kd->pKernelName);
            *out = h;
            return ZE_RESULT_SUCCESS;
        }
    logf_("error: no kernel %s in the module", kd->pKernelName);
    return ZE_RESULT_ERROR_INVALID_KERNEL_NAME;
}
ze_result_t zeKernelDestroy(ze_kernel_handle_t k) { free(k); return ZE_RESULT_SUCCESS; }
ze_result_t zeKernelSetGroupSize(ze_kernel_handle_t k, uint32_t x, uint32_t y, uint32_t z) {
    if (!x || !y || !z || (uint64_t)x * y * z > 1024) { logf_("error: group size %u %u %u", x, y, z); return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION; }
    k->gx = x, k->gy = y, k->gz = z;
    return ZE_RESULT_SUCCESS;
}
ze_result_t zeKernelSetArgumentValue(ze_kernel_handle_t k, uint32_t i, size_t size, const void *v) {
    entry *e = k->e;
    if ((int)i >= e->np) { logf_("error: %s: argument %u of %d", e->name, i, e->np); return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX; }
    ptype t = e->p[i];
    if (t.kind == 'l') {
        if (v || !size) { logf_("error: %s: argument %u is __local: a size and no value", e->name, i); return ZE_RESULT_ERROR_INVALID_ARGUMENT; }
    } else if (!v || size != t.width / 8 || size > 16) {
        logf_("error: %s: argument %u: size %zu for a parameter of %u bits", e->name, i, size, t.width);
        return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
    }
    k->set[i] = 1, k->size[i] = size;
    if (v) memcpy(k->val[i], v, size);
    return ZE_RESULT_SUCCESS;
}
ze_result_t zeCommandListAppendLaunchKernel(ze_command_list_handle_t l, ze_kernel_handle_t k, const ze_group_count_t *g,
                                            ze_event_handle_t ev, uint32_t nw, ze_event_handle_t *w) {
    (void)ev, (void)nw, (void)w;
    entry *e = k->e;
    char args[4096] = "";
    for (int i = 0; i < e->np; i++) {
        if (!k->set[i]) { logf_("error: %s: argument %d not set at launch", e->name, i); return ZE_RESULT_ERROR_INVALID_ARGUMENT; }
        char v[96];
        const unsigned char *b = k->val[i];
        ptype t = e->p[i];
        if (t.kind == 'l') snprintf(v, sizeof v, "local %zu", k->size[i]);
        else if (t.kind == 'g') { void *p; memcpy(&p, b, sizeof p); char n[64]; name_ptr(p, n, sizeof n); snprintf(v, sizeof v, "global %s", n); }
        else if (t.kind == 'f' && t.width == 32) { float f; memcpy(&f, b, 4); snprintf(v, sizeof v, "f32 %.9g", f); }
        else if (t.kind == 'f' && t.width == 64) { double f; memcpy(&f, b, 8); snprintf(v, sizeof v, "f64 %.17g", f); }
        else if (t.kind == 'i' && t.width == 64) { int64_t x; memcpy(&x, b, 8); snprintf(v, sizeof v, "i64 %lld", (long long)x); }
        else if (t.kind == 'i' && t.width == 32) { int32_t x; memcpy(&x, b, 4); snprintf(v, sizeof v, "i32 %d", x); }
        else if (t.kind == 'i' && t.width == 8) snprintf(v, sizeof v, "i8 %d", (int)b[0]);
        else snprintf(v, sizeof v, "?%u", t.width);
        size_t n = strlen(args);
        snprintf(args + n, sizeof args - n, "%s%s", i ? ", " : "", v);
    }
    logf_("launch %s list=%d group=(%u,%u,%u) count=(%u,%u,%u) args=[%s]", e->name, l->id, k->gx, k->gy, k->gz, g->groupCountX,
          g->groupCountY, g->groupCountZ, args);
    return ZE_RESULT_SUCCESS;
}

/* the rest of what the layer may call */
ze_result_t zeDeviceCanAccessPeer(ze_device_handle_t a, ze_device_handle_t b, ze_bool_t *v) { (void)a, (void)b; *v = 0; return ZE_RESULT_SUCCESS; }
ze_result_t zeDriverGetProperties(ze_driver_handle_t d, ze_driver_properties_t *p) { (void)d; p->driverVersion = 1; return ZE_RESULT_SUCCESS; }
ze_result_t zeDriverGetApiVersion(ze_driver_handle_t d, ze_api_version_t *v) { (void)d; *v = ZE_API_VERSION_1_0; return ZE_RESULT_SUCCESS; }
ze_result_t zeMemGetAllocProperties(ze_context_handle_t c, const void *p, ze_memory_allocation_properties_t *mp, ze_device_handle_t *d) {
    (void)c;
    mp->type = ZE_MEMORY_TYPE_UNKNOWN;
    for (int i = 0; i < nallocs; i++)
        if (allocs[i].p && (const char *)p >= allocs[i].p && (const char *)p < allocs[i].p + allocs[i].n)
            mp->type = allocs[i].kind == 'd' ? ZE_MEMORY_TYPE_DEVICE : ZE_MEMORY_TYPE_HOST;
    if (d) *d = (ze_device_handle_t)&device_;
    return ZE_RESULT_SUCCESS;
}
