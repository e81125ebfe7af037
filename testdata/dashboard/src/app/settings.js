import { defaults } from "./defaults.js";

/* The settings of the app, merged over the defaults. */
function combine(base, extra) {
  const out = { ...base };
  for (const name of Object.keys(extra)) {
    const item = extra[name];
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

export const settings = combine(defaults, { theme: "dark" });
