// speedscope's own importer, run under Node, as a test oracle.
//
//   node speedscope_import.js BUNDLE FILE [FILE ...]
//
// BUNDLE is the app script of the npm package speedscope (dist/release/speedscope-*.js). The
// bundle is one browser script that imports its profile importers lazily: this loads it in a
// sandbox with a stub DOM, stops it before it draws the app, and calls its own
// importProfileGroupFromText on each FILE (imported under its file name, as a drop would be).
// Prints one JSON line per FILE: {"file", "error"} or {"file", "name", "profiles": [{"name",
// "unit", "total", "nonIdle", "frames": [{"name", "file", "line", "col", "self", "total"}]}]}.
"use strict";
const fs = require("fs");
const path = require("path");
const vm = require("vm");

function loadImporter(bundlePath) {
  let src = fs.readFileSync(bundlePath, "utf8");
  const id = "[\\w$]+";
  const mod = new RegExp(`var (${id})=\\{\\};${id}\\(\\1,\\{importFromFileSystemDirectoryEntry`)
    .exec(src);
  if (!mod) throw new Error("the bundle has no import module (another speedscope version?)");
  const esc = mod[1].replace(/\$/g, "\\$");
  const init = new RegExp(`Promise\\.resolve\\(\\)\\.then\\(\\(\\)=>\\((${id})\\(\\),${esc}\\)\\)`)
    .exec(src);
  const start = src.lastIndexOf("console.log(`speedscope v");
  if (!init || start < 0) throw new Error("cannot find where the bundle starts the app");
  src = src.slice(0, start) + `globalThis.__importers=(${init[1]}(),${mod[1]});return;` +
    src.slice(start);
  const stub = new Proxy(function () {}, {
    get: (_, key) => (key === Symbol.toPrimitive ? () => "" : stub),
    apply: () => stub,
    construct: () => stub,
  });
  const quiet = { log() {}, warn() {}, info() {}, error() {}, assert() {}, time() {}, timeEnd() {} };
  const ctx = {
    console: quiet, TextDecoder, TextEncoder, setTimeout, clearTimeout, setInterval,
    clearInterval, URL, WebAssembly, atob, btoa, Blob,
  };
  ctx.window = ctx;
  ctx.self = ctx;
  ctx.document = stub;
  ctx.navigator = { userAgent: "node", platform: "node" };
  ctx.location = { hash: "", search: "", href: "", protocol: "file:" };
  ctx.localStorage = { getItem: () => null, setItem() {} };
  ctx.matchMedia = () => ({ matches: false, addEventListener() {}, addListener() {} });
  ctx.addEventListener = () => {};
  ctx.requestAnimationFrame = () => 0;
  vm.createContext(ctx);
  vm.runInContext(src, ctx);
  return ctx.__importers;
}

function summary(group) {
  return {
    name: group.name,
    profiles: group.profiles.map((p) => {
      const frames = [];
      p.forEachFrame((f) => frames.push({
        name: f.name, file: f.file ?? null, line: f.line ?? null, col: f.col ?? null,
        self: f.getSelfWeight(), total: f.getTotalWeight(),
      }));
      return {
        name: p.getName(), unit: p.getWeightUnit(), total: p.getTotalWeight(),
        nonIdle: p.getTotalNonIdleWeight(), frames,
      };
    }),
  };
}

async function main() {
  const [bundle, ...files] = process.argv.slice(2);
  const importers = loadImporter(bundle);
  for (const file of files) {
    let out;
    try {
      const text = fs.readFileSync(file, "utf8");
      const group = await importers.importProfileGroupFromText(path.basename(file), text);
      out = group ? summary(group) : { error: "speedscope did not recognise the file" };
    } catch (e) {
      out = { error: String(e && e.message ? e.message : e) };
    }
    process.stdout.write(JSON.stringify({ file, ...out }) + "\n");
  }
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack ? e.stack : e).slice(0, 2000) + "\n");
  process.exit(1);
});
