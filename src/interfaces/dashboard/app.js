// dupcheck's dashboard: a client of the public API, nothing more.
//
// It reads /api/health, /api/stats, /api/tree, /api/clones and /api/clone,
// posts to /api/check, and polls /api/health to redraw when the index
// changes. Every figure it shows comes from those answers.

const POLL_MS = 2000;
const CLONES_PAGE = 50;
const TREE_PAGE = 200;
const SVG = "http://www.w3.org/2000/svg";

const $ = (id) => document.getElementById(id);
const fmt = (n) => Number(n).toLocaleString("en-US");
const pct = (p) => `${Number(p).toLocaleString("en-US", { maximumFractionDigits: 2 })} %`;

const view = {
  path: "",            // the folder shown
  folder: null,        // its /api/tree answer
  children: [],        // its children loaded so far
  sort: { key: "lines", dir: "desc" },
  table: false,        // the table instead of the treemap
  filters: { path: "", format: "" },
  cursor: null,        // the next page of clones
  clone: null,         // the clone shown
  seen: null,          // the index version last drawn
  mode: "",
};

/** GETs or POSTs `path` and answers its JSON; throws with the API's message. */
async function api(path, options = {}) {
  const res = await fetch(path, {
    ...options,
    headers: { Accept: "application/json", ...(options.headers || {}) },
  });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) {
    const err = new Error(body.message || `${res.status} ${res.statusText}`);
    err.status = res.status;
    throw err;
  }
  return body;
}

function el(tag, attrs = {}, ...kids) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const kid of kids) node.append(kid);
  return node;
}

function time(iso) {
  return iso ? new Date(iso).toLocaleTimeString("en-GB") : "never";
}

// ---------------------------------------------------------------- colours

// ColorBrewer's RdYlBu, reversed: blue (no duplication) to red (all of it),
// readable with every common colour-vision deficiency.
const RAMP = [
  [0x2c, 0x7b, 0xb6],
  [0xab, 0xd9, 0xe9],
  [0xfe, 0xe0, 0x90],
  [0xfd, 0xae, 0x61],
  [0xd7, 0x19, 0x1c],
];

function colour(percentage) {
  const t = Math.max(0, Math.min(1, percentage / 100)) * (RAMP.length - 1);
  const i = Math.min(RAMP.length - 2, Math.floor(t));
  const f = t - i;
  const rgb = RAMP[i].map((c, k) => Math.round(c + (RAMP[i + 1][k] - c) * f));
  const light = (0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2]) > 150;
  return { fill: `rgb(${rgb.join(",")})`, text: light ? "#111" : "#fff" };
}

// ---------------------------------------------------------------- state

async function refreshState(health) {
  const stats = await api("/api/stats");
  const total = stats.statistics.total;
  showKnown(health);
  $("s-files").textContent = fmt(total.sources);
  $("s-lines").textContent = fmt(total.lines);
  $("s-dup").textContent = `${fmt(total.duplicatedLines)} (${pct(total.percentage)})`;
  $("s-clones").textContent = fmt(total.clones);
}

/** What /api/health knows, shown before the statistics are (the scan's
 * files, lines and time, the server's settings). */
function showKnown(health) {
  $("dir").textContent = health.workingDirectory;
  $("dir").title = health.workingDirectory;
  $("s-files").textContent = fmt(health.files);
  $("s-lines").textContent = fmt(health.lines);
  $("s-mode").textContent = `${health.mode} · ${health.minTokens} · ${health.minLines}`;
  const took = health.scanSeconds === null ? "" : ` (${seconds(health.scanSeconds)})`;
  $("s-scan").textContent = time(health.lastScanTime) + took;
  $("s-update").textContent = time(health.lastUpdateTime);
  $("s-scanning").textContent = health.scanning ? "yes" : "no";
  // The Try form's mode starts as the server's; a choice made is kept.
  if (!view.mode) $("check-mode").value = health.mode;
  view.mode = health.mode;
  $("mode-note").textContent = `The server's mode is ${health.mode}; at least ${health.minTokens} tokens.`;
}

