/* Unit tests for the project model (analyzer/project/an_project): the ways a file is imported and where the device
 * helper goes, on small project trees written to a temporary directory: a namespace package imported from the root,
 * an __init__.py chain nobody imports, a package imported from two roots, scripts beside packages, a module that
 * also runs by path (the guarded fallback; withheld when symlinked), an exec-loaded config, a directory named like a
 * module imported elsewhere; which file a module name imported from a file stands for (an_modfile). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include "analyzer/project/an_project.h"
#include "analyzer/project/an_modfile.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[256];

static void put(const char *rel, const char *text) {
    char p[512];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    for (char *q = p + strlen(root) + 1; *q; q++) {
        if (*q != '/') continue;
        *q = 0;
        mkdir(p, 0777);
        *q = '/';
    }
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup(void **s) {
    (void)s;
    snprintf(root, sizeof root, "/tmp/xpuify-project-XXXXXX");
    if (!mkdtemp(root)) return -1;
    put("models/bs_roformer/attend.py", "import torch\n");
    put("inference.py", "from models.bs_roformer.attend import x\nif __name__ == \"__main__\":\n    pass\n");
    put("lib/__init__.py", "");
    put("lib/sub/__init__.py", "");
    put("lib/sub/m.py", "import torch\n");
    put("lib/sub/cli.py", "import torch\nif __name__ == '__main__':\n    pass\n");
    put("lib/sub/tool.py", "import lib.sub.m\nif __name__ == '__main__':\n    pass\n");
    put("ex/__init__.py", "");
    put("ex/speech/__init__.py", "");
    put("ex/speech/taco/__init__.py", "");
    put("ex/speech/taco/layers.py", "import torch\n");
    put("ex/speech/infer.py", "from taco.layers import f\nif __name__ == '__main__':\n    pass\n");
    put("bench.py", "from ex.speech.taco import layers\n");
    put("tools/convert.py", "#!/usr/bin/env python3\nimport torch\n");
    put("configs/det/base.py", "# a config\nmodel = dict(\n    depth=50,\n)\ndevice = 'cuda'\n");
    put("configs/det/helpers.py", "def f():\n    return 1\n");
    put("lib/utils/__init__.py", "");
    put("lib/utils/io.py", "import torch\n");
    put("bench/run.py", "from utils import timer\n");
    return 0;
}

static int teardown(void **s) {
    (void)s;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

static an_project *model(void) {
    an_project *p = an_project_new(root);
    assert_non_null(p);
    return p;
}

static void expect_place(an_project *p, const char *rel, const char *helper_rel, const char *import) {
    char f[512], want[512];
    snprintf(f, sizeof f, "%s/%s", root, rel);
    an_helper_place h;
    an_project_helper_place(p, f, "xpuify_device", NULL, &h);
    if (!import) {
        assert_null(h.import);
        assert_non_null(h.withheld);
    } else {
        assert_non_null(h.import);
        assert_string_equal(h.import, import);
        snprintf(want, sizeof want, "%s/%s", root, helper_rel);
        char rp[4096];
        assert_non_null(h.path);
        /* the path is shown relative to the working directory only when under it */
        snprintf(rp, sizeof rp, "%s", h.path);
        assert_string_equal(rp, want);
    }
    an_helper_place_free(&h);
}

static void test_scan_counts_files(void **s) {
    (void)s;
    an_project *p = model();
    assert_int_equal(an_project_file_count(p), 19);
    an_project_free(p);
}

static void test_namespace_package(void **s) {
    (void)s;
    an_project *p = model();
    char f[512];
    snprintf(f, sizeof f, "%s/models/bs_roformer/attend.py", root);
    an_way w[4];
    size_t n = an_project_ways(p, f, w, 4);
    assert_int_equal(n, 1);
    assert_int_equal(w[0].kind, AN_WAY_PACKAGE);
    assert_string_equal(w[0].module, "models.bs_roformer.attend");
    assert_string_equal(w[0].root, root);
    expect_place(p, "models/bs_roformer/attend.py", "models/xpuify_device.py", "from .. import xpuify_device");
    /* the script that imports the namespace package reuses its helper */
    expect_place(p, "inference.py", "models/xpuify_device.py", "from models import xpuify_device");
    an_project_free(p);
}

static void test_init_chain_and_main(void **s) {
    (void)s;
    an_project *p = model();
    expect_place(p, "lib/sub/m.py", "lib/xpuify_device.py", "from .. import xpuify_device");
    /* imported from its package and run by path, no relative import, imports no project package: the guarded
     * fallback, with the helper beside it (the one directory both the relative import and sys.path[0] reach) */
    char fallback[512];
    snprintf(fallback, sizeof fallback, AN_HELPER_FALLBACK, "xpuify_device", "xpuify_device");
    expect_place(p, "lib/sub/cli.py", "lib/sub/xpuify_device.py", fallback);
    assert_non_null(strstr(fallback, "try:\n    from . import xpuify_device\nexcept ImportError:"));
    /* runs by path but imports its own package absolutely: that import carries the helper */
    expect_place(p, "lib/sub/tool.py", "lib/xpuify_device.py", "from lib import xpuify_device");
    /* bench/ imports a `utils` of its own: lib/ is no import root for lib/utils */
    expect_place(p, "lib/utils/io.py", "lib/xpuify_device.py", "from .. import xpuify_device");
    an_project_free(p);
}

