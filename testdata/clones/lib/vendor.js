import { log } from "./log.js";

function merge(target, source) {
  for (const key of Object.keys(source)) {
    const value = source[key];
    if (value && typeof value === "object" && !Array.isArray(value)) {
      if (!target[key] || typeof target[key] !== "object") {
        target[key] = {};
      }
      merge(target[key], value);
    } else if (Array.isArray(value)) {
      target[key] = value.slice();
    } else {
      target[key] = value;
    }
  }
  return target;
}

log("vendor loaded");
