/* lsp_doc: the open documents: text kept in step with the client (full and incremental changes), the line
 * table, and each buffer's incremental analysis state and last findings. */
#ifndef LSP_DOC_H
#define LSP_DOC_H
#include "analyzer/core/an_incr.h"
#include "analyzer/core/an_source.h"
#include "lsp/lsp_pos.h"

typedef struct lsp_doc {
    char *uri;
    an_source src;      /* text (NUL-terminated, src.text owned here), line table; src.path: the file path */
    size_t cap;         /* capacity of src.text */
    an_lang lang;
    bool analyzable;    /* a language xpuify reads */
    int version;
    an_incr *inc;
    bool pending;       /* push mode: changed since the last publication */
    double due_ms;      /* when the owed publication (and its analysis) may run (debounce) */
    uint64_t analyzed_gen; /* the generation the findings describe */
    uint64_t gen;          /* bumped by every change of text or settings */
    bool skipped;          /* too large to analyze (logged once) */
    bool published_empty;  /* push mode: the last publication was empty */
    /* per-document settings resolved from project configuration and the client */
    bool settings_ready;
    bool *enabled;          /* by rule index */
    an_fix_options fix;     /* the target the quick fixes use */
    char fix_buf[1024];     /* strings fix points into */
    char helper_module[128];
    bool unsafe_fixes;      /* fix-all applies unsafe fixes too */
    long long max_file_size;
    int debounce_ms;
    bool incremental;       /* false: every analysis from scratch */
    bool usable;            /* the findings describe the text (false: too large, not analyzable) */
    double settle_ms;       /* when to settle a provisional analysis (0: nothing to settle) */
    uint64_t published;     /* hash of the findings last published */
    UT_VEC(char *) deps;    /* other files its findings read (a guard's callees in other modules, an_deps): a
                             * change of one of them, on disk or in its buffer, analyzes it again */
} lsp_doc;

typedef struct {
    UT_VEC(lsp_doc *) items;
} lsp_docs;

/* A file path for a file: URI ("file:///a%20b.py" -> "/a b.py"); other schemes give the URI itself. */
char *lsp_uri_to_path(const char *uri);
char *lsp_path_to_uri(const char *path);

lsp_doc *lsp_docs_find(lsp_docs *d, const char *uri);
lsp_doc *lsp_docs_open(lsp_docs *d, const char *uri, const char *language_id, int version, const char *text, size_t len);
void lsp_docs_close(lsp_docs *d, const char *uri);
void lsp_docs_free(lsp_docs *d);

/* Marks the document as needing analysis with a new generation (text or settings changed). */
void lsp_doc_invalidate(lsp_doc *doc);
/* Replaces the whole text. */
void lsp_doc_set_text(lsp_doc *doc, const char *text, size_t len);
/* Replaces the bytes between two positions (in enc) with text, recording the edit for incremental analysis. */
void lsp_doc_change(lsp_doc *doc, lsp_encoding enc, uint32_t l0, uint32_t c0, uint32_t l1, uint32_t c1,
                    const char *text, size_t len);
#endif
