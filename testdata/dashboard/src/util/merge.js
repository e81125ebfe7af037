// Deep merge of plain objects.
export function merge(target, source) {
  const result = { ...target };
  for (const key of Object.keys(source)) {
    const value = source[key];
    if (value && typeof value === "object" && !Array.isArray(value)) {
      result[key] = merge(result[key] || {}, value);
    } else if (value !== undefined) {
      result[key] = value;
    } else {
      delete result[key];
    }
  }
  return result;
}
