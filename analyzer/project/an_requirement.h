/* an_requirement: the project's declared minimum torch version (requirements*.txt, pyproject.toml, setup.py,
 * setup.cfg, environment.yml), which decides the fix target. Part of the project model. */
#ifndef AN_REQUIREMENT_H
#define AN_REQUIREMENT_H
#include <stdbool.h>

typedef struct {
    bool known;        /* a minimum torch version was declared */
    int major, minor;
    char *source;      /* "requirements.txt:3" */
} an_torch_req;

/* Looks in dir and its parents (up to the repository root or /) for declared torch requirements. */
void an_torch_requirement(const char *dir, an_torch_req *out);
void an_torch_req_free(an_torch_req *r);
#endif