/** Clone detection's progress, where its figures will be. */
function showDetecting(health) {
  showKnown(health);
  const d = health.clones;
  const running = d.status === "running";
  const share = running ? ` ${Math.floor((100 * d.filesDone) / Math.max(1, d.files))} %` : "";
  $("s-dup").textContent = `detecting…${share}`;
  $("s-clones").textContent = `detecting…${share}`;
  const progress = running
    ? `${fmt(d.filesDone)} of ${fmt(d.files)} files looked up in ${seconds(d.seconds)}`
    : "starting";
  $("live").textContent = `Checks are answered; the statistics, the tree and the clone list follow when clone detection ends (${progress}).`;
}

function seconds(s) {
  return `${Number(s).toLocaleString("en-US", { maximumFractionDigits: 1 })} s`;
}

// ---------------------------------------------------------------- tree

async function loadTree(path, { keep = false } = {}) {
  let folder;
  try {
    folder = await api(`/api/tree?path=${encodeURIComponent(path)}&limit=${TREE_PAGE}`);
  } catch (err) {
    if (err.status === 404 && path !== "") {
      // The folder is gone (files deleted): show its parent.
      return loadTree(path.split("/").slice(0, -1).join("/"), { keep });
    }
    throw err;
  }
  view.path = folder.folder.path;
  view.folder = folder;
  view.children = folder.children;
  drawCrumbs();
  drawTree();
  if (!keep && document.activeElement && document.activeElement.closest("#map, #table-wrap, #crumbs")) {
    $(view.table ? "tree-table" : "treemap").focus?.();
  }
}

async function moreChildren() {
  const folder = view.folder;
  if (folder.nextOffset === null) return;
  const next = await api(`/api/tree?path=${encodeURIComponent(view.path)}&limit=${TREE_PAGE}&offset=${folder.nextOffset}`);
  view.folder = { ...folder, nextOffset: next.nextOffset };
  view.children = view.children.concat(next.children);
  drawTree();
}

function drawCrumbs() {
  const nav = $("crumbs");
  nav.replaceChildren();
  const parts = view.path ? view.path.split("/") : [];
  const trail = [["(top)", ""]].concat(parts.map((p, i) => [p, parts.slice(0, i + 1).join("/")]));
  trail.forEach(([name, path], i) => {
    if (i > 0) nav.append(el("span", { class: "sep", "aria-hidden": "true", text: "/" }));
    const last = i === trail.length - 1;
    nav.append(el("button", {
      type: "button", text: name, "aria-current": last ? "location" : null,
      onclick: last ? null : () => loadTree(path),
    }));
  });
}

function drawTree() {
  const f = view.folder.folder;
  const shown = view.children.length;
  const more = $("more-children");
  more.replaceChildren();
  more.append(`${fmt(f.files)} files, ${fmt(f.lines)} lines, ${pct(f.percentage)} duplicated in ${f.path || "the project"}`);
  if (view.folder.nextOffset !== null) {
    more.append(` · ${fmt(shown)} of ${fmt(view.folder.totalChildren)} shown `,
      el("button", { type: "button", text: "Show more", onclick: moreChildren }));
  }
  drawMap();
  drawTable();
}

function describe(node) {
  return `${node.path || "(top)"}\n${node.kind === "folder" ? `${fmt(node.files)} files, ` : ""}${fmt(node.lines)} lines\n`
    + `${fmt(node.duplicatedLines)} duplicated (${pct(node.percentage)})\n${fmt(node.clones)} clones`;
}

function open(node) {
  if (node.kind === "folder") {
    loadTree(node.path);
  } else {
    $("f-path").value = node.path;
    view.filters.path = node.path;
    loadClones();
    $("what").scrollIntoView({ behavior: "smooth", block: "start" });
    $("clones").focus?.();
  }
}

