/* Unit tests for an_flow: which device strings and NCCL backends reach a device position through a name, and which
 * position each reaches. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include "analyzer/python/an_flow.h"
#include <stdio.h>
#include <string.h>
#include <tree_sitter/api.h>

const TSLanguage *tree_sitter_python(void);

/* The facts of src as "LITERAL->SINK;" in file order (LITERAL: the literal's text, SINK: the use reached). */
static char *facts(const char *src) {
    TSParser *p = ts_parser_new();
    ts_parser_set_language(p, tree_sitter_python());
    TSTree *t = ts_parser_parse_string(p, NULL, src, (uint32_t)strlen(src));
    an_flow_facts ff = {0};
    an_flow_collect(ts_tree_root_node(t), src, (uint32_t)strlen(src), 0, UINT32_MAX, &ff);
    char *out = calloc(1, 4096);
    for (size_t i = 0; i < ff.len; i++) {
        const an_flow_fact *f = &ff.items[i];
        size_t n = strlen(out);
        snprintf(out + n, 4096 - n, "%s%.*s->%.*s;", f->kind == AN_FLOW_BACKEND ? "B:" : "",
                 (int)(f->lit_end - f->lit_start), src + f->lit_start, (int)(f->sink_end - f->sink_start),
                 src + f->sink_start);
    }
    an_flow_free(&ff);
    ts_tree_delete(t);
    ts_parser_delete(p);
    return out;
}

#define EXPECT(src, want)                                                                                             \
    do {                                                                                                              \
        char *got_ = facts(src);                                                                                      \
        assert_string_equal(got_, want);                                                                              \
        free(got_);                                                                                                   \
    } while (0)

