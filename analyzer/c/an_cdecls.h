/* an_cdecls: the declarations header of the C fast mode, generated from the API tables for one file: a short
 * prelude (basic types, the kernel-launch hook) and declarations of the table rows the file mentions, with what
 * they depend on, so that libclang resolves CUDA names without the CUDA toolkit. */
#ifndef AN_CDECLS_H
#define AN_CDECLS_H
#include "util/ut_buf.h"
#include "analyzer/core/an_rule.h"

typedef enum { AN_CMODE_C = 0, AN_CMODE_CXX, AN_CMODE_CUDA } an_cmode;

/* Appends the header for a file whose text is text[0..len) parsed in mode. */
void an_cdecls_generate(const an_catalog *cat, an_cmode mode, const char *text, size_t len, bool launch_calls, ut_buf *out);
/* Calls fn for every identifier of text[0..len) that names a C table row (plain names, not `a::b`). */
void an_cdecls_each_row(const an_catalog *cat, const char *text, size_t len,
                        void (*fn)(void *ctx, const an_entry *e), void *ctx);
#endif
