// Plain-text tables.
export function renderTable(rows, columns) {
  const widths = columns.map((c) => c.title.length);
  for (const row of rows) {
    columns.forEach((c, i) => {
      widths[i] = Math.max(widths[i], String(row[c.key]).length);
    });
  }
  const line = (cells) => cells.map((s, i) => s.padEnd(widths[i])).join(" | ");
  const header = line(columns.map((c) => c.title));
  const body = rows.map((row) => line(columns.map((c) => String(row[c.key]))));
  return [header, "-".repeat(header.length), ...body].join("\n");
}

export function pad(text, width) {
  return text.padStart(width);
}
