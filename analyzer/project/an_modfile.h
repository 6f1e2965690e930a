/* an_modfile: which file of the project a module name stands for, seen from a file that imports it: the
 * definitions behind `from pkg.mod import f`, `from .mod import f`, `import pkg.mod as m; m.f()` (a guard's callees,
 * an_guard). Absolute names are looked for under the import roots the project model gives the importing file (its
 * ways: package roots, its own directory when run as a script) and the project root; relative ones from the
 * importing file's package. Only files inside the project answer: a third-party or standard module is no file here. */
#ifndef AN_MODFILE_H
#define AN_MODFILE_H
#include "analyzer/project/an_project.h"
#include <stdbool.h>
#include <stddef.h>

/* The file (absolute path, into out) of module `dotted` ("a.b"; "" with level > 0: the package itself) imported
 * from `file` with `level` leading dots (0: absolute). p: the project model of file (NULL: relative names only).
 * false when no file of the project is that module (then out is empty). */
bool an_modfile_find(const an_project *p, const char *file, int level, const char *dotted, char *out, size_t n);
#endif
