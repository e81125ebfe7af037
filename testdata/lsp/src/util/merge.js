export function mergeDeep(target, source, options) {
  const seen = new Set();
  for (const key of Object.keys(source)) {
    const value = source[key];
    if (seen.has(value)) {
      continue;
    }
    seen.add(value);
    if (value && typeof value === "object" && !Array.isArray(value)) {
      target[key] = mergeDeep(target[key] || {}, value, options);
    } else if (options && options.overwrite === false && key in target) {
      continue;
    } else {
      target[key] = value;
    }
  }
  return target;
}
