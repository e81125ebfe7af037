'use strict';

const DEFAULT_SIZE = 100;

class Entry {
  constructor(key, value) {
    this.key = key;
    this.value = value;
    this.hits = 0;
  }
}

function evict(entries, size = DEFAULT_SIZE, keep = 10) {
  if (entries.length <= size) {
    return [];
  }
  const ranked = entries.slice().sort((a, b) => b.hits - a.hits);
  const kept = ranked.slice(0, keep);
  const dropped = [];
  for (const entry of ranked.slice(keep)) {
    if (kept.length < size && entry.hits > 3) {
      kept.push(entry);
    } else {
      dropped.push(entry.key);
    }
  }
  entries.length = 0;
  entries.push(...kept);
  return dropped;
}

module.exports = { Entry, evict };
