/* fz_rules: libFuzzer target for the YAML rule loader (what `--rules DIR` reads): parse, validate, compile the
 * queries, predicates and trigger regexes; when the rules load, run them with fixes over a small Python file.
 * Properties: no crash, leak or undefined behaviour; every error names the origin; loaded rules yield findings
 * that keep the diagnostic invariants. */
#include "rewriters/rw_fixer.h"
#include "fuzz/fz_common.h"

static const char sample[] =
    "import torch\nfrom torch.cuda.amp import GradScaler\nimport torch.distributed as dist\n"
    "x = torch.zeros(3).cuda()\ntorch.cuda.synchronize()\nif torch.cuda.is_available():\n    dev = \"cuda:0\"\n"
    "dist.init_process_group(backend=\"nccl\")\ns = GradScaler()\nwith torch.autocast(\"cuda\"):\n    y = x @ x\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    an_catalog *cat = an_catalog_new();
    ut_buf err;
    ut_buf_init(&err);
    int n = an_catalog_load_yaml(cat, "fuzz.yml", (const char *)data, size, &err);
    if (!n) n = an_catalog_finalize(cat, &err);
    FZ_ASSERT((n == 0) == (err.len == 0), "%d errors but the message buffer says: %s", n, err.data ? err.data : "");
    for (char *line = err.data, *nl; n && line && *line; line = nl + 1) {
        nl = strchr(line, '\n');
        FZ_ASSERT(nl, "an error message without a final newline: %s", line);
        FZ_ASSERT(!strncmp(line, "fuzz.yml", 8) || !strncmp(line, "rules:", 6), "an error that names no origin: %.*s",
                  (int)(nl - line), line);
    }
    if (!n) {
        an_source src;
        an_source_init_mem(&src, "sample.py", sample, sizeof sample - 1);
        an_fix_options fo;
        bool unsafe;
        fz_fix_options(size ? data[size - 1] : 0, &fo, &unsafe);
        an_diag_list diags = {0};
        an_engine_analyze_source(cat, AN_LANG_PYTHON, &src, NULL, &fo, &diags);
        fz_check_diags(cat, &src, &diags);
        an_diag_list_free(&diags);
        rw_file_fix ff;
        rw_fix_source(cat, AN_LANG_PYTHON, &src, NULL, &fo, unsafe, &ff); /* user templates may break syntax: refused */
        rw_file_fix_free(&ff);
        an_source_free(&src);
    }
    ut_buf_free(&err);
    an_catalog_free(cat);
    return 0;
}
