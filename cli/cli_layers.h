/* cli_layers: the portable C layers that fixed C/C++/CUDA files include (see cli_layers.c). */
#ifndef CLI_LAYERS_H
#define CLI_LAYERS_H
#include "cli/cli_target.h"
#include "util/ut_buf.h"
#include <limits.h>
#include <stdbool.h>

/* The layers live in one directory of the project (layer_dir); each C file includes them by a path relative to
 * its own directory; each is written once, when a fixed file first includes it (never over an existing one). */
typedef struct {
    cli_helper_opts *helper;
    const char *layer_dir;
    bool diff, quiet; /* diff: a new layer goes into the patch instead of the disk */
    bool done[2];
    char gpu[PATH_MAX], ccl[PATH_MAX];
    const an_catalog *cat; /* for the kernel translator: a fixed file that launches translated kernels gets its
                            * OpenCL C file (<file>.cl) written beside the layers */
    bool spv_noted; /* the note on compiling the .cl files to SPIR-V (the Level Zero backend) was printed */
} cli_layers;

/* rw_project.fix_for_file: the compat helper (cli_target_fix_for_file), then the layers' include paths */
void cli_layers_fix_for_file(void *ctx, const char *path, an_fix_options *fo, char *buf, size_t sz);
/* rw_project.on_fixed: writes the layers the fixed text includes, and the OpenCL C of its translated kernels */
bool cli_layers_write(void *ctx, const char *path, an_lang lang, const an_fix_options *fo, const char *text,
                      ut_buf *patch);
#endif
