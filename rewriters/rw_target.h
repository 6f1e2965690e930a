/* rw_target: what the fixed code may call: the project's declared torch requirement (requirements*.txt,
 * pyproject.toml, setup.py, setup.cfg) and, for the compat target, where the device helper module lives and how
 * each file imports it. */
#ifndef RW_TARGET_H
#define RW_TARGET_H
#include "util/ut_buf.h"
#include <stdbool.h>

typedef struct {
    bool known;        /* a minimum torch version was declared */
    int major, minor;
    char *source;      /* "requirements.txt:3" */
} rw_torch_req;

/* Looks in dir and its parents (up to the repository root or /) for declared torch requirements. */
void rw_torch_requirement(const char *dir, rw_torch_req *out);
void rw_torch_req_free(rw_torch_req *r);

typedef struct {
    char *path;   /* where the helper module lives */
    char *import; /* the statement that imports it into the file */
} rw_helper_place;

/* forced_path: --helper-path (NULL: next to scripts, or in the top-level package of package modules). */
void rw_helper_place_for(const char *file, const char *module, const char *forced_path, rw_helper_place *out);
void rw_helper_place_free(rw_helper_place *p);
/* The helper's text with the device priority baked in. */
char *rw_helper_text(const char *priority);
/* Writes the helper if absent: 1 written, 0 already there, -1 error (*why). */
int rw_helper_write(const char *path, const char *priority, char **why);
#endif
