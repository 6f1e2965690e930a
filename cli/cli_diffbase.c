/* cli_diffbase: the changed-lines set, from libgit2's tree-to-work-tree diff (no `git` process: the result does not
 * depend on the user's git configuration, pager or version). */
#include "cli/cli_diffbase.h"
#include <git2.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static cli_changed_file *file_for(cli_changes *c, const char *path) {
    if (c->files.len && !strcmp(c->files.items[c->files.len - 1].path, path)) return &c->files.items[c->files.len - 1];
    for (size_t i = 0; i < c->files.len; i++)
        if (!strcmp(c->files.items[i].path, path)) return &c->files.items[i];
    cli_changed_file f = {ut_strdup(path), {0}};
    ut_vec_push(&c->files, f);
    return &c->files.items[c->files.len - 1];
}

static int on_line(const git_diff_delta *delta, const git_diff_hunk *hunk, const git_diff_line *line, void *payload) {
    (void)hunk;
    if (line->origin != GIT_DIFF_LINE_ADDITION || line->new_lineno <= 0) return 0;
    cli_changed_file *f = file_for(payload, delta->new_file.path);
    ut_vec_push(&f->lines, (uint32_t)line->new_lineno);
    return 0;
}

static int u32_cmp(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static int file_cmp(const void *a, const void *b) {
    return strcmp(((const cli_changed_file *)a)->path, ((const cli_changed_file *)b)->path);
}

static void git_msg(ut_buf *err) {
    const git_error *e = git_error_last();
    if (e && e->message) ut_buf_printf(err, " (%s)", e->message);
}

bool cli_changes_load(const char *rev, cli_changes *c, ut_buf *err) {
    memset(c, 0, sizeof *c);
    git_libgit2_init();
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) strcpy(cwd, ".");
    git_repository *repo = NULL;
    if (git_repository_open_ext(&repo, cwd, 0, NULL) != 0) {
        ut_buf_printf(err, "--diff-base: %s is not inside a git repository", cwd);
        return false;
    }
    bool ok = false;
    git_object *obj = NULL, *tree = NULL;
    git_diff *diff = NULL;
    const char *wd = git_repository_workdir(repo);
    char real[PATH_MAX];
    if (!wd || !realpath(wd, real)) {
        ut_buf_printf(err, "--diff-base: the repository has no work tree");
        goto done;
    }
    size_t n = strlen(real);
    c->workdir = ut_malloc(n + 2);
    memcpy(c->workdir, real, n);
    strcpy(c->workdir + n, strcmp(real, "/") ? "/" : "");
    if (git_revparse_single(&obj, repo, rev) != 0 || git_object_peel(&tree, obj, GIT_OBJECT_TREE) != 0) {
        ut_buf_printf(err, "--diff-base: revision `%s` is not in this repository", rev);
        if (git_repository_is_shallow(repo))
            ut_buf_printf(err, "; this is a shallow clone, so its history stops early: fetch the base first "
                               "(`git fetch --depth=1 origin %s`, or `fetch-depth: 0` / `fetch-depth: 2` with "
                               "actions/checkout)", rev);
        else
            git_msg(err);
        goto done;
    }
    git_diff_options opts;
    git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
    opts.context_lines = 0;
    opts.flags = GIT_DIFF_INCLUDE_UNTRACKED | GIT_DIFF_RECURSE_UNTRACKED_DIRS | GIT_DIFF_SHOW_UNTRACKED_CONTENT;
    if (git_diff_tree_to_workdir_with_index(&diff, repo, (git_tree *)tree, &opts) != 0) {
        ut_buf_printf(err, "--diff-base: cannot compare `%s` with the work tree", rev);
        git_msg(err);
        goto done;
    }
    git_diff_find_options fo;
    git_diff_find_options_init(&fo, GIT_DIFF_FIND_OPTIONS_VERSION);
    fo.flags = GIT_DIFF_FIND_RENAMES | GIT_DIFF_FIND_FOR_UNTRACKED;
    git_diff_find_similar(diff, &fo);
    if (git_diff_foreach(diff, NULL, NULL, NULL, on_line, c) != 0) {
        ut_buf_printf(err, "--diff-base: reading the diff against `%s` failed", rev);
        git_msg(err);
        goto done;
    }
    for (size_t i = 0; i < c->files.len; i++)
        if (c->files.items[i].lines.len > 1)
            qsort(c->files.items[i].lines.items, c->files.items[i].lines.len, sizeof(uint32_t), u32_cmp);
    if (c->files.len > 1) qsort(c->files.items, c->files.len, sizeof(cli_changed_file), file_cmp);
    ok = true;
done:
    git_diff_free(diff);
    git_object_free(tree);
    git_object_free(obj);
    git_repository_free(repo);
    return ok;
}

bool cli_changes_has(const cli_changes *c, const char *path, uint32_t line) {
    char abs[PATH_MAX];
    if (!c->workdir || !realpath(path, abs)) return false;
    size_t n = strlen(c->workdir);
    if (strncmp(abs, c->workdir, n)) return false;
    cli_changed_file key = {abs + n, {0}};
    const cli_changed_file *f = c->files.len ? bsearch(&key, c->files.items, c->files.len, sizeof key, file_cmp) : NULL;
    return f && f->lines.len && bsearch(&line, f->lines.items, f->lines.len, sizeof(uint32_t), u32_cmp);
}

void cli_changes_free(cli_changes *c) {
    for (size_t i = 0; i < c->files.len; i++) {
        ut_free(c->files.items[i].path);
        ut_vec_free(&c->files.items[i].lines);
    }
    ut_vec_free(&c->files);
    ut_free(c->workdir);
}