/* A symlinked module that runs by path: Python puts its target's directory first on sys.path, the package import
 * sees the link's directory: no one copy serves both, the fix is withheld and says why. */
static void test_symlinked_dual_run_withheld(void **s) {
    (void)s;
    put("elsewhere/cli2.py", "import torch\nif __name__ == '__main__':\n    pass\n");
    char link[512];
    snprintf(link, sizeof link, "%s/lib/sub/cli2.py", root);
    assert_int_equal(symlink("../../elsewhere/cli2.py", link), 0);
    an_project *p = model();
    char f[512];
    snprintf(f, sizeof f, "%s/lib/sub/cli2.py", root);
    an_helper_place h;
    an_project_helper_place(p, f, "xpuify_device", NULL, &h);
    assert_null(h.import);
    assert_non_null(h.withheld);
    assert_non_null(strstr(h.withheld, "may also run by path"));
    an_helper_place_free(&h);
    an_project_free(p);
    unlink(link);
    char dir[512];
    snprintf(dir, sizeof dir, "%s/elsewhere/cli2.py", root);
    unlink(dir);
    snprintf(dir, sizeof dir, "%s/elsewhere", root);
    rmdir(dir);
}

/* an_helper_import_in finds the fallback whatever the line endings */
static void test_helper_import_in(void **s) {
    (void)s;
    char imp[512];
    snprintf(imp, sizeof imp, AN_HELPER_FALLBACK, "xpuify_device", "xpuify_device");
    const char *crlf = "import torch\r\ntry:\r\n    from . import xpuify_device\r\nexcept ImportError:  # run by path "
                       "(no parent package): the copy beside this file\r\n    import xpuify_device\r\n";
    assert_true(an_helper_import_in(crlf, strlen(crlf), imp));
    const char *other = "import torch\ntry:\n    from . import xpuify_device\nexcept ImportError:\n    pass\n";
    assert_false(an_helper_import_in(other, strlen(other), imp));
    assert_true(an_helper_import_in(other, strlen(other), "from . import xpuify_device"));
}

static void test_two_roots(void **s) {
    (void)s;
    an_project *p = model();
    char f[512];
    snprintf(f, sizeof f, "%s/ex/speech/taco/layers.py", root);
    an_way w[4];
    size_t n = an_project_ways(p, f, w, 4);
    assert_int_equal(n, 2);
    assert_string_equal(w[0].module, "taco.layers"); /* deepest root first */
    assert_string_equal(w[1].module, "ex.speech.taco.layers");
    /* the helper sits in the package every way reaches */
    expect_place(p, "ex/speech/taco/layers.py", "ex/speech/taco/xpuify_device.py", "from . import xpuify_device");
    expect_place(p, "ex/speech/infer.py", "ex/speech/taco/xpuify_device.py", "from taco import xpuify_device");
    an_project_free(p);
}

static void test_scripts_and_configs(void **s) {
    (void)s;
    an_project *p = model();
    expect_place(p, "tools/convert.py", "tools/xpuify_device.py", "import xpuify_device");
    expect_place(p, "configs/det/base.py", NULL, NULL);
    char f[512];
    snprintf(f, sizeof f, "%s/configs/det/base.py", root);
    an_way w[4];
    assert_int_equal(an_project_ways(p, f, w, 4), 1);
    assert_int_equal(w[0].kind, AN_WAY_EXEC);
    /* a module of functions under configs/ is not a config */
    expect_place(p, "configs/det/helpers.py", "configs/det/xpuify_device.py", "import xpuify_device");
    an_project_free(p);
}

static void test_forced_path_and_no_model(void **s) {
    (void)s;
    an_helper_place h;
    an_project_helper_place(NULL, "a/b.py", "devhelp", "lib/devhelp.py", &h);
    assert_string_equal(h.path, "lib/devhelp.py");
    assert_string_equal(h.import, "import devhelp");
    an_helper_place_free(&h);
    /* no model (nothing readable): the file's directory and __init__.py chain still decide */
    char f[512];
    snprintf(f, sizeof f, "%s/lib/sub/m.py", root);
    an_project_helper_place(NULL, f, "xpuify_device", NULL, &h);
    assert_string_equal(h.import, "from .. import xpuify_device");
    an_helper_place_free(&h);
}

/* setup.py's package_dir names the directory packages install from: an import root for what the project imports,
 * wherever the importer lives (namespace packages included) */
