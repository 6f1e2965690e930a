/* an_capi: what a C header declares, read with libclang: functions, types, enums and their enumerators, macros.
 * The API tables are checked against it (tests/unit/test_capi.c) and bench/tools use it to report coverage. */
#ifndef AN_CAPI_H
#define AN_CAPI_H
#include "analyzer/core/an_rule.h"

typedef struct {
    an_api_kind kind; /* FUNCTION, TYPE, ENUM, ENUMERATOR (also object-like macros), MACRO (function-like) */
    char *name;
    char *parent;     /* enumerators: their enum (or typedef) name */
} an_capi_decl;

typedef UT_VEC(an_capi_decl) an_capi_decls;

/* Declarations spelled in `header` (an absolute path), parsed as C++17 with the include directories given.
 * Returns false (and a heap message in *why) when libclang or the header is missing. */
bool an_capi_extract(const char *header, const char *const *incdirs, size_t nincdirs, an_capi_decls *out, char **why);
void an_capi_decls_free(an_capi_decls *d);
#endif
