#!/usr/bin/env node
// `npm run build` and the build step of `npm start`: compiles the devnet contracts, the
// TypeScript sources and the web console (web/ → web/dist, with vite), each only when its inputs
// changed since its last successful build (content hashes, scripts/build-stamp.mjs). A current build costs a few tens of milliseconds instead of
// seconds, so a restart is as fast as the service.
//
// Usage: node scripts/build.mjs [--force]   (--force: ignore the stamps and rebuild everything)
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { checkStamp, hashInputs, listFiles, packageVersion, writeStamp } from "./build-stamp.mjs";
import { STAMP_FILE, compileContracts, contractsInputHash } from "./compile-contracts.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const distDir = join(root, "dist");
const tsBuildInfo = join(distDir, ".tsbuildinfo");

/** What tsconfig.json compiles: src/** without the test files. */
function typescriptSources() {
  return listFiles(
    join(root, "src"),
    (name) => /\.(ts|mts|cts|json)$/.test(name) && !name.endsWith(".test.ts"),
  );
}

/**
 * The hash of the TypeScript build's inputs: the sources, the tsconfig, the lock file (the types
 * of the dependencies) and the compiler's version.
 */
export function typescriptInputHash() {
  // The shared package's sources too: the server compiles against its types.
  const files = [
    ...typescriptSources(),
    ...wireSources(),
    join(root, "tsconfig.json"),
    join(root, "package-lock.json"),
  ];
  return hashInputs(root, files, [`typescript ${packageVersion(root, "typescript")}`]);
}

/** The files tsc writes for the sources (rootDir src, outDir dist), relative to dist/. */
function typescriptOutputs() {
  return typescriptSources()
    .filter((f) => /\.[mc]?ts$/.test(f) && !/\.d\.[mc]?ts$/.test(f))
    .map((f) =>
      relative(join(root, "src"), f)
        .split(sep)
        .join("/")
        .replace(/\.([mc]?)ts$/, ".$1js"),
    );
}

function seconds(ms) {
  return `${(ms / 1000).toFixed(1)} s`;
}

function buildContracts(force) {
  const stamp = join(root, "contracts", "build", STAMP_FILE);
  const check = force ? { current: false, reason: "--force" } : checkStamp(stamp, contractsInputHash());
  if (check.current) return "contracts current";
  const started = Date.now();
  const written = compileContracts();
  return `contracts compiled (${check.reason}; ${written.length} contracts, ${seconds(Date.now() - started)})`;
}

const wireDir = join(root, "packages", "wire");

/** What the shared package compiles: packages/wire/src and its tsconfig. */
function wireSources() {
  return [...listFiles(join(wireDir, "src"), (name) => name.endsWith(".ts")), join(wireDir, "tsconfig.json")];
}

/**
 * The shared tables and types (packages/wire, @omniname/wire): the server imports the built
 * package (dist/), so it is compiled first; the console bundles the same files.
 */
function buildWire(force) {
  if (!existsSync(join(wireDir, "package.json"))) return null;
  const stamp = join(wireDir, "dist", STAMP_FILE);
  const hash = hashInputs(root, wireSources(), [`typescript ${packageVersion(root, "typescript")}`]);
  const check = force ? { current: false, reason: "--force" } : checkStamp(stamp, hash);
  if (check.current) return "wire current";
  const started = Date.now();
  const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
  const run = spawnSync(process.execPath, [tsc, "-p", join(wireDir, "tsconfig.json")], { cwd: root, stdio: "inherit" });
  if (run.status !== 0) {
    process.stderr.write(`build: tsc failed on packages/wire (exit ${run.status ?? run.signal})\n`);
    process.exit(run.status ?? 1);
  }
  const outputs = listFiles(join(wireDir, "src"), (name) => name.endsWith(".ts")).map((f) =>
    relative(join(wireDir, "src"), f).split(sep).join("/").replace(/\.ts$/, ".js"),
  );
  writeStamp(stamp, hash, outputs);
  return `wire compiled (${check.reason}, ${seconds(Date.now() - started)})`;
}