/** Squarified treemap (Bruls, Huizing, van Wijk): rectangles for `values`. */
function squarify(values, x, y, w, h) {
  const total = values.reduce((a, b) => a + b, 0);
  const out = [];
  if (total <= 0 || w <= 0 || h <= 0) return out;
  const scale = (w * h) / total;
  const areas = values.map((v) => v * scale);
  const worst = (row, side) => {
    const s = row.reduce((a, b) => a + b, 0);
    const max = Math.max(...row), min = Math.min(...row);
    return Math.max((side * side * max) / (s * s), (s * s) / (side * side * min));
  };
  let row = [];
  const place = () => {
    const s = row.reduce((a, b) => a + b, 0);
    if (w >= h) {
      const cw = s / h;
      let yy = y;
      for (const a of row) { out.push([x, yy, cw, a / cw]); yy += a / cw; }
      x += cw; w -= cw;
    } else {
      const rh = s / w;
      let xx = x;
      for (const a of row) { out.push([xx, y, a / rh, rh]); xx += a / rh; }
      y += rh; h -= rh;
    }
    row = [];
  };
  for (let i = 0; i < areas.length;) {
    const side = Math.min(w, h);
    if (row.length === 0 || worst(row.concat(areas[i]), side) <= worst(row, side)) {
      row.push(areas[i]);
      i += 1;
    } else {
      place();
    }
  }
  if (row.length) place();
  return out;
}

function drawMap() {
  const svg = $("treemap");
  const box = $("map");
  const w = box.clientWidth, h = box.clientHeight;
  // Hidden (the table is shown): drawn when shown again.
  if (w === 0 || h === 0) return;
  svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
  svg.replaceChildren();
  const nodes = view.children.filter((n) => n.lines > 0);
  const rects = squarify(nodes.map((n) => n.lines), 0, 0, w, h);
  const tip = $("tip");
  nodes.forEach((node, i) => {
    const [x, y, cw, ch] = rects[i];
    const c = colour(node.percentage);
    const label = `${node.kind === "folder" ? "Folder" : "File"} ${node.name}: ${fmt(node.lines)} lines, ${pct(node.percentage)} duplicated, ${fmt(node.clones)} clones`;
    const g = document.createElementNS(SVG, "g");
    g.setAttribute("class", "cell");
    g.setAttribute("tabindex", "0");
    g.setAttribute("role", "button");
    g.setAttribute("aria-label", label);
    g.dataset.path = node.path;
    const rect = document.createElementNS(SVG, "rect");
    rect.setAttribute("x", x); rect.setAttribute("y", y);
    rect.setAttribute("width", Math.max(0, cw)); rect.setAttribute("height", Math.max(0, ch));
    rect.setAttribute("fill", c.fill);
    g.append(rect);
    if (cw > 48 && ch > 18) {
      const text = document.createElementNS(SVG, "text");
      text.setAttribute("x", x + 5); text.setAttribute("y", y + 15);
      text.setAttribute("fill", c.text);
      const room = Math.floor((cw - 10) / 7);
      const name = node.name + (node.kind === "folder" ? "/" : "");
      text.textContent = name.length > room ? `${name.slice(0, Math.max(1, room - 1))}…` : name;
      g.append(text);
      if (ch > 34) {
        const sub = document.createElementNS(SVG, "text");
        sub.setAttribute("x", x + 5); sub.setAttribute("y", y + 30);
        sub.setAttribute("fill", c.text);
        sub.textContent = pct(node.percentage);
        g.append(sub);
      }
    }
    const show = (px, py) => {
      tip.textContent = describe(node);
      tip.hidden = false;
      const left = Math.min(px + 12, w - tip.offsetWidth - 4);
      const top = Math.min(py + 12, h - tip.offsetHeight - 4);
      tip.style.left = `${Math.max(4, left)}px`;
      tip.style.top = `${Math.max(4, top)}px`;
    };
    g.addEventListener("mousemove", (e) => {
      const r = box.getBoundingClientRect();
      show(e.clientX - r.left, e.clientY - r.top);
    });
    g.addEventListener("mouseleave", () => { tip.hidden = true; });
    g.addEventListener("focus", () => show(x + cw / 2, y + ch / 2));
    g.addEventListener("blur", () => { tip.hidden = true; });
    g.addEventListener("click", () => { tip.hidden = true; open(node); });
    g.addEventListener("keydown", (e) => {
      if (e.key === "Enter" || e.key === " ") { e.preventDefault(); tip.hidden = true; open(node); }
    });
    svg.append(g);
  });
}

