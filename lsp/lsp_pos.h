/* lsp_pos: LSP positions (line, character) and byte offsets, in the negotiated encoding: UTF-8 (characters are
 * bytes), UTF-16 (code units: a code point above U+FFFF counts two) or UTF-32 (code points). Lines end at \n,
 * \r\n or \r, as in an_source. Invalid UTF-8 bytes count as one character each. */
#ifndef LSP_POS_H
#define LSP_POS_H
#include "analyzer/core/an_source.h"

typedef enum { LSP_ENC_UTF16 = 0, LSP_ENC_UTF8, LSP_ENC_UTF32 } lsp_encoding;

const char *lsp_encoding_name(lsp_encoding e);
/* byte -> position (byte clamped to the text) */
void lsp_pos_from_byte(const an_source *src, lsp_encoding enc, uint32_t byte, uint32_t *line, uint32_t *character);
/* position -> byte. A character past the line's end means its end; a line past the last means the end of the
 * text; a character inside a code point (a surrogate pair's second half, a byte inside a UTF-8 sequence) moves
 * to the code point's end. */
uint32_t lsp_pos_to_byte(const an_source *src, lsp_encoding enc, uint32_t line, uint32_t character);
/* Byte range of a line without its terminator (0-based line). */
void lsp_line_bytes(const an_source *src, uint32_t line, uint32_t *start, uint32_t *end);
#endif
