/* an_cargs: the clang command line for one C/C++/CUDA file, and the unsaved files it needs: fast mode (a virtual
 * directory so that no include is followed, the generated declarations header), precise mode (flags of the
 * compilation database, the CUDA toolkit, the parse-only shim that lets clang 14 read CUDA 12/13 headers). */
#include "analyzer/c/an_cargs.h"
#include "analyzer/c/an_cdecls.h"
#include "analyzer/c/an_clang.h"
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define FAST_DIR "/xpuify-fast/"
#define SHIM_DIR "/xpuify-cudashim"

/* ---- process-wide state: warnings said once, the compilation database ---------------------------------------- */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bool warned_cuda, warned_db, warned_include;
#define AN_CARGS_MAX_INCLUDE (64ll << 20)
static char *db_dir;
static CXCompilationDatabase db;

static void warn_once(bool *flag, const char *fmt, const char *arg) {
    pthread_mutex_lock(&lock);
    bool say = !*flag;
    *flag = true;
    pthread_mutex_unlock(&lock);
    if (say) {
        fputs("xpuify: warning: ", stderr);
        fprintf(stderr, fmt, arg);
        fputc('\n', stderr);
    }
}

an_cmode an_cargs_mode(const char *path) {
    const char *dot = strrchr(path, '.');
    const char *slash = strrchr(path, '/');
    if (!dot || (slash && dot < slash)) return AN_CMODE_CXX;
    if (!strcmp(dot, ".c")) return AN_CMODE_C;
    if (!strcmp(dot, ".cu") || !strcmp(dot, ".cuh")) return AN_CMODE_CUDA;
    return AN_CMODE_CXX; /* .h too: CUDA projects' headers are C++ far more often than C */
}

static bool is_header(const char *path) {
    const char *dot = strrchr(path, '.');
    return dot && (!strcmp(dot, ".h") || !strcmp(dot, ".hpp") || !strcmp(dot, ".hh") || !strcmp(dot, ".hxx"));
}

static const char *cuda_root(const an_c_options *c) {
    static const char *const cands[] = {NULL, NULL, "/usr/local/cuda", "/opt/cuda", NULL};
    const char *list[5];
    memcpy(list, cands, sizeof list);
    list[0] = c->cuda_path;
    list[1] = getenv("CUDA_PATH");
    for (int i = 0; i < 4; i++) {
        if (!list[i] || !*list[i]) continue;
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/include/cuda_runtime_api.h", list[i]);
        if (access(p, R_OK) == 0) return list[i];
        if (i == 0) return NULL; /* an explicit --cuda-path that is wrong is not silently replaced */
    }
    return NULL;
}

/* The shim that lets clang 14 parse CUDA 12/13 headers (see docs: texture references are gone from CUDA 12 but
 * clang 14's wrapper still names them; a few intrinsics clang 14 does not declare). Parse-only: never compiled. */
static const char shim_sm61[] =
    "#include_next <sm_61_intrinsics.hpp>\n"
    "#ifndef __XPUIFY_SHIM_TEXTURE\n#define __XPUIFY_SHIM_TEXTURE\n"
    "template <class T, int dim = 1, enum cudaTextureReadMode mode = cudaReadModeElementType> struct texture {};\n"
    "template <class T> __device__ T __ldcs(const T *p);\ntemplate <class T> __device__ T __ldlu(const T *p);\n"
    "template <class T> __device__ T __ldcv(const T *p);\ntemplate <class T> __device__ void __stcs(T *p, T v);\n"
    "template <class T> __device__ void __stcg(T *p, T v);\ntemplate <class T> __device__ void __stwb(T *p, T v);\n"
    "template <class T> __device__ void __stwt(T *p, T v);\n"
    "__device__ unsigned __reduce_add_sync(unsigned, unsigned);\n__device__ unsigned __reduce_min_sync(unsigned, unsigned);\n"
    "__device__ unsigned __reduce_max_sync(unsigned, unsigned);\n__device__ unsigned __reduce_and_sync(unsigned, unsigned);\n"
    "__device__ unsigned __reduce_or_sync(unsigned, unsigned);\n__device__ unsigned __reduce_xor_sync(unsigned, unsigned);\n"
    "#endif\n";

