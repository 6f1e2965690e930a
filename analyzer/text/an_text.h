/* an_text: the front end for files no parser covers (shell scripts, Dockerfiles, YAML/TOML/INI, requirements,
 * CMake, Makefiles): comments are masked the way each file type writes them, then the `pattern` rules whose
 * `files` globs take the file run over the masked text (PCRE2, JIT). */
#ifndef AN_TEXT_H
#define AN_TEXT_H
#include "analyzer/core/an_diag.h"
#include "analyzer/core/an_rule.h"
#include "analyzer/core/an_source.h"

typedef enum {
    AN_TEXT_OTHER = 0,
    AN_TEXT_SHELL,
    AN_TEXT_DOCKER,
    AN_TEXT_YAML,
    AN_TEXT_TOML,
    AN_TEXT_INI,
    AN_TEXT_REQUIREMENTS,
    AN_TEXT_CMAKE,
    AN_TEXT_MAKE,
} an_text_kind;

typedef struct { uint32_t start, end; } an_text_range;
typedef UT_VEC(an_text_range) an_text_ranges;

an_text_kind an_text_kind_for_path(const char *path);
const char *an_text_kind_name(an_text_kind k);
/* A copy of text with every comment replaced by spaces (newlines kept); the comments' ranges are appended to
 * comments when it is not NULL. */
char *an_text_mask(an_text_kind k, const char *text, size_t len, an_text_ranges *comments);
/* enabled: indexed by rule->index, NULL = all. */
/* why: NULL, or receives (heap) the first rule error (a pattern that hit PCRE2's match limit): the findings are
 * those found, the file is reported as not completely checked. */
void an_text_analyze(const an_catalog *cat, const an_source *src, const bool *enabled, an_diag_list *out,
                     char **why);
#endif