static void test_package_dir(void **s) {
    (void)s;
    char saved[256];
    snprintf(saved, sizeof saved, "%s", root);
    snprintf(root, sizeof root, "/tmp/xpuify-project-XXXXXX");
    assert_non_null(mkdtemp(root));
    put("setup.py", "from setuptools import setup\nsetup(name='mypkg', package_dir={'': 'python'})\n");
    put("python/mypkg/ops/k.py", "import torch\n");
    put("tools/bench.py", "from mypkg.ops import k\nif __name__ == '__main__':\n    pass\n");
    an_project *p = model();
    expect_place(p, "python/mypkg/ops/k.py", "python/mypkg/xpuify_device.py", "from .. import xpuify_device");
    expect_place(p, "tools/bench.py", "python/mypkg/xpuify_device.py", "from mypkg import xpuify_device");
    an_project_free(p);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
    snprintf(root, sizeof root, "%s", saved);
}

/* A file in a directory no project marker (.git, setup.py, pyproject.toml, setup.cfg) is above, and outside the
 * working directory: its own directory is its project, and nothing below it is read (an editor opening a file in
 * /tmp or $HOME must not walk everything under it). With a marker, the tree below the root is read. */
static void test_unmarked_directory_is_not_walked(void **s) {
    (void)s;
    char saved[256];
    snprintf(saved, sizeof saved, "%s", root);
    snprintf(root, sizeof root, "/tmp/xpuify-project-XXXXXX");
    assert_non_null(mkdtemp(root));
    put("loose.py", "import torch\n");
    put("deep/a/b.py", "import torch\n");
    put("deep/c.py", "import torch\n");
    char f[512];
    snprintf(f, sizeof f, "%s/loose.py", root);
    const an_project *p = an_project_shared(f);
    assert_non_null(p);
    assert_int_equal(an_project_file_count(p), 1);
    put("deep/setup.py", "from setuptools import setup\n");
    snprintf(f, sizeof f, "%s/deep/c.py", root);
    p = an_project_shared(f);
    assert_non_null(p);
    assert_int_equal(an_project_file_count(p), 3); /* c.py, setup.py and a/b.py */
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
    snprintf(root, sizeof root, "%s", saved);
}

/* the file (relative to root) of module `dotted` imported from `from` with `level` dots; NULL: none */
static void expect_module(an_project *p, const char *from, int level, const char *dotted, const char *want) {
    char f[512], out[4096], real_root[4096];
    snprintf(f, sizeof f, "%s/%s", root, from);
    bool ok = an_modfile_find(p, f, level, dotted, out, sizeof out);
    if (!want) {
        assert_false(ok);
        return;
    }
    assert_true(ok);
    assert_non_null(realpath(root, real_root));
    char w[4096 + 512];
    snprintf(w, sizeof w, "%s/%s", real_root, want);
    assert_string_equal(out, w);
}

static void test_module_files(void **s) {
    (void)s;
    an_project *p = model();
    /* absolute: through the importing file's import roots (the project root, a script's own directory) */
    expect_module(p, "inference.py", 0, "models.bs_roformer.attend", "models/bs_roformer/attend.py"); /* namespace */
    expect_module(p, "bench.py", 0, "ex.speech.taco", "ex/speech/taco/__init__.py");
    expect_module(p, "ex/speech/infer.py", 0, "taco.layers", "ex/speech/taco/layers.py"); /* run from its dir */
    expect_module(p, "lib/sub/tool.py", 0, "lib.sub.m", "lib/sub/m.py");
    /* relative: from the file's package, up one package per extra dot */
    expect_module(p, "lib/sub/tool.py", 1, "m", "lib/sub/m.py");
    expect_module(p, "lib/sub/tool.py", 1, "", "lib/sub/__init__.py");
    expect_module(p, "lib/sub/tool.py", 2, "utils.io", "lib/utils/io.py");
    /* no file of the project: third-party, standard library, a name not there, beyond the file system's root */
    expect_module(p, "inference.py", 0, "torch", NULL);
    expect_module(p, "inference.py", 0, "os.path", NULL);
    expect_module(p, "lib/sub/tool.py", 1, "missing", NULL);
    expect_module(p, "lib/sub/tool.py", 64, "m", NULL);
    expect_module(p, "inference.py", 0, "", NULL);
    /* names that are no dotted module names do not walk the file system */
    expect_module(p, "lib/sub/tool.py", 1, "../sub/m", NULL);
    expect_module(p, "lib/sub/tool.py", 1, "sub/m", NULL);
    expect_module(p, "inference.py", 0, "models..bs_roformer", NULL);
    expect_module(p, "inference.py", 0, ".models", NULL);
    an_project_free(p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scan_counts_files), cmocka_unit_test(test_namespace_package),
        cmocka_unit_test(test_init_chain_and_main), cmocka_unit_test(test_symlinked_dual_run_withheld),
        cmocka_unit_test(test_helper_import_in), cmocka_unit_test(test_two_roots),
        cmocka_unit_test(test_scripts_and_configs), cmocka_unit_test(test_forced_path_and_no_model),
        cmocka_unit_test(test_package_dir), cmocka_unit_test(test_unmarked_directory_is_not_walked),
        cmocka_unit_test(test_module_files),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