/* ---- arguments ----------------------------------------------------------------------------------------------- */


static void add(an_cargs_strvec *v, const char *s) { ut_vec_push(v, ut_strdup(s)); }
static void addf(an_cargs_strvec *v, const char *fmt, const char *a) {
    char b[PATH_MAX + 64];
    snprintf(b, sizeof b, fmt, a);
    add(v, b);
}
static void strvec_free(an_cargs_strvec *v) {
    for (size_t i = 0; i < v->len; i++) ut_free(v->items[i]);
    ut_vec_free(v);
}

static void lang_args(an_cargs_strvec *a, an_cmode m) {
    add(a, "-x");
    add(a, m == AN_CMODE_C ? "c" : m == AN_CMODE_CXX ? "c++" : "cuda");
    add(a, m == AN_CMODE_C ? "-std=gnu11" : "-std=gnu++17");
}

/* Fast mode reads no file at all: the virtual directory keeps quoted and angled includes from resolving, but an
 * absolute path (`#include "/dev/zero"`, `"/dev/stdin"`, `"/etc/hostname"`) or one that climbs out of it
 * (`"../../etc/passwd"`) would still be opened, and a device or a pipe makes libclang read forever or block (the
 * LSP server's stdin is the protocol stream). A virtual file system overlay with no roots that does not fall
 * through to the real one makes every such include "file not found"; the unsaved files (the main file, the
 * declarations header) are remapped buffers and stay visible. clang reads an overlay from a path, so the YAML
 * lives in an anonymous memory file (no file is written) named through /proc/self/fd; where that is not possible
 * (no memfd, no /proc) fast mode parses without it, as before. Found while writing fuzz/fz_c. */
static pthread_once_t sealed_once = PTHREAD_ONCE_INIT;
static char sealed_path[64];

static void sealed_make(void) {
    static const char yaml[] = "{ 'version': 0, 'fallthrough': false, 'roots': [] }\n";
    int fd = memfd_create("xpuify-fast-vfs", MFD_CLOEXEC);
    if (fd < 0) return;
    char p[64];
    snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
    if (write(fd, yaml, sizeof yaml - 1) != (ssize_t)(sizeof yaml - 1) || access(p, R_OK) != 0) {
        close(fd);
        return;
    }
    memcpy(sealed_path, p, sizeof p); /* the descriptor stays open for the life of the process */
}

static const char *const common_args[] = {"-ferror-limit=0", "-w", "-fno-spell-checking", "-Qunused-arguments", NULL};

/* Flags of a compile command that shape parsing: include paths, macros, forced includes, the standard. Everything
 * else (code generation, nvcc's -gencode and the like) is dropped; relative paths are made absolute. Called with
 * `lock` held. */
