/* an_types: light intra-file type facts for Python receivers: is an expression known to be a torch tensor or
 * module? Known: results of torch factories and of torch.nn/torchvision classes, instances of classes this file
 * derives from torch.nn.Module, methods called on a known value (`x.float()`, `model.eval()`), names whose every
 * assignment in their scope is known, parameters annotated as tensors or modules, and the batches of a loop over
 * a DataLoader. Everything else is unknown. Read from the text (with the file's imports for aliases), so a file
 * parsed by regions gets the same answers as one parsed whole. */
#ifndef AN_TYPES_H
#define AN_TYPES_H
#include "analyzer/python/an_resolve.h"
#include <stdbool.h>
#include <stdint.h>

/* The facts of one file, kept between questions (the text and scope must outlive it). */
typedef struct an_types an_types;
an_types *an_types_new(const char *text, uint32_t len, const an_pyscope *scope);
void an_types_free(an_types *m);
/* The expression text[start, end) (the receiver of `.cuda()`), used at byte `at`, is a torch tensor or module. */
bool an_types_torch(an_types *m, uint32_t start, uint32_t end, uint32_t at);
/* The same, for one question (no facts kept). */
bool an_types_is_torch(const char *text, uint32_t len, const an_pyscope *scope, uint32_t start, uint32_t end,
                       uint32_t at);

/* Why a receiver that an_types_is_torch does not know may not be taken for a torch value (NULL: it may), as rule
 * XPU101's doc argues: the original calls `.cuda()` on it, and among objects with that method only a few are not
 * torch tensors or modules, or mean more by it than `.to(DEV)`: storages, imported modules (`tvm.cuda(0)`),
 * `cuda` overrides themselves, objects of libraries that the project or the file imports (outside a list of
 * libraries known to keep `.cuda()` and `.to()` alike), and classes of the project with a `cuda` method that
 * `.to()` may not replace (read from the project model of `path`). helper: the device helper's module name (its
 * import, which a fix may have added, is no library of that kind), or NULL. buf (cap bytes) may hold the reason. */
const char *an_types_unknown_risk(const char *text, uint32_t len, const an_pyscope *scope, uint32_t start,
                                  uint32_t end, uint32_t at, const char *path, const char *helper, char *buf, size_t cap);
/* The same, with the file's facts kept in m (the project's answers asked once per file). */
const char *an_types_risk(an_types *m, uint32_t start, uint32_t end, uint32_t at, const char *path, const char *helper,
                          char *buf, size_t cap);
/* What an_types_unknown_risk reads from the project of the file at path (the frameworks it imports, its first
 * `cuda` method that `.to()` may not replace, the set of its own module names), as a short text: the results cache
 * keys a file's findings with it, so that a change elsewhere in the project that changes a verdict is seen. */
void an_types_project_facts(const char *path, char *out, size_t n);
#endif