function buildTypescript(force) {
  const stamp = join(distDir, STAMP_FILE);
  const hash = typescriptInputHash();
  const check = force ? { current: false, reason: "--force" } : checkStamp(stamp, hash);
  if (check.current) return "typescript current";
  // tsc's incremental mode trusts its .tsbuildinfo and does not re-emit an output deleted behind
  // its back: when one is missing (or on --force), start from scratch.
  const outputs = typescriptOutputs();
  if (force || outputs.some((o) => !existsSync(join(distDir, o)))) rmSync(tsBuildInfo, { force: true });
  const started = Date.now();
  const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
  const args = [tsc, "-p", join(root, "tsconfig.json"), "--incremental", "--tsBuildInfoFile", tsBuildInfo];
  const run = spawnSync(process.execPath, args, { cwd: root, stdio: "inherit" });
  if (run.status !== 0) {
    // No stamp: the next build tries again and shows the same errors.
    process.stderr.write(`build: tsc failed (exit ${run.status ?? run.signal})\n`);
    process.exit(run.status ?? 1);
  }
  writeStamp(stamp, hash, outputs);
  return `typescript compiled (${check.reason}, ${seconds(Date.now() - started)})`;
}

const udpBatchDir = join(root, "native", "udp-batch");

/** npm's own node-gyp (npm sets npm_config_node_gyp for scripts; else the one beside this node). */
function nodeGypPath() {
  const candidates = [
    process.env.npm_config_node_gyp,
    join(dirname(process.execPath), "..", "lib", "node_modules", "npm", "node_modules", "node-gyp", "bin", "node-gyp.js"),
  ];
  return candidates.find((p) => p !== undefined && p !== "" && existsSync(p)) ?? null;
}

/**
 * The DNS server's batched UDP addon (native/udp-batch, Linux only; docs/dns.md): compiled by
 * node-gyp against this node's installed headers (npm's `nodedir`, else the headers beside the
 * node binary), never downloaded. A failure is a warning, not a failed build: the server then uses
 * node:dgram and says so when it starts.
 */
function buildUdpBatch(force) {
  if (!existsSync(join(udpBatchDir, "binding.gyp"))) return null; // no addon in this tree
  if (process.platform !== "linux") return "udp-batch addon skipped (not Linux)";
  const stamp = join(udpBatchDir, "build", STAMP_FILE);
  const files = [join(udpBatchDir, "udp_batch.c"), join(udpBatchDir, "binding.gyp")];
  const hash = hashInputs(root, files, [`node ${process.version}`, `abi ${process.versions.modules}`]);
  const check = force ? { current: false, reason: "--force" } : checkStamp(stamp, hash);
  if (check.current) return "udp-batch current";
  const gyp = nodeGypPath();
  const prefix = resolve(dirname(process.execPath), "..");
  const nodedir =
    process.env.npm_config_nodedir ||
    (existsSync(join(prefix, "include", "node", "common.gypi")) ? prefix : null);
  if (gyp === null || nodedir === null) {
    process.stderr.write("build: udp-batch addon not built (no node-gyp or no node headers): DNS uses node:dgram\n");
    return "udp-batch skipped";
  }
  const started = Date.now();
  const run = spawnSync(process.execPath, [gyp, "rebuild", `--nodedir=${nodedir}`], {
    cwd: udpBatchDir,
    encoding: "utf8",
    env: { ...process.env, npm_config_nodedir: nodedir },
  });
  if (run.status !== 0) {
    process.stderr.write(`${run.stdout}${run.stderr}\nbuild: udp-batch addon failed to build: DNS uses node:dgram\n`);
    return "udp-batch failed";
  }
  writeStamp(stamp, hash, ["Release/udp_batch.node"]);
  return `udp-batch built (${check.reason}, ${seconds(Date.now() - started)})`;
}

const webDir = join(root, "web");
const webDist = join(webDir, "dist");
/** Files outside web/ that the last web build bundled (src/domain/…), relative to the root. */
const WEB_INPUTS_FILE = join(webDist, ".web-inputs.json");
/** Gzipped sizes of the last web build's JavaScript (docs/console.md). */
export const WEB_SIZES_FILE = ".bundle-sizes.json";

function recordedWebInputs() {
  try {
    const list = JSON.parse(readFileSync(WEB_INPUTS_FILE, "utf8"));
    return Array.isArray(list) ? list.map((f) => join(root, f)) : [];
  } catch {
    return [];
  }
}

/**
 * The hash of the web console's inputs: every file under web/ but its output, the files of the
 * repository outside web/ that the last build bundled (recorded from vite's module graph, so an
 * edit to src/domain/providers.ts rebuilds it while server-only changes do not; a new import is an
 * edit under web/), the lock file and the bundler's version.
 */
export function webInputHash() {
  const files = [
    ...listFiles(webDir, () => true, ["dist", "node_modules"]),
    ...recordedWebInputs(),
    join(root, "package-lock.json"),
  ];
  return hashInputs(root, files, [
    `vite ${packageVersion(root, "vite")}`,
    `plugin-react ${packageVersion(root, "@vitejs/plugin-react")}`,
  ]);
}