function drawTable() {
  const { key, dir } = view.sort;
  const rows = [...view.children].sort((a, b) => {
    const x = a[key], y = b[key];
    const order = typeof x === "string" ? x.localeCompare(y) : x - y;
    return dir === "asc" ? order : -order;
  });
  for (const th of document.querySelectorAll("#tree-table th")) {
    const k = th.querySelector("button").dataset.sort;
    if (k === key) th.setAttribute("aria-sort", dir === "asc" ? "ascending" : "descending");
    else th.removeAttribute("aria-sort");
  }
  const body = document.querySelector("#tree-table tbody");
  body.replaceChildren(...rows.map((n) => el("tr", {},
    el("td", {}, el("button", {
      type: "button", class: "link", onclick: () => open(n),
      title: n.kind === "folder" ? "Open this folder" : "List this file's clones",
      text: n.name + (n.kind === "folder" ? "/" : ""),
    })),
    el("td", { class: "num", text: fmt(n.files) }),
    el("td", { class: "num", text: fmt(n.lines) }),
    el("td", { class: "num", text: fmt(n.duplicatedLines) }),
    el("td", { class: "num", text: pct(n.percentage) }),
    el("td", { class: "num", text: fmt(n.clones) }),
  )));
}

function showTable(table) {
  view.table = table;
  $("map").hidden = table;
  $("table-wrap").hidden = !table;
  $("show-map").setAttribute("aria-pressed", String(!table));
  $("show-table").setAttribute("aria-pressed", String(table));
  if (!table) drawMap();
}

// ---------------------------------------------------------------- clones

function place(p) {
  return `${p.file}:${p.startLine}–${p.endLine}`;
}

async function loadClones({ more = false } = {}) {
  const q = new URLSearchParams({ limit: String(CLONES_PAGE) });
  if (view.filters.path) q.set("path", view.filters.path);
  if (view.filters.format) q.set("format", view.filters.format);
  if (more && view.cursor) q.set("cursor", view.cursor);
  const list = $("clones");
  let page;
  try {
    page = await api(`/api/clones?${q}`);
  } catch (err) {
    $("clone-count").textContent = err.message;
    $("clone-count").classList.add("error");
    list.replaceChildren();
    return;
  }
  $("clone-count").classList.remove("error");
  view.cursor = page.nextCursor;
  if (!more) list.replaceChildren();
  for (const c of page.clones) {
    const item = el("li", {},
      el("a", { href: `#clone=${c.id}`, "data-id": c.id, "aria-current": view.clone === c.id ? "true" : null },
        el("span", { class: "size", text: `${fmt(c.lines)} lines · ${fmt(c.tokens)} tokens · ${c.format}` }),
        el("br"),
        el("span", { class: "places", text: `${place(c.first)} ↔ ${place(c.second)}` })));
    list.append(item);
  }
  const shown = list.children.length;
  $("clone-count").textContent = page.total === 0
    ? "No clones match."
    : `${fmt(page.total)} clones${shown < page.total ? `, the ${fmt(shown)} largest shown` : ""}.`;
  $("more-clones").hidden = page.nextCursor === null;
}

/** Marks the tokens of a place in its lines: char ranges per line. */
function marks(side, differing) {
  const differ = new Set(differing);
  const byLine = new Map();
  const add = (line, from, to, d) => {
    if (!byLine.has(line)) byLine.set(line, []);
    byLine.get(line).push([from, to, d]);
  };
  side.tokens.forEach(([sl, sc, el_, ec], i) => {
    const d = differ.has(i);
    if (sl === el_) { add(sl, sc, ec, d); return; }
    add(sl, sc, Infinity, d);
    for (let l = sl + 1; l < el_; l += 1) add(l, 1, Infinity, d);
    add(el_, 1, ec, d);
  });
  return byLine;
}

