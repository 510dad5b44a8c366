// DataDog's pprof-format (npm), an independent pprof decoder, as a test oracle.
//
//   node pprof_format_decode.js PACKAGE_DIR FILE [FILE ...]
//
// Decodes each FILE (gzip'd or raw profile.proto) with pprof-format's Profile.decode and
// prints one JSON line per FILE: {"file", "sampleTypes": [[type, unit]], "period",
// "samples": [{"stack": [[function, file, line, column, address], ...] (leaf first, inlined
// lines expanded as listed), "values": [...], "labels": [[key, str, num, numUnit]]}]}
// or {"file", "error"}. Numbers are decimal strings when they do not fit a double exactly.
"use strict";
const fs = require("fs");
const path = require("path");
const zlib = require("zlib");

function num(value) {
  const big = BigInt(value ?? 0);
  return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER)
    ? Number(big) : big.toString();
}

function decodeFile(pprof, file) {
  let data = fs.readFileSync(file);
  if (data[0] === 0x1f && data[1] === 0x8b) data = zlib.gunzipSync(data);
  const p = pprof.Profile.decode(new Uint8Array(data));
  const str = (i) => p.stringTable.strings[Number(i)];
  const functions = new Map(p.function.map((f) => [num(f.id), f]));
  const locations = new Map(p.location.map((l) => [num(l.id), l]));
  const frame = (loc) => {
    if (!loc.line.length) return [["", "", 0, 0, num(loc.address)]];
    return loc.line.map((line) => {
      const f = functions.get(num(line.functionId));
      return [f ? str(f.name) : "", f ? str(f.filename) : "", num(line.line),
              num(line.column), num(loc.address)];
    });
  };
  return {
    sampleTypes: p.sampleType.map((t) => [str(t.type), str(t.unit)]),
    period: num(p.period),
    samples: p.sample.map((s) => ({
      stack: s.locationId.flatMap((id) => frame(locations.get(num(id)))),
      values: s.value.map(num),
      labels: s.label.map((l) => [str(l.key), str(l.str), num(l.num), str(l.numUnit)]),
    })),
  };
}

const [pkg, ...files] = process.argv.slice(2);
const pprof = require(path.resolve(pkg));
for (const file of files) {
  let out;
  try {
    out = decodeFile(pprof, file);
  } catch (e) {
    out = { error: String(e && e.message ? e.message : e) };
  }
  process.stdout.write(JSON.stringify({ file, ...out }) + "\n");
}
