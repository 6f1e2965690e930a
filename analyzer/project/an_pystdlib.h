/* an_pystdlib: the top-level module names of Python's standard library. An absolute import of one of them means the
 * standard library's module, not a directory of the project that happens to share its name (dinov2's
 * `dinov2/logging` package is `dinov2.logging`; its files' `import logging` is the standard library's). */
#ifndef AN_PYSTDLIB_H
#define AN_PYSTDLIB_H
#include <stdbool.h>
#include <stddef.h>

/* Whether the dotted name s[0..n) starts with a standard-library module ("logging", "os.path"). */
bool an_pystdlib_module(const char *s, size_t n);
#endif
