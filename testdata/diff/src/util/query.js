// Query strings.
export function parseQuery(text) {
  const params = {};
  const trimmed = text.startsWith("?") ? text.slice(1) : text;
  for (const pair of trimmed.split("&")) {
    if (!pair) {
      continue;
    }
    const [rawKey, rawValue = ""] = pair.split("=");
    const key = decodeURIComponent(rawKey.replace(/\+/g, " "));
    const value = decodeURIComponent(rawValue.replace(/\+/g, " "));
    params[key] = key in params ? [].concat(params[key], value) : value;
  }
  return params;
}
