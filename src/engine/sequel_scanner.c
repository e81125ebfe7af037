// The SQL grammar (tree-sitter-sequel 0.3.11) with its external scanner
// mended where it leaks, for `engine::grammar`. That scanner reads the
// tags of dollar-quoted strings (`$$`, `$body$`) into buffers of its own
// (plain malloc, 1 KiB each), and loses some of them: in a server that
// parses SQL for as long as it runs, memory would grow without end.
//
// - `deserialize` sets the open tag without freeing the one the scanner
//   holds. Tree-sitter restores the scanner's state before every external
//   scan, so every restore after a scan that found nothing leaked (the
//   fuzz target `snippet` found it). Here the tag held is freed first.
// - `scan`, asked for a dollar-quoted string inside a dollar-quoted body
//   (but not for the body's end), reads a tag and drops it unfreed when it
//   is the body's own. That case is answered here, as the grammar answers
//   it: no token for the body's tag, else the string up to the same tag
//   again; every other call goes to the grammar's scanner.
//
// The grammar's scanner state is a struct whose one field is the open tag
// (a NUL-terminated string on the heap, or NULL): `Cargo.toml` pins the
// crate's version, whose layout this reads; the test
// `issue_9_sql_dollar_quotes_parse_as_the_grammar_parses_them` compares
// the mended grammar's trees with the grammar's own.

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wctype.h>

#include "./parser.h"

// The grammar's external tokens, in its order.
enum {
  START_TAG = 0,
  END_TAG = 1,
  DOLLAR_QUOTED_STRING = 2,
};

// The grammar's scanner state.
typedef struct {
  char *open_tag;
} SequelState;

static const TSLanguage *grammar;
static TSLanguage mended;

// A tag read from the text: its bytes as the grammar keeps them (each
// character's low byte), NUL-terminated.
typedef struct {
  char *text;
  size_t length;
  size_t capacity;
} Tag;

static void tag_push(Tag *tag, int32_t c) {
  if (tag->length + 2 > tag->capacity) {
    size_t capacity = tag->capacity ? tag->capacity * 2 : 16;
    char *grown = realloc(tag->text, capacity);
    // As Rust does when memory runs out.
    if (!grown) abort();
    tag->text = grown;
    tag->capacity = capacity;
  }
  tag->text[tag->length++] = (char)c;
  tag->text[tag->length] = '\0';
}

// Reads `$tag$` where the lexer is, as the grammar's scanner reads it: no
// tag and nothing read unless it starts with `$`; a tag ends at the next
// `$`, and is no tag if white space or the end of the text comes first
// (what was read stays read).
static bool read_tag(TSLexer *lexer, Tag *tag) {
  if (lexer->lookahead != '$') return false;
  tag_push(tag, '$');
  lexer->advance(lexer, false);
  while (lexer->lookahead != '$' && !iswspace(lexer->lookahead) && !lexer->eof(lexer)) {
    tag_push(tag, lexer->lookahead);
    lexer->advance(lexer, false);
  }
  if (lexer->lookahead != '$') return false;
  tag_push(tag, '$');
  lexer->advance(lexer, false);
  return true;
}

// A dollar-quoted string where the body tagged `open` is open: none if
// the tag where the lexer is (after white space) is `open` itself; else
// the text up to the same tag again.
static bool dollar_quoted_string(const char *open, TSLexer *lexer) {
  lexer->mark_end(lexer);
  while (iswspace(lexer->lookahead)) lexer->advance(lexer, true);
  Tag start = {0};
  bool found = false;
  if (read_tag(lexer, &start) && strcmp(start.text, open) != 0) {
    while (!lexer->eof(lexer)) {
      Tag end = {0};
      bool is_tag = read_tag(lexer, &end);
      bool same = is_tag && strcmp(end.text, start.text) == 0;
      free(end.text);
      if (same) {
        lexer->mark_end(lexer);
        lexer->result_symbol = DOLLAR_QUOTED_STRING;
        found = true;
        break;
      }
      if (!is_tag) lexer->advance(lexer, false);
    }
  }
  free(start.text);
  return found;
}

static bool mended_scan(void *payload, TSLexer *lexer, const bool *valid) {
  const SequelState *state = payload;
  if (state->open_tag && !valid[END_TAG] && valid[DOLLAR_QUOTED_STRING]) {
    return dollar_quoted_string(state->open_tag, lexer);
  }
  return grammar->external_scanner.scan(payload, lexer, valid);
}

static void mended_deserialize(void *payload, const char *buffer, unsigned length) {
  SequelState *state = payload;
  free(state->open_tag);
  state->open_tag = NULL;
  grammar->external_scanner.deserialize(payload, buffer, length);
}

// The mended copy of `sql`, the grammar's language: made on the first
// call (the caller calls once), the same on every call after.
const TSLanguage *dupcheck_mended_sql(const TSLanguage *sql) {
  if (grammar) return &mended;
  // An ABI 14 grammar ends before the fields of ABI 15, which tree-sitter
  // reads only from grammars of 15 or later: those stay zero.
  size_t size = sql->abi_version >= 15 ? sizeof(TSLanguage) : offsetof(TSLanguage, name);
  memcpy(&mended, sql, size);
  grammar = sql;
  mended.external_scanner.scan = mended_scan;
  mended.external_scanner.deserialize = mended_deserialize;
  return &mended;
}
