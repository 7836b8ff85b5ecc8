#!/usr/bin/env node
// `npm run build` and the build step of `npm start`: compiles the devnet contracts and the
// TypeScript sources, each only when its inputs changed since its last successful build (content
// hashes, scripts/build-stamp.mjs). A current build costs a few tens of milliseconds instead of
// seconds, so a restart is as fast as the service.
//
// Usage: node scripts/build.mjs [--force]   (--force: ignore the stamps and rebuild everything)
import { spawnSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
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
  const files = [...typescriptSources(), join(root, "tsconfig.json"), join(root, "package-lock.json")];
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

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const force = process.argv.includes("--force");
  const started = Date.now();
  const steps = [buildContracts(force), buildTypescript(force)];
  if (!existsSync(join(distDir, "main.js"))) {
    process.stderr.write("build: dist/main.js was not produced\n");
    process.exit(1);
  }
  process.stdout.write(`build: ${steps.join(", ")} in ${Date.now() - started} ms\n`);
}
