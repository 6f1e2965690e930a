/* an_cargs: the clang command line for one C/C++/CUDA file (fast or precise mode) and the unsaved files (the
 * generated declarations, the CUDA shim) it needs. */
#ifndef AN_CARGS_H
#define AN_CARGS_H
#include "analyzer/c/an_c.h"
#include "analyzer/c/an_cdecls.h"
#include <clang-c/Index.h>

typedef UT_VEC(char *) an_cargs_strvec;

typedef struct {
    an_cargs_strvec args;
    char *main_path; /* the path clang sees: the real one (precise) or one in a virtual directory (fast) */
    char *header;    /* fast mode: the generated declarations (force-included) */
    bool precise;    /* false also when precise mode was asked for but no CUDA toolkit was found */
} an_cargs;

#define AN_CARGS_MAX_UNSAVED 3

/* The language a path is parsed as (C, C++, CUDA). */
an_cmode an_cargs_mode(const char *path);
void an_cargs_build(const an_c_options *opt, const an_catalog *cat, const char *path, const char *text, size_t len,
                    an_cargs *out);
void an_cargs_free(an_cargs *a);
/* Fills uf (AN_CARGS_MAX_UNSAVED entries) with the main file's text and the files the arguments name. */
size_t an_cargs_unsaved(const an_cargs *a, const char *text, size_t len, struct CXUnsavedFile *uf);
#endif
