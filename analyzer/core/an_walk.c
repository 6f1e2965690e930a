/* an_walk: file discovery. Directories are walked depth-first; symlinked directories are not followed (no loops);
 * .gitignore is honoured through libgit2 unless --no-ignore, for untracked files only: a file git tracks (in the
 * index) is always checked, as git itself ignores .gitignore for it (a committed .gitignore must not hide code from
 * the gate). */
#include "analyzer/core/an_walk.h"
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <git2.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sys/stat.h>

static const char *const default_excludes[] = {
    ".git", ".hg", ".svn", ".bzr", ".venv", "venv", ".tox", ".nox", "node_modules", "__pycache__", ".mypy_cache",
    ".pytest_cache", ".ruff_cache", ".xpuify_cache", "site-packages", ".eggs", "*.egg-info", "build", "dist",
    "_build", "buck-out", ".ipynb_checkpoints", NULL};

static bool ends_with(const char *s, const char *suf) {
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

bool an_lang_for_path(const char *path, an_lang *lang) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    static const char *const py[] = {".py", ".pyi", NULL};
    static const char *const c[] = {".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx", ".cu", ".cuh", NULL};
    static const char *const text[] = {".sh", ".bash", ".zsh", ".yml", ".yaml", ".toml", ".ini", ".cfg",
                                       ".cmake", ".dockerfile", ".mk", NULL};
    for (int i = 0; py[i]; i++)
        if (ends_with(base, py[i])) return *lang = AN_LANG_PYTHON, true;
    for (int i = 0; c[i]; i++)
        if (ends_with(base, c[i])) return *lang = AN_LANG_C, true;
    for (int i = 0; text[i]; i++)
        if (ends_with(base, text[i])) return *lang = AN_LANG_TEXT, true;
    if (!strcmp(base, "Dockerfile") || !strncmp(base, "Dockerfile.", 11) || !strcmp(base, "CMakeLists.txt") ||
        !strcmp(base, "Makefile") || (!strncmp(base, "requirements", 12) && ends_with(base, ".txt")) ||
        !strcmp(base, "constraints.txt") || !strcmp(base, "Containerfile"))
        return *lang = AN_LANG_TEXT, true;
    return false;
}

bool an_path_matches_glob(const char *path, const char *glob) {
    if (!fnmatch(glob, path, FNM_PATHNAME)) return true;
    if (!fnmatch(glob, path, 0) && strchr(glob, '/')) return true;
    /* a glob without a slash matches any trailing run of components, like a .gitignore line */
    for (const char *p = path; (p = strchr(p, '/')); ) {
        p++;
        if (!fnmatch(glob, p, FNM_PATHNAME)) return true;
    }
    return false;
}

static bool excluded(const an_walk_options *o, const char *path, bool builtin_too) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (builtin_too)
        for (int i = 0; default_excludes[i]; i++)
            if (!fnmatch(default_excludes[i], base, 0)) return true;
    for (size_t i = 0; i < o->excludes.len; i++)
        if (an_path_matches_glob(path, o->excludes.items[i])) return true;
    return false;
}

typedef struct {
    const an_walk_options *opt;
    an_file_list *out;
    git_repository *repo;
    git_index *index; /* tracked files: never ignored (NULL: none read) */
    char *workdir;    /* absolute, with a trailing slash */
} walker;

static void git_once(void) { git_libgit2_init(); }

/* by .gitignore rules; with index, a file git tracks (or a directory holding one) is never ignored */
static bool git_ignored_as(walker *w, const char *path, bool dir, bool index) {
    if (!w->repo) return false;
    char abs[PATH_MAX];
    if (!realpath(path, abs)) return false;
    size_t wl = strlen(w->workdir);
    if (strncmp(abs, w->workdir, wl)) return false;
    const char *rel = abs + wl;
    if (!*rel) return false;
    char buf[PATH_MAX + 2];
    snprintf(buf, sizeof buf, "%s%s", rel, dir ? "/" : "");
    int ignored = 0;
    if (git_ignore_path_is_ignored(&ignored, w->repo, buf) != 0) return false;
    if (!ignored || !w->index || !index) return ignored != 0;
    /* tracked: the file is in the index; a directory holds tracked files when an entry starts with "dir/" */
    if (!dir) return git_index_get_bypath(w->index, rel, 0) == NULL;
    size_t pos;
    return git_index_find_prefix(&pos, w->index, buf) != 0;
}