static void translate_command(CXCompileCommand cmd, an_cargs_strvec *a) {
    char *dir = an_clang_take(CL(clang_CompileCommand_getDirectory)(cmd));
    unsigned n = CL(clang_CompileCommand_getNumArgs)(cmd);
    static const char *const path_flags[] = {"-I", "-isystem", "-iquote", "-idirafter", "-include", "-imacros",
                                             "--include-path", "--system-include", NULL};
    for (unsigned i = 1; i < n; i++) {
        char *arg = an_clang_take(CL(clang_CompileCommand_getArg)(cmd, i));
        bool taken = false;
        for (int k = 0; path_flags[k] && !taken; k++) {
            size_t fl = strlen(path_flags[k]);
            if (strncmp(arg, path_flags[k], fl)) continue;
            const char *val = NULL;
            char *next = NULL;
            if (arg[fl] == 0 && i + 1 < n) val = next = an_clang_take(CL(clang_CompileCommand_getArg)(cmd, ++i));
            else if (arg[fl] == '=' ) val = arg + fl + 1;
            else if (arg[fl] && k < 2 && !strncmp(path_flags[k], "-I", 2)) val = arg + fl;
            else if (arg[fl] && fl == 2) val = arg + fl;
            if (!val) continue;
            const char *flag = !strcmp(path_flags[k], "--include-path") ? "-I"
                             : !strcmp(path_flags[k], "--system-include") ? "-isystem" : path_flags[k];
            char p[PATH_MAX * 2];
            if (val[0] == '/' || !dir[0]) snprintf(p, sizeof p, "%s", val);
            else snprintf(p, sizeof p, "%s/%s", dir, val);
            /* a forced include is read whole by clang: a device or FIFO there (`-include /dev/zero`) would grow
             * memory without bound or block, so only a regular file of sane size is passed on */
            struct stat st;
            bool forced = !strcmp(flag, "-include") || !strcmp(flag, "-imacros");
            if (forced && (stat(p, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > AN_CARGS_MAX_INCLUDE)) {
                if (!warned_include) /* `lock` is held here (db_args): warn_once would take it again */
                    fprintf(stderr, "xpuify: warning: the compile database forces the inclusion of %s, which is not "
                                    "a regular file of at most 64 MiB; that flag is dropped\n", p);
                warned_include = true;
            } else {
                add(a, flag);
                add(a, p);
            }
            ut_free(next);
            taken = true;
        }
        if (!taken) {
            if ((!strncmp(arg, "-D", 2) || !strncmp(arg, "-U", 2)) && arg[2]) add(a, arg);
            else if ((!strcmp(arg, "-D") || !strcmp(arg, "-U") || !strcmp(arg, "--define-macro")) && i + 1 < n) {
                char *v = an_clang_take(CL(clang_CompileCommand_getArg)(cmd, ++i));
                addf(a, arg[1] == 'U' ? "-U%s" : "-D%s", v);
                ut_free(v);
            } else if (!strncmp(arg, "-std=", 5) || !strncmp(arg, "--std=", 6)) {
                addf(a, "-std=%s", strchr(arg, '=') + 1);
            } else if (!strcmp(arg, "--std") && i + 1 < n) {
                char *v = an_clang_take(CL(clang_CompileCommand_getArg)(cmd, ++i));
                addf(a, "-std=%s", v);
                ut_free(v);
            }
        }
        ut_free(arg);
    }
    ut_free(dir);
}

/* Compile-command flags for a file: its own entry, else one from the same directory, else the first (headers
 * have no entry of their own). false when there is no usable database. */
static bool db_args(const an_c_options *c, const char *abspath, an_cargs_strvec *a) {
    if (!c->compile_db) return false;
    bool ok = false;
    pthread_mutex_lock(&lock);
    if (!db_dir || strcmp(db_dir, c->compile_db)) {
        if (db) CL(clang_CompilationDatabase_dispose)(db);
        ut_free(db_dir);
        db_dir = ut_strdup(c->compile_db);
        CXCompilationDatabase_Error err;
        db = CL(clang_CompilationDatabase_fromDirectory)(db_dir, &err);
        if (err != CXCompilationDatabase_NoError) db = NULL;
    }
    if (!db) {
        pthread_mutex_unlock(&lock);
        warn_once(&warned_db, "%s: no compile_commands.json can be read there; precise mode uses default flags",
                  c->compile_db);
        return false;
    }
    CXCompileCommands cmds = CL(clang_CompilationDatabase_getCompileCommands)(db, abspath);
    if (!cmds || !CL(clang_CompileCommands_getSize)(cmds)) {
        if (cmds) CL(clang_CompileCommands_dispose)(cmds);
        cmds = CL(clang_CompilationDatabase_getAllCompileCommands)(db);
    }
    unsigned n = cmds ? CL(clang_CompileCommands_getSize)(cmds) : 0;
    if (n) {
        unsigned pick = 0;
        const char *slash = strrchr(abspath, '/');
        size_t dl = slash ? (size_t)(slash - abspath) : 0;
        for (unsigned i = 0; i < n; i++) {
            CXCompileCommand cmd = CL(clang_CompileCommands_getCommand)(cmds, i);
            unsigned na = CL(clang_CompileCommand_getNumArgs)(cmd);
            bool same = false;
            for (unsigned k = 0; k < na && !same; k++) {
                char *x = an_clang_take(CL(clang_CompileCommand_getArg)(cmd, k));
                same = dl && !strncmp(x, abspath, dl) && x[dl] == '/' && !strchr(x + dl + 1, '/');
                ut_free(x);
            }
            if (same) { pick = i; break; }
        }
        translate_command(CL(clang_CompileCommands_getCommand)(cmds, pick), a);
        ok = true;
    }
    if (cmds) CL(clang_CompileCommands_dispose)(cmds);
    pthread_mutex_unlock(&lock);
    return ok;
}

void an_cargs_free(an_cargs *s) {
    strvec_free(&s->args);
    ut_free(s->main_path);
    ut_free(s->header);
}

void an_cargs_build(const an_c_options *c, const an_catalog *cat, const char *path, const char *text, size_t len,
                    an_cargs *s) {
    memset(s, 0, sizeof *s);
    an_cmode m = an_cargs_mode(path);
    const char *cuda = NULL;
    if (c->mode == AN_C_PRECISE) {
        cuda = cuda_root(c);
        if (!cuda)
            warn_once(&warned_cuda, "%s; precise mode needs the CUDA headers: files are parsed in fast mode",
                      c->cuda_path ? "--cuda-path does not hold include/cuda_runtime_api.h"
                                       : "no CUDA toolkit found ($CUDA_PATH, /usr/local/cuda)");
    }
    if (cuda) {
        s->precise = true;
        /* headers are read the way the .cu files that include them are compiled (nvcc force-includes
         * cuda_runtime.h): a launcher.h that names cudaStream_t parses */
        if (m == AN_CMODE_CXX && is_header(path)) m = AN_CMODE_CUDA;
        char abs[PATH_MAX];
        s->main_path = ut_strdup(realpath(path, abs) ? abs : path);
        lang_args(&s->args, m);
        db_args(c, s->main_path, &s->args);
        if (m == AN_CMODE_CUDA) {
            add(&s->args, "--cuda-host-only");
            add(&s->args, "--cuda-gpu-arch=sm_80");
            addf(&s->args, "--cuda-path=%s", cuda);
            add(&s->args, "-I" SHIM_DIR);
            add(&s->args, "-Xclang");
            add(&s->args, "-fcuda-allow-variadic-functions");
        } else {
            add(&s->args, "-isystem");
            addf(&s->args, "%s/include", cuda);
        }
        add(&s->args, "-isystem");
        addf(&s->args, "%s/include/cccl", cuda);
    } else {
        /* a virtual directory: includes, even "local.h" ones, are not followed */
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        ut_buf p;
        ut_buf_init(&p);
        ut_buf_printf(&p, FAST_DIR "%s", base);
        s->main_path = ut_buf_take(&p);
        lang_args(&s->args, m);
        if (m == AN_CMODE_CUDA) {
            static const char *const cu[] = {"--cuda-host-only", "-nocudainc", "-nocudalib", "--cuda-gpu-arch=sm_80",
                                             "--cuda-path=" FAST_DIR "no-cuda", NULL};
            for (int i = 0; cu[i]; i++) add(&s->args, cu[i]);
        }
        add(&s->args, "-nostdinc");
        if (m != AN_CMODE_C) add(&s->args, "-nostdinc++");
        add(&s->args, "-include");
        add(&s->args, FAST_DIR "xpuify_decls.h");
        pthread_once(&sealed_once, sealed_make);
        if (sealed_path[0]) {
            add(&s->args, "-ivfsoverlay");
            add(&s->args, sealed_path);
        }
        ut_buf h;
        ut_buf_init(&h);
        an_cdecls_generate(cat, m, text, len, c->launch_calls, &h);
        s->header = ut_buf_take(&h);
    }
    for (int i = 0; common_args[i]; i++) add(&s->args, common_args[i]);
}

size_t an_cargs_unsaved(const an_cargs *s, const char *text, size_t len, struct CXUnsavedFile *uf) {
    size_t n = 0;
    uf[n++] = (struct CXUnsavedFile){s->main_path, text, len};
    if (s->header) {
        uf[n++] = (struct CXUnsavedFile){FAST_DIR "xpuify_decls.h", s->header, strlen(s->header)};
    } else {
        uf[n++] = (struct CXUnsavedFile){SHIM_DIR "/sm_61_intrinsics.hpp", shim_sm61, sizeof shim_sm61 - 1};
        uf[n++] = (struct CXUnsavedFile){SHIM_DIR "/texture_fetch_functions.h", "", 0};
    }
    return n;
}
