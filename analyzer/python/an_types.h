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
#endif