function codeBlock(side, differing, id) {
  const pre = el("pre", { class: "code", tabindex: "0", id });
  const ranges = marks(side, differing);
  side.text.split("\n").forEach((line, i) => {
    const number = side.startLine + i;
    const row = el("span", { class: "line", "data-line": String(number) });
    row.append(el("span", { class: "ln", "aria-hidden": "true", text: String(number) }));
    const chars = Array.from(line);
    const spans = (ranges.get(number) || []).sort((a, b) => a[0] - b[0]);
    let at = 1;
    for (const [from, to, d] of spans) {
      if (from > at) row.append(chars.slice(at - 1, from - 1).join(""));
      const start = Math.max(from, at);
      const end = Math.min(to, chars.length + 1);
      if (end > start) {
        row.append(el("mark", { class: d ? "differ" : null, text: chars.slice(start - 1, end - 1).join("") }));
      }
      at = Math.max(at, end);
    }
    if (at <= chars.length) row.append(chars.slice(at - 1).join(""));
    pre.append(row, "\n");
  });
  return pre;
}

// The definition a place lies in, as the side-by-side view says it:
// "The whole of OptionsBuilder.mergeOptions()", "Part of class Stats".
function symbolText(s) {
  const qualified = s.container ? `${s.container}.${s.name}` : s.name;
  const named = s.kind === "function" || s.kind === "method" ? `${qualified}()` : `${s.kind} ${qualified}`;
  return s.whole ? `The whole of ${named}` : `Part of ${named}`;
}

async function openClone(id, sideWanted) {
  const detail = $("detail");
  view.clone = id;
  for (const a of document.querySelectorAll("#clones a")) {
    if (a.dataset.id === id) a.setAttribute("aria-current", "true");
    else a.removeAttribute("aria-current");
  }
  let c;
  try {
    c = await api(`/api/clone?id=${encodeURIComponent(id)}`);
  } catch (err) {
    detail.replaceChildren(el("p", { class: "error", text: err.message }));
    return;
  }
  const sides = el("div", { class: "sides" });
  for (const [which, p] of [["first", c.first], ["second", c.second]]) {
    sides.append(el("div", { class: "side", "data-side": which },
      el("h3", {}, el("a", { href: `#clone=${c.id}&side=${which}`, text: place(p) })),
      ...(p.symbol ? [el("p", { class: "symbol", text: symbolText(p.symbol) })] : []),
      codeBlock(p, c.differing, `code-${which}`)));
  }
  const differ = c.differing.length;
  const renamed = (c.renamed || []).map(([a, b]) => `${a} → ${b}`).join(", ");
  const similar = c.similarity ? `, ${(c.similarity * 100).toFixed(1)}% similar` : "";
  detail.replaceChildren(
    el("p", { class: "hint", text: `${fmt(c.lines)} lines, ${fmt(c.tokens)} tokens of ${c.format}${similar}.` }),
    ...(renamed ? [el("p", { class: "renamed", text: `Renamed: ${renamed}` })] : []),
    sides,
    el("p", { class: "keys" },
      el("mark", { text: "matched tokens" }), " ",
      ...(differ ? [el("mark", { class: "differ", text: "matched, written differently" }), ` (${differ})`] : []),
      c.tokensListed < c.tokens ? ` · the first ${fmt(c.tokensListed)} tokens are marked` : ""),
  );
  const target = sideWanted ? $(`code-${sideWanted}`) : detail;
  target.focus({ preventScroll: true });
  target.scrollIntoView({ behavior: "smooth", block: "nearest" });
}

function route() {
  const hash = new URLSearchParams(location.hash.slice(1));
  const id = hash.get("clone");
  if (id) openClone(id, hash.get("side"));
}

// ---------------------------------------------------------------- try

