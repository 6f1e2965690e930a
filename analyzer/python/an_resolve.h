/* an_resolve: Python name resolution: which qualified name (torch.cuda.synchronize) an identifier or a dotted
 * attribute chain stands for, through the file's imports (every scope, like TorchFix). */
#ifndef AN_RESOLVE_H
#define AN_RESOLVE_H
#include "util/ut_buf.h"
#include "util/ut_mem.h"
#include "analyzer/python/an_pynodes.h"
#include <tree_sitter/api.h>

typedef struct {
    char *local;       /* the name bound in the file */
    char *qual;        /* what it stands for */
    uint32_t start;    /* byte range of the import's name node */
    uint32_t end;
    bool in_fallback;  /* inside an `except` clause (try/except ImportError fallbacks) */
    bool module;       /* bound by `import a.b [as x]` (a module object), not by `from m import x` */
} an_binding;

/* A function or lambda (byte range) with a parameter of that name: the name means the parameter inside it. */
typedef struct {
    char *name;
    uint32_t start, end;
} an_shadow;

typedef struct {
    UT_VEC(an_binding) bindings;
    UT_VEC(char *) stars;  /* modules imported with `from M import *` */
    UT_VEC(char *) agnostic_names; /* `use_accel = torch.accelerator.is_available()`: names holding a device probe */
    UT_VEC(an_shadow) shadows; /* sorted by (name, start); per name disjoint (nested ranges merged) */
} an_pyscope;

void an_pyscope_collect(an_pyscope *sc, TSNode root, const char *src);
/* The same from the tree's node index (an_pynodes), built once for every collector */
void an_pyscope_collect_nodes(an_pyscope *sc, const an_pynodes *nodes, const char *src);
/* The same facts, reusing those of top-level statements whose text the cache saw in the last collection (an
 * editor buffer re-collects after every keystroke; only the statements that changed are walked). The cache keeps
 * the statements of the last collection only. */
typedef struct an_pyscope_cache an_pyscope_cache;
an_pyscope_cache *an_pyscope_cache_new(void);
void an_pyscope_cache_free(an_pyscope_cache *c);
void an_pyscope_collect_cached(an_pyscope *sc, TSNode root, const char *src, an_pyscope_cache *cache);
void an_pyscope_free(an_pyscope *sc);
/* What a local name stands for: NULL when unbound or when its imports disagree. *bound says whether any import
 * binds it. */
const char *an_pyscope_lookup(const an_pyscope *sc, const char *name, size_t n, bool *bound);
/* Qualified name of an identifier or a pure attribute chain (a.b.c); false otherwise. Unbound roots stand for
 * themselves, so `torch.cuda.x` resolves without an import. */
bool an_pyscope_qualname(const an_pyscope *sc, TSNode node, const char *src, ut_buf *out);
/* A condition or value that already considers XPU: the word `xpu` (also `is_xpu`, `RNGType.XPU`), the word `sycl`
 * (`SYCL_HOME`, `use_sycl`), SyclExtension, torch.accelerator, get_device_module. */
bool an_py_mentions_agnostic(const char *s, size_t n);
/* w (lower case) in s[0..n) as a word or a part of an identifier split by `_` or `.`, in any case (`use_cuda`,
 * `DeviceType.CUDA`, `"CUDA"`) */
bool an_py_word_part(const char *s, size_t n, const char *w);
/* true when an enclosing function or lambda has a parameter with the identifier's name (a binary search over
 * the ranges an_pyscope_collect recorded: no walk up the tree, which is quadratic in the nesting depth) */
bool an_pyscope_shadowed(const an_pyscope *sc, TSNode id, const char *src);
#endif
