/* an_project: the project model: how each Python file of a project is imported (the import roots its own absolute
 * imports imply, __init__.py chains, namespace packages, scripts run from their directory, exec-loaded config
 * files), and from it where the compat device helper goes and the statement that imports it into each file.
 * Built once per project root from a cheap byte scan of every .py file's import lines; read-only after, so the
 * fix workers share it. Used by check, fix, verify and the LSP (through cli_target). */
#ifndef AN_PROJECT_H
#define AN_PROJECT_H
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

typedef struct an_project an_project;

/* Builds the model of the project whose root is the directory `root` (every .py file below it is scanned). */
an_project *an_project_new(const char *root);
void an_project_free(an_project *p);
struct an_cache;
/* Keeps each file's import summary in the results cache c (NULL: none) under the file's stamp, so that a later run
 * builds the model without reading unchanged files. c must outlive its use: pass NULL before freeing it. */
void an_project_use_cache(struct an_cache *c);
/* Declares `dir` a project root for an_project_shared (the directory check/fix was given); nothing is read yet. */
void an_project_hint_root(const char *dir);
/* The shared model of the project holding `file`: the nearest ancestor with .git, setup.py, pyproject.toml or
 * setup.cfg, else the working directory when it holds the file, else the innermost hinted root above it, else the
 * file's directory. Built on first use; thread-safe; lives until exit. NULL only when nothing can be read. */
const an_project *an_project_shared(const char *file);
/* Forgets every shared model and what was learnt of the file system (roots, __init__.py files, real paths), so
 * that the next an_project_shared rebuilds from the files as they are now (the language server, after a change
 * of a file that the model reads). Files' summaries are kept: their stamps say whether they still hold. Not to be
 * called while another thread uses a model. */
void an_project_refresh(void);
/* Changes each time an_project_refresh or an_project_overlay runs: what was learnt from the models before (callee
 * verdicts kept per thread, an_guard) holds only while it is the same. */
uint64_t an_project_generation(void);
/* The language server: the text of an open, maybe unsaved, buffer stands for its file in the models built from
 * now on (text NULL: the file on disk again, when the buffer is closed). True when the models were built from
 * other imports for it: an_project_refresh then brings them up to date. */
bool an_project_overlay(const char *file, const char *text, size_t len);
/* The text of the open buffer that stands for `file` (heap, NUL-terminated, *len its length), or NULL when no
 * buffer does (the file on disk is the file). */
char *an_project_overlay_text(const char *file, size_t *len);
/* A file created, changed or deleted on disk: true when the models may be out of date (an __init__.py, packaging
 * metadata, a directory, a module added or gone, or other imports in a module that no buffer stands for). */
bool an_project_file_changed(const char *file);
const char *an_project_root(const an_project *p);
/* How many .py files the model scanned (for tests and the harness). */
size_t an_project_file_count(const an_project *p);

/* Some file of the project imports `name` (a dotted module name, or a prefix of one) absolutely. */
bool an_project_imports(const an_project *p, const char *name);
/* `name` (n bytes) is a directory or a .py file stem somewhere in the project: a module of its own. */
bool an_project_own_module(const an_project *p, const char *name, size_t n);
/* "path:line" (relative to the root) of the first `def cuda` of a class that does more than move what `.to()` moves
 * too (`self.x.cuda()`, `super().cuda(...)`, `return self`); NULL when there is none. */
const char *an_project_cuda_unlike_to(const an_project *p);
/* Its setup.py builds a CUDA extension (`CUDAExtension`): its compiled ops have CPU and CUDA kernels and none for XPU
 * or MPS (pytorch_cluster, pytorch_scatter, detectron2). */
bool an_project_builds_cuda_extension(const an_project *p);
/* `dotted` (n bytes) is the module name of an extension some setup.py of the project builds with CUDA
 * (`CUDAExtension("dynamicconv_cuda", ...)`, a CppExtension with .cu sources: fairseq's `fairseq.ngram_repeat_block_cuda`),
 * and a hash of the set of those names (for the results cache's key). */
bool an_project_cuda_extension_module(const an_project *p, const char *dotted, size_t n);
uint64_t an_project_cuda_extensions_hash(const an_project *p);
/* A hash of the set of the project's own module names (an_project_own_module's answers): changes when a directory or
 * .py file is added, removed or renamed. */
uint64_t an_project_own_modules_hash(const an_project *p);

typedef enum {
    AN_WAY_PACKAGE, /* imported as a package module (root, dotted module name) */
    AN_WAY_SCRIPT,  /* run or imported from its own directory (sys.path[0]) */
    AN_WAY_EXEC     /* exec-loaded (a config file nobody imports, made only of assignments) */
} an_way_kind;

typedef struct {
    an_way_kind kind;
    char root[1024];   /* the import root (absolute); the file's directory for a script */
    char module[512];  /* the dotted name from that root */
    const char *why;   /* how the model knows: "imported as ...", "__init__.py chain", ... */
} an_way;

/* Whether some file of the project imports `file` absolutely, by its package module name or its bare name (true
 * when nothing is known). */
bool an_project_module_imported(const an_project *p, const char *file);
/* The ways `file` is imported; returns how many were written to out (at most n). */
size_t an_project_ways(const an_project *p, const char *file, an_way *out, size_t n);

typedef struct {
    char *path;     /* where the helper module goes (relative to the working directory when under it); NULL: none */
    char *import;   /* the statement that imports it into the file (for a module both imported from its package
                     * and run by path, the guarded fallback AN_HELPER_FALLBACK, several lines); NULL when withheld */
    char *withheld; /* why no import of the helper works in this file (its fixes that need it are withheld) */
} an_helper_place;

/* Where the helper named `module` goes for `file` and how the file imports it. forced: --helper-path (then the
 * import is `import <module>`). p may be NULL (the file's directory and __init__.py chain alone decide). */
void an_project_helper_place(const an_project *p, const char *file, const char *module, const char *forced,
                             an_helper_place *out);
void an_helper_place_free(an_helper_place *h);

/* The import of the helper (module named twice) in a module that is imported from its package and also run by path
 * (`python pkg/tool.py`, `python -m tool` from its directory): the relative import reaches the copy beside the file
 * when there is a parent package; without one it raises ImportError, and the file's directory, first on sys.path,
 * holds that same copy. */
#define AN_HELPER_FALLBACK                                                                                             \
    "try:\n"                                                                                                           \
    "    from . import %s\n"                                                                                           \
    "except ImportError:  # run by path (no parent package): the copy beside this file\n"                              \
    "    import %s"

/* Does text hold the helper import `import` (as an_project_helper_place wrote it), whatever its line endings? */
bool an_helper_import_in(const char *text, size_t len, const char *import);
#endif
