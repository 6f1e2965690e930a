/* an_clcompile: OpenCL C text compiled in-process by libclang (-x cl -cl-std=CL1.2, syntax and semantics, no code):
 * its errors, each at an offset of the text where clang can place it, so that the kernel translator never writes a
 * .cl file that does not compile (docs/c-kernels.md, "The compile check"). */
#ifndef AN_CLCOMPILE_H
#define AN_CLCOMPILE_H
#include "util/ut_mem.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    bool placed;  /* off is in the text (an error clang reports elsewhere, or nowhere, is not) */
    uint32_t off; /* where it is (a macro's expansion: where the macro is used) */
    char *msg;    /* clang's message */
} an_clcompile_error;
typedef UT_VEC(an_clcompile_error) an_clcompile_errors;

typedef enum {
    AN_CLCOMPILE_OK,          /* it compiles (errors empty) */
    AN_CLCOMPILE_ERRORS,      /* it does not: errors says where and why */
    AN_CLCOMPILE_UNAVAILABLE, /* it could not be compiled here (no libclang, no OpenCL headers): *why says why */
} an_clcompile_status;

/* Compiles text (len bytes) as OpenCL C 1.2. */
an_clcompile_status an_clcompile_check(const char *text, size_t len, an_clcompile_errors *out, char **why);
void an_clcompile_errors_free(an_clcompile_errors *e);
#endif
