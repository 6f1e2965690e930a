/* an_capi: header declarations through libclang's cursor visitor (recursing into extern "C" blocks and
 * namespaces; only cursors whose expansion location is the header itself). */
#include "analyzer/c/an_capi.h"
#include "analyzer/c/an_clang.h"
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

typedef struct {
    CXFile file;
    an_capi_decls *out;
    char *enum_name; /* the enum being visited */
} visit_ctx;

static bool in_header(visit_ctx *v, CXCursor c) {
    CXFile f = NULL;
    CL(clang_getExpansionLocation)(CL(clang_getCursorLocation)(c), &f, NULL, NULL, NULL);
    return f && f == v->file;
}

static void push(visit_ctx *v, an_api_kind k, char *name, const char *parent) {
    if (!*name || !strncmp(name, "(anonymous", 10) || !strncmp(name, "(unnamed", 8)) { ut_free(name); return; }
    for (size_t i = 0; i < v->out->len; i++)
        if (v->out->items[i].kind == k && !strcmp(v->out->items[i].name, name)) { ut_free(name); return; }
    an_capi_decl d = {k, name, parent ? ut_strdup(parent) : NULL};
    ut_vec_push(v->out, d);
}

static enum CXChildVisitResult visit(CXCursor c, CXCursor parent, CXClientData data) {
    visit_ctx *v = data;
    enum CXCursorKind k = CL(clang_getCursorKind)(c);
    if (k == CXCursor_LinkageSpec || k == CXCursor_UnexposedDecl || k == CXCursor_Namespace) return CXChildVisit_Recurse;
    if (!in_header(v, c)) return CXChildVisit_Continue;
    char *name = an_clang_take(CL(clang_getCursorSpelling)(c));
    switch (k) {
    case CXCursor_FunctionDecl:
    case CXCursor_FunctionTemplate: push(v, AN_KIND_FUNCTION, name, NULL); break;
    case CXCursor_TypedefDecl:
    case CXCursor_StructDecl:
    case CXCursor_UnionDecl:
    case CXCursor_ClassDecl: push(v, AN_KIND_TYPE, name, NULL); break;
    case CXCursor_EnumDecl: {
        char *saved = v->enum_name;
        v->enum_name = name;
        CL(clang_visitChildren)(c, visit, v);
        v->enum_name = saved;
        push(v, AN_KIND_ENUM, name, NULL);
        break;
    }
    case CXCursor_EnumConstantDecl: push(v, AN_KIND_ENUMERATOR, name, v->enum_name); break;
    case CXCursor_MacroDefinition:
        if (name[0] == '_' && (name[1] == '_' || (name[1] >= 'A' && name[1] <= 'Z'))) { ut_free(name); break; }
        push(v, CL(clang_Cursor_isMacroFunctionLike)(c) ? AN_KIND_MACRO : AN_KIND_ENUMERATOR, name, NULL);
        break;
    default: ut_free(name); break;
    }
    return CXChildVisit_Continue;
}

bool an_capi_extract(const char *header, const char *const *inc, size_t ninc, an_capi_decls *out, char **why) {
    const char *lwhy;
    if (!an_clang_load(&lwhy)) { *why = ut_strdup(lwhy); return false; }
    if (access(header, R_OK) != 0) {
        char b[PATH_MAX + 32];
        snprintf(b, sizeof b, "%s: not found", header);
        *why = ut_strdup(b);
        return false;
    }
    char main_text[PATH_MAX + 32];
    snprintf(main_text, sizeof main_text, "#include \"%s\"\n", header);
    struct CXUnsavedFile uf = {"/xpuify-capi/main.cpp", main_text, strlen(main_text)};
    UT_VEC(const char *) args = {0};
    static const char *const base[] = {"-x", "c++", "-std=c++17", "-w", "-ferror-limit=0", NULL};
    for (int i = 0; base[i]; i++) ut_vec_push(&args, base[i]);
    char **incs = ut_calloc(ninc + 1, sizeof(char *));
    for (size_t i = 0; i < ninc; i++) {
        incs[i] = ut_malloc(strlen(inc[i]) + 3);
        sprintf(incs[i], "-I%s", inc[i]);
        ut_vec_push(&args, incs[i]);
    }
    CXIndex idx = CL(clang_createIndex)(0, 0);
    CXTranslationUnit tu = NULL;
    enum CXErrorCode ec = CL(clang_parseTranslationUnit2)(idx, uf.Filename, args.items, (int)args.len, &uf, 1,
                                                         CXTranslationUnit_KeepGoing | CXTranslationUnit_DetailedPreprocessingRecord |
                                                             CXTranslationUnit_SkipFunctionBodies, &tu);
    bool ok = false;
    if (ec == CXError_Success && tu) {
        visit_ctx v = {CL(clang_getFile)(tu, header), out, NULL};
        if (v.file) {
            CL(clang_visitChildren)(CL(clang_getTranslationUnitCursor)(tu), visit, &v);
            ok = true;
        } else {
            *why = ut_strdup("libclang did not read the header");
        }
        CL(clang_disposeTranslationUnit)(tu);
    } else {
        *why = ut_strdup("libclang could not parse the header");
    }
    CL(clang_disposeIndex)(idx);
    for (size_t i = 0; i < ninc; i++) ut_free(incs[i]);
    ut_free(incs);
    ut_vec_free(&args);
    return ok;
}

void an_capi_decls_free(an_capi_decls *d) {
    for (size_t i = 0; i < d->len; i++) ut_free(d->items[i].name), ut_free(d->items[i].parent);
    ut_vec_free(d);
}
