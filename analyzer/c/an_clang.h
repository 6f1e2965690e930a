/* an_clang: libclang, loaded on first use (dlopen) so that runs without C files never pay for it: the function
 * table every C module calls through (CL(clang_x)(...)), and where the library and its version came from. */
#ifndef AN_CLANG_H
#define AN_CLANG_H
#include <clang-c/CXCompilationDatabase.h>
#include <clang-c/Index.h>
#include <stdbool.h>

#define AN_CLANG_FUNCTIONS(X)                                                                                   \
    X(clang_createIndex) X(clang_disposeIndex) X(clang_parseTranslationUnit2) X(clang_disposeTranslationUnit)    \
    X(clang_getFile) X(clang_getLocationForOffset) X(clang_getRange) X(clang_getRangeStart) X(clang_getRangeEnd) \
    X(clang_tokenize) X(clang_disposeTokens) X(clang_getTokenKind) X(clang_getTokenExtent)                       \
    X(clang_getFileLocation) X(clang_getExpansionLocation) X(clang_getSpellingLocation) X(clang_getCursor)        \
    X(clang_getCursorKind) X(clang_isDeclaration) X(clang_isReference) X(clang_isExpression) X(clang_isInvalid)  \
    X(clang_getCursorReferenced) X(clang_getCursorLocation) X(clang_getCursorSpelling) X(clang_getCString)       \
    X(clang_disposeString) X(clang_Cursor_isNull) X(clang_getCursorSemanticParent) X(clang_getCursorExtent)      \
    X(clang_getTranslationUnitCursor) X(clang_visitChildren) X(clang_getNumDiagnostics) X(clang_getDiagnostic)   \
    X(clang_getDiagnosticSeverity) X(clang_disposeDiagnostic) X(clang_getDiagnosticLocation)                     \
    X(clang_getDiagnosticSpelling) X(clang_getDiagnosticCategoryText) X(clang_getSkippedRanges) X(clang_disposeSourceRangeList)                     \
    X(clang_CompilationDatabase_fromDirectory) X(clang_CompilationDatabase_getCompileCommands)                   \
    X(clang_CompilationDatabase_dispose) X(clang_CompilationDatabase_getAllCompileCommands) X(clang_CompileCommands_getSize) X(clang_CompileCommands_getCommand)   \
    X(clang_CompileCommands_dispose) X(clang_CompileCommand_getNumArgs) X(clang_CompileCommand_getArg)           \
    X(clang_CompileCommand_getDirectory) X(clang_getClangVersion) X(clang_getFileName)                           \
    X(clang_Cursor_isMacroFunctionLike) X(clang_equalCursors) X(clang_getCursorDefinition)                       \
    X(clang_Location_isInSystemHeader) X(clang_getNullCursor) X(clang_getEnumDeclIntegerType) X(clang_getNumOverloadedDecls) X(clang_getOverloadedDecl) \
    X(clang_getCursorType) X(clang_getPointeeType) X(clang_getTypeSpelling) X(clang_getCanonicalType)                 \
    X(clang_getTypeDeclaration)                                                                                      \
    X(clang_Cursor_getNumTemplateArguments) X(clang_Cursor_getTemplateArgumentKind) X(clang_Cursor_getTemplateArgumentType) \
    X(clang_Cursor_getTemplateArgumentValue) X(clang_isCursorDefinition) X(clang_Cursor_getNumArguments)           \
    X(clang_Cursor_getArgument) X(clang_Cursor_getStorageClass) X(clang_getArrayElementType) X(clang_getTypedefDeclUnderlyingType) X(clang_isConstQualifiedType) X(clang_getSpecializedCursorTemplate) \
    X(clang_Cursor_Evaluate) X(clang_EvalResult_getKind) X(clang_EvalResult_getAsLongLong) X(clang_EvalResult_dispose)

typedef struct {
#define AN_CLANG_FIELD(f) __typeof__(f) *f;
    AN_CLANG_FUNCTIONS(AN_CLANG_FIELD)
#undef AN_CLANG_FIELD
} an_clang_api;

/* Loads libclang once per process (thread-safe). NULL when it cannot be loaded; *why then says why. */
const an_clang_api *an_clang_load(const char **why);
/* What identifies the libclang load() takes (its file: path, inode, size and times; else its version string), for
 * the results cache's key of C files; loads the library only when no absolute path names it. Thread-safe. */
const char *an_clang_identity(void);
/* Calls a libclang function through the loaded table (an_clang_load must have succeeded). */
extern const an_clang_api *an_cl;
#define CL(f) (an_cl->f)
/* A CXString as a heap C string (disposes the CXString). */
char *an_clang_take(CXString s);
#endif