static bool git_ignored(walker *w, const char *path, bool dir) { return git_ignored_as(w, path, dir, true); }

static void add(walker *w, const char *path, an_lang lang, bool named, const struct stat *st) {
    an_file f = {ut_strdup(path), lang, named, {0}};
    an_stamp_of(st, &f.stamp);
    ut_vec_push(w->out, f);
}

static void skipped(walker *w, const char *path, const char *why) {
    if (!w->opt->skipped) return;
    an_skip k = {ut_strdup(path), ut_strdup(why)};
    ut_vec_push(w->opt->skipped, k);
}

static void walk_dir(walker *w, const char *dir, int depth) {
    if (depth > AN_WALK_MAX_DEPTH) {
        /* a bound on the recursion (and on path lengths), never a silent one: the directory is reported */
        char why[96];
        snprintf(why, sizeof why, "more than %d directories deep; not walked", AN_WALK_MAX_DEPTH);
        skipped(w, dir, why);
        return;
    }
    DIR *d = opendir(dir);
    if (!d) {
        char why[160];
        snprintf(why, sizeof why, "cannot read directory: %s", strerror(errno));
        if (w->opt->skipped) skipped(w, dir, why);
        else fprintf(stderr, "xpuify: warning: %s: %s\n", dir, why);
        return;
    }
    UT_VEC(char *) names = {0}, subdirs = {0};
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        ut_vec_push(&names, ut_strdup(e->d_name));
    }
    ut_buf p;
    ut_buf_init(&p);
    /* entries are stat-ed relative to the directory (no lookup of the whole path per entry); subdirectories are
     * walked after it is closed (one descriptor open at a time) */
    int dfd = dirfd(d);
    bool dot = !strcmp(dir, "."), slash = ends_with(dir, "/");
    for (size_t i = 0; i < names.len; i++) {
        ut_buf_clear(&p);
        if (!dot) {
            ut_buf_puts(&p, dir);
            if (!slash) ut_buf_putc(&p, '/');
        }
        ut_buf_puts(&p, names.items[i]);
        struct stat st;
        int r = fstatat(dfd, names.items[i], &st, AT_SYMLINK_NOFOLLOW);
        bool is_link = r == 0 && S_ISLNK(st.st_mode);
        if (is_link) r = fstatat(dfd, names.items[i], &st, 0); /* a dangling link fails */
        ut_free(names.items[i]);
        if (r != 0) continue;
        if (S_ISDIR(st.st_mode)) {
            if (is_link) continue; /* never follow directory links: no loops, no escaping the tree */
            if (excluded(w->opt, p.data, true)) continue;
            if (w->opt->skip && w->opt->skip(w->opt->skip_ctx, p.data, true)) continue;
            if (!w->opt->no_ignore && git_ignored(w, p.data, true)) continue;
            ut_vec_push(&subdirs, ut_strdup(p.data));
        } else if (S_ISREG(st.st_mode)) {
            an_lang lang;
            if (!an_lang_for_path(p.data, &lang) || !w->opt->langs[lang]) continue;
            if (excluded(w->opt, p.data, false)) continue;
            if (w->opt->skip && w->opt->skip(w->opt->skip_ctx, p.data, false)) continue;
            if (!w->opt->no_ignore && git_ignored(w, p.data, false)) continue;
            add(w, p.data, lang, false, &st);
        } else {
            /* a FIFO, socket or device with a source file's name: never opened (a FIFO would block), but reported */
            an_lang lang;
            if (!an_lang_for_path(p.data, &lang) || !w->opt->langs[lang]) continue;
            if (excluded(w->opt, p.data, false)) continue;
            if (w->opt->skip && w->opt->skip(w->opt->skip_ctx, p.data, false)) continue;
            if (!w->opt->no_ignore && git_ignored(w, p.data, false)) continue;
            skipped(w, p.data, S_ISFIFO(st.st_mode) ? "not a regular file (a FIFO)" : S_ISSOCK(st.st_mode)
                                   ? "not a regular file (a socket)" : "not a regular file (a device)");
        }
    }
    closedir(d);
    ut_buf_free(&p);
    ut_vec_free(&names);
    for (size_t i = 0; i < subdirs.len; i++) {
        walk_dir(w, subdirs.items[i], depth + 1);
        ut_free(subdirs.items[i]);
    }
    ut_vec_free(&subdirs);
}

