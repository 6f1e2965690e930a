/* an_flow: value facts of a Python file: which device strings ("cuda", "cuda:0", f"cuda:{i}", "cuda:{}".format(i))
 * and distributed backends ("nccl", any case) reach a device position (`.to(x)`, `device=x`, `torch.device(x)`,
 * `map_location=x`, `init_process_group(backend=x)`, `accelerator=x`) through a name: a local or a module
 * constant, a tuple assignment, an attribute (`cfg.MODEL.DEVICE = ...`), an argparse default (`args.device`), a
 * dataclass field default, a conditional expression, a list or dict of devices, or a chain of such names.
 * Intra-file. The literals come from the tree (only what was parsed: the statements that hold them always are);
 * their uses are found in the text, so a file parsed by regions gets the same facts as one parsed whole. */
#ifndef AN_FLOW_H
#define AN_FLOW_H
#include "util/ut_mem.h"
#include <stdbool.h>
#include <stdint.h>
#include "analyzer/python/an_pynodes.h"
#include <tree_sitter/api.h>

typedef enum { AN_FLOW_DEVICE = 1, AN_FLOW_BACKEND = 2 } an_flow_kind;

typedef struct {
    an_flow_kind kind;
    uint32_t lit_start, lit_end;   /* the string literal: where the finding and its fix go */
    uint32_t sink_start, sink_end; /* the device position it reaches: the use of the name, e.g. `dev` in `.to(dev)` */
    uint32_t ctx_start;            /* where the position's text starts (`.to(`, `map_location=`) */
    char *via;                     /* the name the value travels through last */
    bool named;                    /* no use reached: the literal is the default of a device-named option or field
                                    * (`--device`, `dist_backend: str = ...`), which sink_start..sink_end spans */
    bool mixed;                    /* an integer index: a caller's device or the index (`device = device or
                                    * torch.cuda.current_device()`) */
} an_flow_fact;

typedef UT_VEC(an_flow_fact) an_flow_facts;

/* The facts of the tree of text[0..len). Literals are looked for in [lo, hi) only. One fact per literal (the first
 * position it reaches, in file order). */
void an_flow_collect(TSNode root, const char *text, uint32_t len, uint32_t lo, uint32_t hi, an_flow_facts *out);
/* The same from the tree's node index (an_pynodes), built once for every collector */
void an_flow_collect_nodes(const an_pynodes *nodes, const char *text, uint32_t len, uint32_t lo, uint32_t hi,
                           an_flow_facts *out);
void an_flow_free(an_flow_facts *f);

/* Integer device indexes in device positions: `.to(rank)`, `model.to(self.gpu_id)`, `device=local_rank`,
 * `torch.device(rank)`, which name CUDA device `rank` on every torch. The index is a name that says it is a rank or
 * GPU index (rank, local_rank, gpu, gpu_id, device_id, ...), or one the file assigns an integer (`int(...)`, a
 * number, `get_rank()`, `LOCAL_RANK`, `torch.cuda.current_device()`, also as the default of `device or ...`) or
 * annotates `int`, and never a string or a device otherwise. Found in the text, so
 * statements the front end did not parse count too. Each span is the index expression (sink_start..sink_end;
 * ctx_start: the position's start; lit_*: unused). [lo, hi): where the positions may start. */
void an_flow_int_devices(const char *text, uint32_t len, uint32_t lo, uint32_t hi, an_flow_facts *out);
/* The content of a device string: "cuda", "cuda:N", "cuda:{...}", "cuda:%d", "cuda:" (then concatenated). */
bool an_flow_is_device_string(const char *s, size_t n);
/* A backend string that names NCCL: "nccl" (any case), "cpu:gloo,cuda:nccl". */
bool an_flow_is_nccl(const char *s, size_t n);
#endif