const kb = (n) => `${(n / 1024).toFixed(1)} KB`;

/**
 * Gzipped JavaScript per page: the entry with its static imports (what the first page needs before
 * it runs), and each lazily loaded page chunk with the static imports it adds.
 */
function bundleSizes(chunks) {
  const byName = new Map(chunks.map((c) => [c.fileName, c]));
  const gz = new Map(chunks.map((c) => [c.fileName, gzipSync(c.code, { level: 9 }).length]));
  const closure = (start) => {
    const seen = new Set();
    const walk = (f) => {
      if (seen.has(f) || !byName.has(f)) return;
      seen.add(f);
      for (const i of byName.get(f).imports) walk(i);
    };
    for (const s of start) walk(s);
    return seen;
  };
  const sum = (files) => [...files].reduce((n, f) => n + (gz.get(f) ?? 0), 0);
  const entry = chunks.find((c) => c.isEntry);
  const entryFiles = closure([entry.fileName]);
  const pages = chunks
    .filter((c) => c.isDynamicEntry)
    .map((c) => {
      const files = closure([entry.fileName, c.fileName]);
      return { chunk: c.fileName, modules: c.name, gzipBytes: sum(files), addsGzipBytes: sum(files) - sum(entryFiles) };
    })
    .sort((a, b) => b.gzipBytes - a.gzipBytes);
  return {
    entryGzipBytes: sum(entryFiles),
    totalGzipBytes: sum(new Set(chunks.map((c) => c.fileName))),
    pages,
    chunks: chunks.map((c) => ({ file: c.fileName, bytes: Buffer.byteLength(c.code), gzipBytes: gz.get(c.fileName) })),
  };
}

async function buildWeb(force) {
  if (!existsSync(join(webDir, "index.html"))) return null; // no console in this tree
  if (packageVersion(root, "vite") === "absent") return "web console skipped (vite is not installed: npm install)";
  const stamp = join(webDist, STAMP_FILE);
  const check = force ? { current: false, reason: "--force" } : checkStamp(stamp, webInputHash());
  if (check.current) return "web current";
  const started = Date.now();
  const { build } = await import("vite");
  const { default: react } = await import("@vitejs/plugin-react");
  const result = await build({
    root: webDir,
    base: "/console/",
    configFile: false,
    logLevel: "warn",
    plugins: [react()],
    build: {
      outDir: webDist,
      emptyOutDir: true,
      sourcemap: false,
      // Only hashed files under /console/assets/ (console-spa.routes.ts serves nothing else).
      assetsDir: "assets",
      assetsInlineLimit: 0,
      chunkSizeWarningLimit: 600,
    },
  });
  const outputs = (Array.isArray(result) ? result : [result]).flatMap((r) => r.output);
  const chunks = outputs.filter((o) => o.type === "chunk");
  const inputs = new Set();
  for (const c of chunks)
    for (const id of c.moduleIds) {
      if (!isAbsolute(id) || id.includes(`${sep}node_modules${sep}`)) continue;
      const rel = relative(root, id);
      if (!rel.startsWith("..") && !rel.startsWith(`web${sep}`)) inputs.add(rel.split(sep).join("/"));
    }
  writeFileSync(WEB_INPUTS_FILE, `${JSON.stringify([...inputs].sort(), null, 2)}\n`);
  const sizes = bundleSizes(chunks);
  writeFileSync(join(webDist, WEB_SIZES_FILE), `${JSON.stringify(sizes, null, 2)}\n`);
  writeStamp(stamp, webInputHash(), ["index.html", ...outputs.map((o) => o.fileName)]);
  for (const p of sizes.pages)
    process.stdout.write(`  web: ${p.chunk.padEnd(34)} page JS ${kb(p.gzipBytes).padStart(9)} gzip (+${kb(p.addsGzipBytes)})\n`);
  return (
    `web built (${check.reason}, ${seconds(Date.now() - started)}; first page JS ${kb(sizes.entryGzipBytes)} gzip, ` +
    `largest page ${kb(sizes.pages[0]?.gzipBytes ?? sizes.entryGzipBytes)} gzip)`
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const force = process.argv.includes("--force");
  const started = Date.now();
  const steps = [
    buildContracts(force),
    buildWire(force),
    buildTypescript(force),
    buildUdpBatch(force),
    await buildWeb(force),
  ].filter(Boolean);
  if (!existsSync(join(distDir, "main.js"))) {
    process.stderr.write("build: dist/main.js was not produced\n");
    process.exit(1);
  }
  process.stdout.write(`build: ${steps.join(", ")} in ${Date.now() - started} ms\n`);
}