static int cmp_file(const void *a, const void *b) {
    return strcmp(((const an_file *)a)->path, ((const an_file *)b)->path);
}

int an_walk(const char *const *paths, size_t npaths, const an_walk_options *opt, an_file_list *out, ut_buf *errs) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    int bad = 0;
    for (size_t i = 0; i < npaths; i++) {
        const char *path = paths[i];
        walker w = {opt, out, NULL, NULL, NULL};
        struct stat st;
        if (stat(path, &st) != 0) {
            ut_buf_printf(errs, "%s: %s\n", path, strerror(errno));
            bad++;
            continue;
        }
        /* the repository answers .gitignore questions for what a walk finds below a named directory; a named file
         * is checked whatever ignores it (as ruff does), so pre-commit's file lists open no repository per file */
        if (!opt->no_ignore && S_ISDIR(st.st_mode)) {
            char abs[PATH_MAX];
            /* libgit2 is started only here: its start-up reads the system's CA certificates (~15 ms), which a run
             * over named files (a pre-commit hook's) never needs */
            pthread_once(&once, git_once);
            if (realpath(path, abs) && git_repository_open_ext(&w.repo, abs, 0, NULL) == 0) {
                const char *wd = git_repository_workdir(w.repo);
                char wabs[PATH_MAX];
                if (wd && realpath(wd, wabs)) {
                    size_t n = strlen(wabs);
                    w.workdir = ut_malloc(n + 2);
                    memcpy(w.workdir, wabs, n);
                    strcpy(w.workdir + n, "/");
                    if (git_repository_index(&w.index, w.repo) != 0) w.index = NULL; /* no index: nothing tracked */
                } else {
                    git_repository_free(w.repo);
                    w.repo = NULL;
                }
            }
        }
        bool forced_out = opt->force_exclude &&
                          (excluded(opt, path, false) || (opt->skip && opt->skip(opt->skip_ctx, path, S_ISDIR(st.st_mode))));
        if (forced_out) {
            /* --force-exclude: a named path that an exclude matches is skipped like a walked one */
        } else if (S_ISDIR(st.st_mode)) {
            /* a named directory that cannot be read is an input error, like a missing path (below it: warnings) */
            DIR *d = opendir(path);
            if (!d) {
                ut_buf_printf(errs, "%s: cannot read directory: %s\n", path, strerror(errno));
                bad++;
            } else {
                closedir(d);
                /* a directory named on the command line is checked even when .gitignore covers it (as ruff does);
                 * rules inside it still apply to what is below */
                if (w.repo && git_ignored_as(&w, path, true, false)) {
                    git_index_free(w.index);
                    w.index = NULL;
                    git_repository_free(w.repo);
                    w.repo = NULL;
                }
                walk_dir(&w, path, 0);
            }
        } else {
            an_lang lang;
            if (!an_lang_for_path(path, &lang)) lang = AN_LANG_PYTHON; /* a named file is read as Python */
            add(&w, path, lang, true, &st);
        }
        git_index_free(w.index);
        if (w.repo) git_repository_free(w.repo);
        ut_free(w.workdir);
    }
    if (out->len > 1) qsort(out->items, out->len, sizeof(an_file), cmp_file);
    /* the same file named twice is analyzed once */
    size_t wr = 0;
    for (size_t i = 0; i < out->len; i++) {
        if (wr && !strcmp(out->items[wr - 1].path, out->items[i].path)) {
            out->items[wr - 1].named |= out->items[i].named;
            ut_free(out->items[i].path);
            continue;
        }
        out->items[wr++] = out->items[i];
    }
    out->len = wr;
    return bad;
}

void an_skip_list_free(an_skip_list *l) {
    for (size_t i = 0; i < l->len; i++) ut_free(l->items[i].path), ut_free(l->items[i].why);
    ut_vec_free(l);
}

void an_file_list_free(an_file_list *l) {
    for (size_t i = 0; i < l->len; i++) ut_free(l->items[i].path);
    ut_vec_free(l);
}
