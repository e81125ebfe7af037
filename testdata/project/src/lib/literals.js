// Renamed, and with other literal values: only weak finds it.
function overlay(base, patch) {
  const acc = { ...base };
  for (const field of Object.keys(patch)) {
    const v = patch[field];
    if (v && typeof v === 'function' && !Array.isArray(v)) {
      acc[field] = overlay(acc[field] || {}, v);
    } else if (v !== undefined) {
      acc[field] = v;
    } else {
      delete acc[field];
    }
  }
  return acc;
}
