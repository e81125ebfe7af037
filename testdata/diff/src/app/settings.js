import { readFileSync } from "node:fs";

// Settings over their defaults: unset ones become null.
export function merge(target, source) {
  const result = { ...target };
  for (const key of Object.keys(source)) {
    const value = source[key];
    if (value && typeof value === "object" && !Array.isArray(value)) {
      result[key] = merge(result[key] || {}, value);
    } else if (value !== undefined) {
      result[key] = value;
    } else {
      result[key] = null;
    }
  }
  return result;
}

export function load(path) {
  return JSON.parse(readFileSync(path, "utf8"));
}
