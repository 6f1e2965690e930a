/* an_deps: the other files an analysis read (a guard's callees in other modules of the project, an_guard), noted
 * per thread while one file is analyzed, so that the results cache keys that file's entry on their contents too
 * (an_cache_put_deps) and the language server knows which open documents to analyze again when one of them
 * changes. A thread that did not begin a recording notes nothing. */
#ifndef AN_DEPS_H
#define AN_DEPS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    char *path;          /* as the analysis opened it (absolute) */
    uint8_t content[20]; /* an_cache_content of the text read (an editor's buffer or the file) */
    bool buffer;         /* the text was an editor's buffer, not the file */
} an_dep;

typedef struct {
    an_dep *items;
    size_t len, cap;
} an_deps;

/* Starts recording on this thread (what was recorded before is dropped). */
void an_deps_begin(void);
/* Notes that the analysis read path's text (once per path). */
void an_deps_note(const char *path, const char *text, size_t len, bool buffer);
/* The same with the content's hash (an_cache_content) already known. */
void an_deps_note_hash(const char *path, const uint8_t content[20]);
/* Stops recording: what was noted moves to out (emptied first). */
void an_deps_end(an_deps *out);
void an_deps_free(an_deps *d);
/* A dependency on whether `path` is fixed in the run under way (a guard in the file analyzed counted that module's
 * safe fixes as done, or could not: an_guard): noted under a path of its own ("\x01fixed\x01" + path) whose content
 * is the run's answer, so a later run that fixes another set of files analyzes the file again. */
void an_deps_note_fixed(const char *path, bool fixed);
/* The run under way: fixed(path) says whether that file's fixes are made with this run's (key: the run's options);
 * NULL when none (a dependency noted by an_deps_note_fixed then does not hold). */
void an_deps_set_fixed_run(bool (*fixed)(const char *path), const uint8_t key[20]);
/* Whether every dependency still has the content noted (a file read again and hashed; a buffer dependency never
 * holds for a file on disk). */
bool an_deps_hold(const an_dep *d, size_t n);
#endif
