// The visible nodes of a syntax tree under a node, in document order, for
// `engine::visible_nodes`: one pass over tree-sitter's subtrees with a stack of
// where each level is. Tree-sitter's public cursor finds a node's next
// sibling again from its parent on every step (the alias sequence, the
// child index, the position), which made the walk for leaves a tenth of a
// cold scan.
//
// What is visible, and where, is as the cursor and `ts_node_*` have it: a
// child is visible when its symbol is, or when the parent's production
// aliases it (extras take no alias and no structural index); a hidden
// child with visible children is walked through; a child's start is its
// parent's start for the first, and the previous child's end plus its own
// padding after that.

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tree_sitter/api.h"
#include "./language.h"
#include "./length.h"
#include "./subtree.h"
#include "./tree.h"

// What the visitor answers for a node.
enum {
  DUPCHECK_DESCEND = 0,  // walk its visible children next
  DUPCHECK_SKIP = 1,     // go on after it
  DUPCHECK_STOP = 2,     // end the walk
};

// A visible node, with what the walk knows of it already: its public
// symbol (its alias, if any), its byte range, and whether it has visible
// children, so that the visitor need not ask tree-sitter again.
typedef struct {
  TSNode node;
  uint32_t start;
  uint32_t end;
  TSSymbol symbol;
  bool has_children;
} DupcheckVisible;

// Called with each visible node.
typedef uint32_t (*DupcheckVisit)(void *context, const DupcheckVisible *visible);

// One level of the walk: the children of a subtree, the next one's index
// and structural index, and where it starts.
typedef struct {
  const Subtree *children;
  uint32_t count;
  uint32_t index;
  uint32_t structural;
  const TSSymbol *aliases;
  Length position;
} Level;

typedef struct {
  Level *levels;
  uint32_t size;
  uint32_t capacity;
  Level inline_levels[64];
} Levels;

static void push(Levels *self, const TSTree *tree, Subtree parent, Length position) {
  if (self->size == self->capacity) {
    uint32_t capacity = self->capacity * 2;
    Level *grown;
    if (self->levels == self->inline_levels) {
      grown = malloc(capacity * sizeof(Level));
      if (grown) memcpy(grown, self->levels, self->size * sizeof(Level));
    } else {
      grown = realloc(self->levels, capacity * sizeof(Level));
    }
    // As Rust does when memory runs out.
    if (!grown) abort();
    self->levels = grown;
    self->capacity = capacity;
  }
  self->levels[self->size++] = (Level){
    .children = ts_subtree_children(parent),
    .count = parent.ptr->child_count,
    .index = 0,
    .structural = 0,
    .aliases = ts_language_alias_sequence(tree->language, parent.ptr->production_id),
    .position = position,
  };
}

// Visits `root`, then, while the visitor says so, the visible nodes under
// it. Returns false when the visitor stopped the walk.
bool dupcheck_visible_nodes(TSNode root, DupcheckVisit visit, void *context) {
  const TSTree *tree = root.tree;
  const Subtree *root_subtree = (const Subtree *)root.id;
  bool root_children = ts_subtree_visible_child_count(*root_subtree) > 0;
  DupcheckVisible visible = {
    .node = root,
    .start = ts_node_start_byte(root),
    .end = ts_node_end_byte(root),
    .symbol = ts_node_symbol(root),
    .has_children = root_children,
  };
  uint32_t step = visit(context, &visible);
  if (step == DUPCHECK_STOP) return false;
  if (step == DUPCHECK_SKIP || !root_children) return true;

  Levels levels = {.levels = NULL, .size = 0, .capacity = 64};
  levels.levels = levels.inline_levels;
  Length start = {
    .bytes = root.context[0],
    .extent = {.row = root.context[1], .column = root.context[2]},
  };
  push(&levels, tree, *root_subtree, start);
  bool finished = true;
  while (finished && levels.size > 0) {
    Level *level = &levels.levels[levels.size - 1];
    if (level->index == level->count) {
      levels.size--;
      continue;
    }
    const Subtree *child = &level->children[level->index];
    Length position = level->position;
    TSSymbol alias = 0;
    if (!ts_subtree_extra(*child)) {
      if (level->aliases) alias = level->aliases[level->structural];
      level->structural++;
    }
    level->index++;
    level->position = length_add(level->position, ts_subtree_size(*child));
    if (level->index < level->count) {
      level->position = length_add(level->position, ts_subtree_padding(level->children[level->index]));
    }
    bool has_children = ts_subtree_visible_child_count(*child) > 0;
    if (ts_subtree_visible(*child) || alias != 0) {
      TSSymbol symbol = alias ? alias : ts_subtree_symbol(*child);
      visible = (DupcheckVisible){
        .node = ts_node_new(tree, child, position, alias),
        .start = position.bytes,
        .end = position.bytes + ts_subtree_size(*child).bytes,
        .symbol = ts_language_public_symbol(tree->language, symbol),
        .has_children = has_children,
      };
      step = visit(context, &visible);
      if (step == DUPCHECK_STOP) {
        finished = false;
      } else if (step == DUPCHECK_DESCEND && has_children) {
        push(&levels, tree, *child, position);
      }
    } else if (has_children) {
      // Hidden: its visible children are its parent's.
      push(&levels, tree, *child, position);
    }
  }
  if (levels.levels != levels.inline_levels) free(levels.levels);
  return finished;
}
