// The same code with renamed identifiers: only mild and weak find it.
function combine(left, right) {
  const out = { ...left };
  for (const name of Object.keys(right)) {
    const item = right[name];
    if (item && typeof item === "object" && !Array.isArray(item)) {
      out[name] = combine(out[name] || {}, item);
    } else if (item !== undefined) {
      out[name] = item;
    } else {
      delete out[name];
    }
  }
  return out;
}

module.exports = { combine };
