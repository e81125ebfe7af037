// Drives dupcheck's dashboard in Debian's headless Chromium, as a user
// would, and checks what it shows against the API.
//
// Usage: node dashboard.mjs URL PROJECT_DIR SCREENSHOT_DIR
// Run by tests/dashboard.rs on a fresh server over testdata/dashboard.
// Prints one JSON line (what was measured) and exits 0, or prints the
// failure and exits 1.

import { chromium } from "playwright-core";
import { strict as assert } from "node:assert";
import { writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";

const [url, dir, shots] = process.argv.slice(2);
if (!url || !dir || !shots) {
  console.error("usage: node dashboard.mjs URL PROJECT_DIR SCREENSHOT_DIR");
  process.exit(2);
}
mkdirSync(shots, { recursive: true });

const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";
const args = [
  "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];
// Waits are bounded so that a broken page fails the test instead of hanging it.
const WAIT = 20_000;

const fmt = (n) => Number(n).toLocaleString("en-US");
const pct = (p) => `${Number(p).toLocaleString("en-US", { maximumFractionDigits: 2 })} %`;

async function json(page, path) {
  const res = await page.request.get(new URL(path, url).href, { headers: { Accept: "application/json" } });
  assert.equal(res.status(), 200, `${path}: ${await res.text()}`);
  return res.json();
}

const text = (page, selector) => page.locator(selector).innerText();

async function run(browser, name, viewport, report) {
  const context = await browser.newContext({ viewport, deviceScaleFactor: 1 });
  const page = await context.newPage();
  const problems = [];
  page.on("pageerror", (err) => problems.push(`page error: ${err.message}`));
  page.on("console", (msg) => { if (msg.type() === "error") problems.push(`console: ${msg.text()}`); });
  page.on("requestfailed", (req) => problems.push(`request failed: ${req.url()}`));
  // Layout shifts from the first paint on.
  await page.addInitScript(() => {
    window.__shift = 0;
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) if (!entry.hadRecentInput) window.__shift += entry.value;
    }).observe({ type: "layout-shift", buffered: true });
  });
  const started = Date.now();
  const res = await page.goto(url, { waitUntil: "load" });
  assert.match(res.headers()["content-type"], /^text\/html/);
  await page.waitForFunction(() => document.body.dataset.version, null, { timeout: WAIT });
  report[`${name}LoadMs`] = Date.now() - started;

  // The state: the same totals as /api/stats.
  const stats = (await json(page, "/api/stats")).statistics.total;
  const health = await json(page, "/api/health");
  assert.equal(await text(page, "#s-files"), fmt(stats.sources));
  assert.equal(await text(page, "#s-lines"), fmt(stats.lines));
  assert.equal(await text(page, "#s-dup"), `${fmt(stats.duplicatedLines)} (${pct(stats.percentage)})`);
  assert.equal(await text(page, "#s-clones"), fmt(stats.clones));
  assert.equal(await text(page, "#s-mode"), `${health.mode} · ${health.minTokens} · ${health.minLines}`);
  assert.equal(await text(page, "#dir"), health.workingDirectory);
  assert.ok(stats.clones > 0, "the fixture has clones");

  // The treemap: one cell per child of the top folder with lines.
  const top = await json(page, "/api/tree");
  const cells = page.locator("#treemap .cell");
  assert.equal(await cells.count(), top.children.filter((c) => c.lines > 0).length);
  assert.equal(await cells.first().getAttribute("data-path"), top.children[0].path);
  await page.waitForTimeout(300); // Let the page settle before the picture.
  report[`${name}LayoutShift`] = await page.evaluate(() => window.__shift);
  assert.ok(report[`${name}LayoutShift`] < 0.05, `layout shift ${report[`${name}LayoutShift`]}`);
  await page.screenshot({ path: join(shots, `main-${name}.png`), fullPage: false });

  // Hovering a cell gives its figures.
  const src = page.locator('#treemap .cell[data-path="src"]');
  await src.hover();
  const tip = await text(page, "#tip");
  const srcNode = top.children.find((c) => c.path === "src");
  assert.ok(tip.includes(`${fmt(srcNode.lines)} lines`) && tip.includes(pct(srcNode.percentage)), tip);

  // Drill into src: with the keyboard on the desktop, a tap on the phone.
  if (name === "desktop") {
    await src.focus();
    await page.keyboard.press("Enter");
  } else {
    await src.click();
  }
  await page.waitForSelector('#crumbs [aria-current="location"]:text-is("src")', { timeout: WAIT });
  const inner = await json(page, "/api/tree?path=src");
  const paths = await page.locator("#treemap .cell").evaluateAll((gs) => gs.map((g) => g.dataset.path));
  assert.deepEqual(paths, inner.children.filter((c) => c.lines > 0).map((c) => c.path));
  await page.screenshot({ path: join(shots, `folder-${name}.png`) });

  // The same data as a table, sorted by a click on a header.
  await page.click("#show-table");
  const rows = () => page.locator("#tree-table tbody tr").evaluateAll((trs) => trs.map((tr) => [...tr.cells].map((td) => td.innerText)));
  const expected = (list) => list.map((c) => [c.name + (c.kind === "folder" ? "/" : ""), fmt(c.files), fmt(c.lines), fmt(c.duplicatedLines), pct(c.percentage), fmt(c.clones)]);
  assert.deepEqual(await rows(), expected(inner.children));
  await page.click('#tree-table th button[data-sort="name"]');
  assert.deepEqual(await rows(), expected([...inner.children].sort((a, b) => a.name.localeCompare(b.name))));
  await page.screenshot({ path: join(shots, `table-${name}.png`) });
  // The breadcrumb leads back to the top.
  await page.click('#crumbs button:text-is("(top)")');
  await page.waitForSelector('#crumbs [aria-current="location"]:text-is("(top)")', { timeout: WAIT });
  await page.click("#show-map");

  // The clone list, largest first, and one clone side by side.
  const clones = await json(page, "/api/clones?limit=50");
  const items = page.locator("#clones a");
  assert.equal(await items.count(), clones.clones.length);
  const clone = clones.clones[0];
  assert.equal(await items.first().getAttribute("data-id"), clone.id);
  await items.first().click();
  await page.waitForSelector("#detail .side", { timeout: WAIT });
  const heads = await page.locator("#detail .side h3").allInnerTexts();
  const place = (p) => `${p.file}:${p.startLine}–${p.endLine}`;
  assert.deepEqual(heads, [place(clone.first), place(clone.second)]);
  // Each side names the definition it lies in, as the list's places do.
  const symbols = await page.locator("#detail .side").evaluateAll((ss) => ss.map((s) => s.querySelector(".symbol")?.textContent ?? null));
  const said = (s) => {
    if (!s) return null;
    const q = s.container ? `${s.container}.${s.name}` : s.name;
    const named = ["function", "method"].includes(s.kind) ? `${q}()` : `${s.kind} ${q}`;
    return s.whole ? `The whole of ${named}` : `Part of ${named}`;
  };
  assert.deepEqual(symbols, [said(clone.first.symbol), said(clone.second.symbol)]);
  assert.ok(clone.first.symbol, "the largest clone of the fixture lies in a definition");
  const detail = await json(page, `/api/clone?id=${clone.id}`);
  for (const which of ["first", "second"]) {
    const side = page.locator(`#code-${which}`);
    const lines = await side.locator(".line").evaluateAll((ls) => ls.map((l) => [Number(l.dataset.line), [...l.childNodes].slice(1).map((n) => n.textContent).join("")]));
    const want = detail[which].text.split("\n").map((t, i) => [detail[which].startLine + i, t]);
    assert.deepEqual(lines, want, `${which} fragment`);
    const marked = await side.locator("mark").count();
    assert.ok(marked >= detail.tokensListed / 2, `${which}: ${marked} marks for ${detail.tokensListed} tokens`);
  }
  assert.equal(await page.locator("#code-first mark.differ").count() > 0, detail.differing.length > 0);
  // A file:line link opens that fragment.
  await page.click('#detail .side[data-side="second"] h3 a');
  await page.waitForFunction(() => document.activeElement && document.activeElement.id === "code-second", null, { timeout: WAIT });
  await page.locator("#detail").screenshot({ path: join(shots, `clone-${name}.png`) });
  await page.screenshot({ path: join(shots, `clones-${name}.png`) });

  // Filter the list by path and format.
  await page.fill("#f-path", "lib");
  await page.selectOption("#f-format", "python");
  await page.click('#filters button[type="submit"]');
  const filtered = await json(page, "/api/clones?limit=50&path=lib&format=python");
  await page.waitForFunction((n) => document.querySelectorAll("#clones a").length === n
    && document.querySelector("#clone-count").textContent.startsWith(`${n} clone`), filtered.total, { timeout: WAIT });
  assert.ok(filtered.total > 0 && filtered.total < clones.total);
  await page.click("#f-clear");

  // Try: paste code, pick its format, see where it exists.
  const code = "function merge(a, b) {\n  const result = { ...a };\n  for (const key of Object.keys(b)) {\n    const value = b[key];\n    if (value && typeof value === \"object\" && !Array.isArray(value)) {\n      result[key] = merge(result[key] || {}, value);\n    } else if (value !== undefined) {\n      result[key] = value;\n    } else {\n      delete result[key];\n    }\n  }\n  return result;\n}\n";
  await page.fill("#code", code);
  await page.selectOption("#format", "javascript");
  // The mode picker starts at the server's mode, and the check posts it.
  assert.equal(await page.inputValue("#check-mode"), health.mode);
  const checked = async () => {
    const [request] = await Promise.all([
      page.waitForRequest((r) => r.method() === "POST" && new URL(r.url()).pathname === "/api/check"),
      page.click('#check-form button[type="submit"]'),
    ]);
    await page.waitForSelector("#check-summary", { timeout: WAIT });
    return request.postDataJSON();
  };
  assert.deepEqual(await checked(), { code, format: "javascript", mode: health.mode });
  const answer = await (await page.request.post(new URL("/api/check", url).href, { data: { code, format: "javascript" } })).json();
  assert.ok(answer.statistics.totalDuplications > 0);
  const summaries = await page.locator("#check-result summary strong").allInnerTexts();
  assert.deepEqual(summaries, answer.duplications.map((d) => `${d.codebaseLocation.file}:${d.codebaseLocation.startLine}–${d.codebaseLocation.endLine}`));
  await page.locator("#check-result summary").first().click();
  assert.equal(await page.locator("#check-result details pre").first().innerText(), answer.duplications[0].codebaseLocation.fragment);
  await page.locator("#try").screenshot({ path: join(shots, `try-${name}.png`) });

  // Another mode picked: renamed code, found in the server's mild mode,
  // is not there letter for letter (strict).
  assert.equal(health.mode, "mild");
  const renamed = code.replaceAll("result", "merged").replaceAll("value", "item");
  const answerIn = async (mode) => (await page.request.post(new URL("/api/check", url).href,
    { data: { code: renamed, format: "javascript", mode } })).json();
  const [mild, strict] = [await answerIn("mild"), await answerIn("strict")];
  assert.ok(mild.statistics.totalDuplications > 0);
  assert.equal(strict.statistics.totalDuplications, 0);
  await page.fill("#code", renamed);
  await page.selectOption("#check-mode", "strict");
  assert.deepEqual(await checked(), { code: renamed, format: "javascript", mode: "strict" });
  assert.equal(await text(page, "#check-summary"), "No duplication: this code is not in the project.");
  await page.selectOption("#check-mode", "mild");
  assert.deepEqual(await checked(), { code: renamed, format: "javascript", mode: "mild" });
  assert.deepEqual(await page.locator("#check-result summary strong").allInnerTexts(),
    mild.duplications.map((d) => `${d.codebaseLocation.file}:${d.codebaseLocation.startLine}–${d.codebaseLocation.endLine}`));

  // Every control is reachable with Tab.
  const reached = new Set();
  await page.locator("body").focus();
  for (let i = 0; i < 200; i += 1) {
    await page.keyboard.press("Tab");
    const id = await page.evaluate(() => {
      const a = document.activeElement;
      return a.id || a.dataset?.path || a.getAttribute("data-sort") || a.getAttribute("href") || a.textContent.trim().slice(0, 20);
    });
    reached.add(id);
  }
  for (const id of ["show-table", "f-path", "f-format", "code", "format", "check-mode", "src", `#clone=${clone.id}`]) {
    assert.ok(reached.has(id), `Tab never reaches ${id}: ${[...reached].join(", ")}`);
  }

  // Readable at this width: nothing wider than the window.
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the page is ${overflow}px wider than the window`);
  assert.deepEqual(problems, []);
  return { page, context };
}

async function live(page, report) {
  // An edited file changes the page without a reload.
  await page.evaluate(() => { window.__sameDocument = true; });
  const before = await text(page, "#s-files");
  const was = Number((await json(page, "/api/stats")).statistics.total.sources);
  const copy = "export function merge(target, source) {\n  const result = { ...target };\n  for (const key of Object.keys(source)) {\n    const value = source[key];\n    if (value && typeof value === \"object\" && !Array.isArray(value)) {\n      result[key] = merge(result[key] || {}, value);\n    } else if (value !== undefined) {\n      result[key] = value;\n    } else {\n      delete result[key];\n    }\n  }\n  return result;\n}\n";
  const edited = Date.now();
  writeFileSync(join(dir, "src", "app", "merge-copy.js"), copy);
  // The figures change first; the line under them once the tree and the
  // clone list are redrawn too.
  await page.waitForFunction((want) => document.getElementById("s-files").textContent === want
    && document.getElementById("live").textContent.startsWith("Updated at "),
    fmt(was + 1), { timeout: WAIT });
  report.liveUpdateMs = Date.now() - edited;
  assert.notEqual(await text(page, "#s-files"), before);
  assert.match(await text(page, "#live"), /^Updated at \d\d:\d\d:\d\d: the index changed$/);
  assert.equal(await page.evaluate(() => window.__sameDocument), true, "the page was reloaded");
  const stats = (await json(page, "/api/stats")).statistics.total;
  assert.equal(await text(page, "#s-files"), fmt(stats.sources));
  assert.equal(await text(page, "#s-clones"), fmt(stats.clones));
  const paths = await page.locator("#clones .places").allInnerTexts();
  assert.ok(paths.some((p) => p.includes("src/app/merge-copy.js")), paths.join("\n"));
}

const browser = await chromium.launch({ executablePath, args, headless: true });
const report = {};
try {
  const phone = await run(browser, "phone", { width: 390, height: 844 }, report);
  await phone.context.close();
  const desktop = await run(browser, "desktop", { width: 1280, height: 800 }, report);
  await live(desktop.page, report);
  await desktop.context.close();
  console.log(JSON.stringify({ ok: true, ...report }));
} catch (err) {
  console.error(err && err.stack ? err.stack : String(err));
  process.exitCode = 1;
} finally {
  await browser.close();
}