async function check(event) {
  event.preventDefault();
  const out = $("check-result");
  const code = $("code").value;
  const format = $("format").value;
  const mode = $("check-mode").value;
  out.replaceChildren(el("p", { class: "hint", text: "Checking…" }));
  let answer;
  try {
    answer = await api("/api/check", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ code, format, mode }),
    });
  } catch (err) {
    out.replaceChildren(el("p", { class: "error", text: err.message }));
    return;
  }
  const s = answer.statistics;
  const head = el("p", {
    id: "check-summary",
    text: s.totalDuplications === 0
      ? "No duplication: this code is not in the project."
      : `${fmt(s.totalDuplications)} duplications; ${fmt(s.duplicatedLines)} of ${fmt(s.totalLines)} lines (${pct(s.percentageDuplicated)}) exist already.`,
  });
  const list = el("ol");
  for (const d of answer.duplications) {
    const at = d.codebaseLocation;
    const snippet = d.snippetLocation;
    list.append(el("li", {},
      el("details", {},
        el("summary", {},
          `snippet lines ${snippet.startLine}–${snippet.endLine} duplicate `,
          el("strong", { text: `${at.repository ? at.repository + "/" : ""}${at.file}:${at.startLine}–${at.endLine}` }),
          ` (${fmt(d.tokens)} tokens)`),
        el("pre", { class: "code", text: at.fragment }))));
  }
  out.replaceChildren(head, list);
}

// ---------------------------------------------------------------- live

let polling = null;

async function poll() {
  try {
    const health = await api("/api/health");
    const version = `${health.lastScanTime}|${health.lastUpdateTime}`;
    $("s-scanning").textContent = health.scanning ? "yes" : "no";
    if (health.status === "ready" && version !== view.seen && health.clones.status !== "done") {
      showDetecting(health);
    } else if (health.status === "ready" && version !== view.seen) {
      const first = view.seen === null;
      view.seen = version;
      await Promise.all([
        refreshState(health),
        loadTree(view.path, { keep: true }),
        loadClones(),
      ]);
      if (!first && view.clone) openClone(view.clone);
      const now = new Date().toLocaleTimeString("en-GB");
      $("live").textContent = first
        ? `Live: updates when the index changes (loaded ${now})`
        : `Updated at ${now}: the index changed`;
      document.body.dataset.version = version;
    } else if (health.status !== "ready") {
      $("live").textContent = "The first scan is running…";
    }
  } catch (err) {
    $("live").textContent = `Cannot reach dupcheck (${err.message}); retrying`;
  }
  polling = setTimeout(poll, POLL_MS);
}

// ---------------------------------------------------------------- start

async function start() {
  $("show-map").addEventListener("click", () => showTable(false));
  $("show-table").addEventListener("click", () => showTable(true));
  for (const b of document.querySelectorAll("#tree-table th button")) {
    b.addEventListener("click", () => {
      const key = b.dataset.sort;
      const same = view.sort.key === key;
      view.sort = { key, dir: same && view.sort.dir === "desc" ? "asc" : (same ? "desc" : (key === "name" ? "asc" : "desc")) };
      drawTable();
    });
  }
  $("filters").addEventListener("submit", (e) => {
    e.preventDefault();
    view.filters = { path: $("f-path").value.trim(), format: $("f-format").value };
    loadClones();
  });
  $("f-clear").addEventListener("click", () => {
    $("f-path").value = "";
    $("f-format").value = "";
    view.filters = { path: "", format: "" };
    loadClones();
  });
  $("more-clones").addEventListener("click", () => loadClones({ more: true }));
  $("check-form").addEventListener("submit", check);
  window.addEventListener("hashchange", route);
  let width = 0;
  new ResizeObserver(() => {
    const w = $("map").clientWidth;
    if (w !== width && view.folder && !view.table) { width = w; drawMap(); }
  }).observe($("map"));

  const about = await api("/");
  for (const name of about.formats) {
    $("format").append(el("option", { value: name, text: name }));
    $("f-format").append(el("option", { value: name, text: name }));
  }
  await poll();
  route();
}

start().catch((err) => {
  $("live").textContent = `The dashboard could not start: ${err.message}`;
});
