/* Unit tests for an_engine_parses (the fixer's re-parse check, rw_fixer.c): Python that CPython compiles passes,
 * and so does nothing else this check knows of: syntax errors, and a block left with no statement (tree-sitter's
 * grammar accepts `def f():` followed by a comment alone; CPython says "expected an indented block"). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include "analyzer/core/an_engine.h"
#include <string.h>

static bool parses(const char *text) { return an_engine_parses(AN_LANG_PYTHON, "t.py", text, strlen(text)); }

static void valid_python(void **s) {
    (void)s;
    const char *ok[] = {
        "x = 1\n",
        "def f():\n    pass  # only a comment after pass\n",
        "def f():\n    # a comment first\n    return 1\n",
        "def f():\n    \"\"\"doc only\"\"\"\n",
        "class A: ...\n",
        "if x:\n    y = 1\n    # a trailing comment\nz = 2\n",
        "for i in r:\n    pass\nelse:\n    # why\n    pass\n",
        "try:\n    import a\nexcept ImportError:  # none\n    a = None\n",
        "# a module of comments only\n",
        "",
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
        if (!parses(ok[i])) fail_msg("rejected: %s", ok[i]);
}

static void not_python(void **s) {
    (void)s;
    const char *bad[] = {
        "def f(:\n    pass\n",
        "def f():\n    # the import it held is gone\n\n\nx = 1\n",
        "if x:\n    # nothing left\nelse:\n    y = 1\n",
        "class A:\n    def g(self):\n        # emptied\n    z = 1\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (parses(bad[i])) fail_msg("accepted: %s", bad[i]);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(valid_python), cmocka_unit_test(not_python)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
