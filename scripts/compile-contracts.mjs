#!/usr/bin/env node
// Compiles the devnet registries in contracts/ with solc-js (the npm `solc` package, no native
// compiler needed) into one JSON per deployable contract: { contractName, sourceName, abi,
// bytecode }, and stamps the output folder with the hash of its inputs (scripts/build-stamp.mjs).
// `npm run build:contracts` always compiles; `npm run build` (scripts/build.mjs) compiles only
// when the stamp is not current.
//
// Usage: node scripts/compile-contracts.mjs [--out <dir>]   (default contracts/build)
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { hashInputs, listFiles, packageVersion, writeStamp } from "./build-stamp.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const contractsDir = join(root, "contracts");

// Cancun: every EVM we target (anvil, and the mainnet chains' own registries are not ours) has it;
// pinning it keeps the bytecode independent of solc's moving default.
const EVM_VERSION = "cancun";

export const STAMP_FILE = ".build-stamp.json";

function findSources() {
  return listFiles(contractsDir, (name) => name.endsWith(".sol"), ["build"]);
}

/**
 * The hash of everything the artifacts depend on: the Solidity sources, this script (it holds the
 * compiler settings) and the installed solc version.
 */
export function contractsInputHash() {
  const files = [...findSources(), fileURLToPath(import.meta.url)];
  return hashInputs(root, files, [`solc ${packageVersion(root, "solc")}`]);
}

export const BUILD_DIR = join(contractsDir, "build");

/** Compiles into `outDir`; the default folder is also stamped, for `npm run build` to skip it next time. */
export function compileContracts(outDir = BUILD_DIR) {
  const hash = contractsInputHash();
  // Loaded here, not at the top: solc-js takes about half a second to load, which a build that
  // finds the artifacts current should not pay.
  const solc = createRequire(import.meta.url)("solc");
  const sources = {};
  for (const file of findSources()) {
    sources[relative(contractsDir, file).split(sep).join("/")] = { content: readFileSync(file, "utf8") };
  }
  const input = {
    language: "Solidity",
    sources,
    settings: {
      optimizer: { enabled: true, runs: 200 },
      evmVersion: EVM_VERSION,
      outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input)));
  const errors = (output.errors ?? []).filter((e) => e.severity === "error");
  for (const w of (output.errors ?? []).filter((e) => e.severity !== "error")) {
    process.stderr.write(w.formattedMessage ?? w.message);
  }
  if (errors.length > 0) {
    throw new Error(`solc failed:\n${errors.map((e) => e.formattedMessage ?? e.message).join("\n")}`);
  }
  mkdirSync(outDir, { recursive: true });
  const written = [];
  for (const [sourceName, contracts] of Object.entries(output.contracts)) {
    for (const [contractName, c] of Object.entries(contracts)) {
      const bytecode = c.evm?.bytecode?.object ?? "";
      if (bytecode.length === 0) continue; // abstract contracts
      const artifact = { contractName, sourceName, compiler: solc.version(), abi: c.abi, bytecode: `0x${bytecode}` };
      const target = join(outDir, `${contractName}.json`);
      // Write then rename, so that a reader never sees half a file (tests may compile concurrently).
      const tmp = `${target}.${process.pid}.tmp`;
      writeFileSync(tmp, `${JSON.stringify(artifact, null, 2)}\n`);
      renameSync(tmp, target);
      written.push(contractName);
    }
  }
  if (resolve(outDir) === BUILD_DIR) writeStamp(join(outDir, STAMP_FILE), hash, written.map((n) => `${n}.json`));
  return written;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf("--out");
  const outDir = i > 0 ? resolve(process.argv[i + 1]) : undefined;
  const started = Date.now();
  const written = compileContracts(outDir);
  process.stdout.write(`compiled ${written.length} contracts (${written.join(", ")}) in ${Date.now() - started} ms\n`);
}