static void local_to(void **s) { (void)s; EXPECT("d = 'cuda'\nx = x.to(d)\n", "'cuda'->d;"); }
static void unused_is_no_fact(void **s) { (void)s; EXPECT("name = 'cuda'\nprint(name)\nx.to(other)\n", ""); }
static void tuple_assignment(void **s) { (void)s; EXPECT("a, b = 'cuda:0', 2\ny = torch.ones(2, device=a)\n", "'cuda:0'->a;"); }
static void attribute_chain(void **s) {
    (void)s;
    EXPECT("cfg.MODEL.DEVICE = 'cuda:{}'.format(i) if n else 'cpu'\nm.to(cfg.MODEL.DEVICE)\n", "'cuda:{}'->cfg.MODEL.DEVICE;");
}
static void module_constant_in_function(void **s) {
    (void)s;
    EXPECT("DEV = f'cuda:{RANK}'\n\ndef f(x):\n    return torch.load(x, map_location=DEV)\n", "f'cuda:{RANK}'->DEV;");
}
static void argparse_default(void **s) {
    (void)s;
    EXPECT("p.add_argument('--device', type=str, default='cuda')\nargs = p.parse_args()\nmodel.to(args.device)\n",
           "'cuda'->args.device;");
}
static void argparse_dest(void **s) {
    (void)s;
    EXPECT("p.add_argument('-b', '--dist-backend', default='nccl')\ndist.init_process_group(args.dist_backend)\n",
           "B:'nccl'->args.dist_backend;");
}
static void named_defaults(void **s) {
    (void)s;
    /* reaching no position in this file, the default of an option or field named for a device still is one */
    EXPECT("p.add_argument('--device', default='cuda')\np.add_argument('--dist-backend', default='nccl')\n"
           "p.add_argument('--name', default='cuda')\n",
           "'cuda'->'--device';B:'nccl'->'--dist-backend';");
    EXPECT("@dataclass\nclass C:\n    distributed_backend: str = field(default='nccl')\n    kind: str = 'cuda'\n",
           "B:'nccl'->distributed_backend;");
}
static void dataclass_field(void **s) {
    (void)s;
    EXPECT("@dataclass\nclass C:\n    gpu: str = 'cuda'\n    be: str = field(default='NCCL')\n\n"
           "def go(c):\n    torch.zeros(1, device=c.gpu)\n    dist.init_process_group(backend=c.be)\n",
           "'cuda'->c.gpu;B:'NCCL'->c.be;");
}
static void conditional_both_branches(void **s) {
    (void)s;
    EXPECT("b = 'NCCL' if has_gpu else 'GLOO'\ninit_process_group(backend=b)\n", "B:'NCCL'->b;");
    EXPECT("acc = 'cuda' if args.cuda else 'cpu'\nfabric = Fabric(accelerator=acc)\n", "'cuda'->acc;");
}
static void list_and_dict(void **s) {
    (void)s;
    EXPECT("devs = ['cuda:0', 'cuda:1']\nx.to(devs[i])\n", "'cuda:0'->devs[i];'cuda:1'->devs[i];");
    EXPECT("where = {'a': 'cuda:0', 'b': 'cpu'}\ntorch.device(where['a'])\n", "'cuda:0'->where['a'];");
}
static void chain_of_names(void **s) {
    (void)s;
    EXPECT("def main():\n    p.add_argument('--device', default='cuda')\n    args = p.parse_args()\n"
           "    device = args.device\n    model.to(device)\n",
           "'cuda'->device;");
}
static void local_stays_in_its_function(void **s) {
    (void)s;
    EXPECT("def a():\n    d = 'cuda'\n    print(d)\n\ndef b(d):\n    x.to(d)\n", "");
}
static void not_positions(void **s) {
    (void)s;
    /* comparisons, attribute reads, calls, a second positional argument, comments, strings */
    EXPECT("d = 'cuda'\nif x.device.type == d: pass\nd.upper()\nf(d)\ny.to(x, d)\n# x.to(d)\nprint('x.to(d)')\n", "");
    /* a backend is not a device, nor a device a backend */
    EXPECT("b = 'nccl'\nx.to(b)\nd = 'cuda'\ninit_process_group(backend=d)\n", "");
}
/* The integer device indexes of src as "INDEX;" in file order ("INDEX*;": a caller's device or else the index). */
static char *indexes(const char *src) {
    an_flow_facts ff = {0};
    an_flow_int_devices(src, (uint32_t)strlen(src), 0, UINT32_MAX, &ff);
    char *out = calloc(1, 4096);
    for (size_t i = 0; i < ff.len; i++) {
        size_t n = strlen(out);
        snprintf(out + n, 4096 - n, "%.*s%s;", (int)(ff.items[i].sink_end - ff.items[i].sink_start),
                 src + ff.items[i].sink_start, ff.items[i].mixed ? "*" : "");
    }
    an_flow_free(&ff);
    return out;
}

#define EXPECT_IDX(src, want)                                                                                         \
    do {                                                                                                              \
        char *got_ = indexes(src);                                                                                    \
        assert_string_equal(got_, want);                                                                              \
        free(got_);                                                                                                   \
    } while (0)

