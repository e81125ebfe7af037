#!/usr/bin/env node
// dupcheck's npm launcher: finds the binary of this platform's package (one
// of this package's optionalDependencies, `@dupcheck/<os>-<cpu>[-<libc>]`,
// which npm installs only where its os, cpu and libc fit) and runs it with
// the same arguments and stdio, passing signals on to it and ending as it
// ended (its exit code, or the signal that ended it). DUPCHECK_BINARY names
// another binary to run instead. Without a binary it says which platforms
// have one and how else to install, and exits with 1.
"use strict";

const { spawn } = require("node:child_process");
const os = require("node:os");
const path = require("node:path");

const SCOPE = "@dupcheck/";
const OTHER_WAYS =
  "Other ways to install dupcheck: from source with a Rust toolchain " +
  "(cargo install --path . in a clone of its repository), or the Python " +
  "wheel (pip install dupcheck, pipx run dupcheck, uvx dupcheck) or the " +
  "tarball, both for Linux x86-64 with glibc; see docs/install.md in " +
  "dupcheck's repository. DUPCHECK_BINARY=/path/to/dupcheck makes this " +
  "command run that binary.";

// This machine as the platform packages name it: linux-x64-gnu, darwin-arm64.
function platform() {
  const parts = [process.platform, process.arch];
  if (process.platform === "linux") {
    const header = process.report.getReport().header;
    parts.push(header.glibcVersionRuntime ? "gnu" : "musl");
  }
  return parts.join("-");
}

// The binary to run, or a message saying why there is none.
function binary() {
  if (process.env.DUPCHECK_BINARY) {
    return { path: process.env.DUPCHECK_BINARY };
  }
  const manifest = require("../package.json");
  const packages = Object.keys(manifest.optionalDependencies || {});
  const here = platform();
  const name = SCOPE + here;
  const known = packages.map((p) => p.slice(SCOPE.length)).join(", ");
  if (!packages.includes(name)) {
    return {
      error:
        `dupcheck: the npm package dupcheck ${manifest.version} has no binary ` +
        `for this platform (${here}); it has one for: ${known}.`,
    };
  }
  try {
    const dir = path.dirname(require.resolve(`${name}/package.json`));
    return { path: path.join(dir, "bin", "dupcheck") };
  } catch {
    return {
      error:
        `dupcheck: the binary for this platform (${here}), the package ${name}, ` +
        "is not installed: npm leaves it out with --omit=optional (or " +
        "--no-optional); install dupcheck again without that flag.",
    };
  }
}

function main() {
  const found = binary();
  if (found.error) {
    process.stderr.write(`${found.error}\n${OTHER_WAYS}\n`);
    process.exit(1);
  }
  const child = spawn(found.path, process.argv.slice(2), { stdio: "inherit" });
  const forward = (signal) => child.kill(signal);
  const signals = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"];
  for (const signal of signals) process.on(signal, forward);
  child.on("error", (err) => {
    process.stderr.write(`dupcheck: cannot run ${found.path}: ${err.message}\n`);
    process.exit(1);
  });
  child.on("exit", (code, signal) => {
    if (signal) {
      // End by the same signal, so that a shell or CI sees it; should it
      // be ignored here, 128 + its number as shells report it.
      for (const s of signals) process.off(s, forward);
      process.kill(process.pid, signal);
      process.exit(128 + (os.constants.signals[signal] || 0));
    }
    process.exit(code);
  });
}

main();
