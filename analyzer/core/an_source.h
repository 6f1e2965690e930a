/* an_source: one input file in memory: its bytes, its line table, and byte -> (line, column) positions. */
#ifndef AN_SOURCE_H
#define AN_SOURCE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    char *path;           /* as given or as found by the walk; used in every message */
    char *text;           /* the file's bytes, NUL-terminated */
    uint32_t len;
    uint32_t *line_starts; /* byte offset of each line's first byte */
    uint32_t nlines;
    uint32_t body;        /* first byte after a UTF-8 BOM (0 or 3) */
    bool ascii;           /* no byte >= 0x80: a column is a byte offset (no counting along long lines) */
    uint32_t *cp_marks;   /* not ascii: code points before each AN_SOURCE_MARK-byte block (columns count from them) */
    char *encoding;       /* NULL: the file is UTF-8; else the encoding its PEP 263 coding cookie declares (iconv
                           * name), which text was decoded from: text is UTF-8 either way */
} an_source;

/* What stat says of a file, enough to tell that it has not changed since (as git's index does): a write changes
 * the size or the modification time, and every change, a timestamp set back by hand included, the change time. */
typedef struct {
    uint64_t dev, ino, size;
    int64_t mtime_ns, ctime_ns;
    bool valid; /* false: unknown (not stat-ed, or the file changed while read) */
} an_stamp;

#define AN_SOURCE_MARK 1024

/* (Re)builds the line table, the ASCII flag and the column marks after text/len changed (an editor's buffer). */
void an_source_index(an_source *src);

struct stat;
void an_stamp_of(const struct stat *st, an_stamp *out);
bool an_stamp_eq(const an_stamp *a, const an_stamp *b); /* both valid and equal */

typedef enum {
    AN_LOAD_OK = 0,
    AN_LOAD_UNREADABLE, /* open/read failed: errno in the message */
    AN_LOAD_TOO_LARGE,
    AN_LOAD_BINARY,     /* NUL bytes */
    AN_LOAD_NOT_UTF8,
    AN_LOAD_NOT_REGULAR,
    AN_LOAD_NOT_ANALYZED, /* read, but its front end could not run (libclang missing or failing): the reason says */
} an_load_status;

/* Reads and validates a file. On failure *why receives a heap message (without the path). */
an_load_status an_source_load(an_source *src, const char *path, size_t max_size, char **why);
/* The same, with the stamp of the bytes read into *seen (not valid when the file changed size while read). */
an_load_status an_source_load_stamped(an_source *src, const char *path, size_t max_size, char **why, an_stamp *seen);
/* The same without the line table, the ASCII flag, the column marks and body (the BOM): text and len only, until
 * an_source_index (most files of a walk are rejected by the prefilter, which reads the text alone). */
an_load_status an_source_read_stamped(an_source *src, const char *path, size_t max_size, char **why, an_stamp *seen);
/* Takes a copy of text that is already in memory (editor buffers, tests). No validation. */
void an_source_init_mem(an_source *src, const char *path, const char *text, size_t len);
void an_source_free(an_source *src);
/* 1-based line and 1-based column in Unicode code points. */
void an_source_position(const an_source *src, uint32_t byte, uint32_t *line, uint32_t *col);
/* Byte range [start, end) of the line holding byte, without its line terminator. */
void an_source_line_span(const an_source *src, uint32_t line, uint32_t *start, uint32_t *end);
/* Returns the byte offset of the first invalid UTF-8 sequence, or -1 when valid. */
long an_utf8_invalid_at(const char *s, size_t n);
#endif