static void integer_indexes(void **s) {
    (void)s;
    /* by name, by an int assignment, by an annotation */
    EXPECT_IDX("def run(rank, n):\n    m = Net().to(rank)\n", "rank;");
    EXPECT_IDX("self.gpu_id = int(os.environ['LOCAL_RANK'])\nself.m = m.to(self.gpu_id)\n", "self.gpu_id;");
    EXPECT_IDX("ctx = 0\nm = m.to(ctx)\nx = torch.zeros(2, device=ctx)\n", "ctx;ctx;");
    EXPECT_IDX("def f(which: int):\n    return torch.device(which)\n", "which;");
    EXPECT_IDX("x = torch.ones(3, device = local_rank)\n", "local_rank;");
}
static void current_device_indexes(void **s) {
    (void)s;
    /* torch.cuda.current_device() is an int; so is what the fixes make of it (a second run sees the same) */
    EXPECT_IDX("dev = torch.cuda.current_device()\nx.to(dev)\n", "dev;");
    EXPECT_IDX("dev = int(xpuify_device.current_device())  # idx\nx.to(dev)\n", "dev;");
    EXPECT_IDX("dev = torch.accelerator.current_device_index()\ny = torch.zeros(2, device=dev)\n", "dev;");
    EXPECT_IDX("d = device or (torch.accelerator.current_device_index() if DEVICE_TYPE != \"cpu\" else 0)\nx.to(d)\n", "d*;");
    /* fairseq's move_to_cuda: a caller's device or the index (2: mixed), the parameter's None default included */
    const char *mixed = "def move_to_cuda(sample, device=None):\n    device = device or torch.cuda.current_device()\n"
                        "    return sample.to(device=device, non_blocking=True)\n";
    EXPECT_IDX(mixed, "device*;");
    /* fairseq's utils.py: other functions assign `device` a string or a device; the innermost function that
     * assigns it decides (the use sits in a nested function, whose enclosing one does) */
    const char *fq = "def buffered_arange(max, device=\"cpu\"):\n    return x.to(device)\n\n\n"
                     "def move_to_cuda(sample, device=None):\n    device = device or torch.cuda.current_device()\n\n"
                     "    def _move(tensor):\n        return tensor.to(device=device, non_blocking=True)\n\n"
                     "    return _move(sample)\n\n\ndef to_xla(t):\n    device = xm.xla_device()\n    return t.to(device)\n";
    EXPECT_IDX(fq, "device*;"); /* move_to_cuda's use only: buffered_arange's and to_xla's are no index */
    /* another object's current_device() may be a device; a None default alone is no index */
    EXPECT_IDX("dev = self.accelerator.current_device()\nx.to(dev)\n", "");
    EXPECT_IDX("def f(x, dev=None):\n    return x.to(dev)\n", "");
    EXPECT_IDX("dev = None\ndev = torch.cuda.current_device() + 1\nx.to(dev)\n", "");
}
static void not_integer_indexes(void **s) {
    (void)s;
    /* a device or a string, even under an index-like name; unknown names; torch.cuda's own index arguments */
    EXPECT_IDX("rank = torch.device('cuda', 0)\nx.to(rank)\n", "");
    EXPECT_IDX("self.local_device = torch.device(acc.device_name(os.environ['LOCAL_RANK']))\nx.to(self.local_device)\n", "");
    EXPECT_IDX("gpu = 'cuda:0'\nx.to(gpu)\n", "");
    EXPECT_IDX("x = x.to(device)\ny = y.to(dtype)\nz = f(device=dev)\n", "");
    EXPECT_IDX("print(torch.cuda.memory_summary(device=rank))\n", "");
    EXPECT_IDX("# m.to(rank)\nprint('m.to(rank)')\nself.device = rank\n", "");
}
static void recognizers(void **s) {
    (void)s;
    assert_true(an_flow_is_device_string("cuda", 4));
    assert_true(an_flow_is_device_string("cuda:12", 7));
    assert_true(an_flow_is_device_string("cuda:{rank}", 11));
    assert_true(an_flow_is_device_string("cuda:%d", 7));
    assert_false(an_flow_is_device_string("cudagraph", 9));
    assert_false(an_flow_is_device_string("cuda:x", 6));
    assert_true(an_flow_is_nccl("NCCL", 4));
    assert_true(an_flow_is_nccl("cpu:gloo,cuda:nccl", 18));
    assert_false(an_flow_is_nccl("ncclx", 5));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(local_to),
        cmocka_unit_test(unused_is_no_fact),
        cmocka_unit_test(tuple_assignment),
        cmocka_unit_test(attribute_chain),
        cmocka_unit_test(module_constant_in_function),
        cmocka_unit_test(argparse_default),
        cmocka_unit_test(argparse_dest),
        cmocka_unit_test(named_defaults),
        cmocka_unit_test(dataclass_field),
        cmocka_unit_test(conditional_both_branches),
        cmocka_unit_test(list_and_dict),
        cmocka_unit_test(chain_of_names),
        cmocka_unit_test(local_stays_in_its_function),
        cmocka_unit_test(not_positions),
        cmocka_unit_test(integer_indexes),
        cmocka_unit_test(current_device_indexes),
        cmocka_unit_test(not_integer_indexes),
        cmocka_unit_test(recognizers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
