/* an_pyfix: computes the fix (byte-range edits) of each Python finding for a target (accelerator: upstream
 * torch.accelerator / torch.amp APIs; compat: the xpuify_device helper module), including the imports and the
 * run-time device definition the rewritten code needs. */
#ifndef AN_PYFIX_H
#define AN_PYFIX_H
#include "analyzer/core/an_diag.h"
#include "analyzer/python/an_resolve.h"
#include <tree_sitter/api.h>

/* The device-type variable the accelerator target defines once per file: the build's accelerator where it has a
 * device, else the CPU. Counted through the device module (torch.cuda.device_count() asks NVML while CUDA is not
 * initialised), not torch.accelerator.is_available(), which initialises CUDA: the definition runs when the module is
 * imported, and a CUDA_VISIBLE_DEVICES set after the imports, or a CUDA worker started by fork, must still work as
 * with the original's "cuda" (H200, torch 2.11: docs/verification.md). */
#define AN_PYFIX_DEV_NAME "DEVICE_TYPE"
#define AN_PYFIX_DEV_INIT                                                                                             \
    "torch.accelerator.current_accelerator().type if torch.accelerator.current_accelerator() and "                   \
    "torch.get_device_module(torch.accelerator.current_accelerator()).device_count() else \"cpu\""
/* what an earlier xpuify wrote there (a file it fixed keeps its definition: no second one) */
#define AN_PYFIX_DEV_INIT_OLD "torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else \"cpu\""

/* nodes: the node index of the tree at root (an_pynodes), or NULL. whole: root is a tree of the whole file (the guard analysis then reads it instead of parsing the file again).
 * extra_needs: AN_NEED_* of fixes computed earlier for the rest of the file (an editor buffer re-analyzed in
 * part), added to what these fixes need. Returns what the shared insertion edits hold (AN_NEED_TORCH: the
 * torch import, AN_NEED_DEV: the device definition, AN_NEED_HELPER: the helper import). */
unsigned an_pyfix_generate(const an_fix_options *opt, const an_source *src, TSNode root, const an_pynodes *nodes,
                           bool whole, const an_pyscope *scope, an_diag_list *diags, unsigned extra_needs);
#endif
