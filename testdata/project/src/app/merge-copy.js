import { log } from "./log.js";

/* A copy of merge with another layout and comments: strict finds it. */
export function merge(target, source)
{
    const result = { ...target }; // shallow copy first
    for (const key of Object.keys(source))
    {
        const value = source[key];
        if (value && typeof value === "object" && !Array.isArray(value))
        {
            result[key] = merge(result[key] || {}, value);
        }
        else if (value !== undefined) { result[key] = value; }
        else { delete result[key]; }
    }
    return result;
}

log("loaded");
