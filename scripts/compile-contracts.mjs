#!/usr/bin/env node
// Compiles the devnet registries in contracts/ with solc-js (the npm `solc` package, no native
// compiler needed) into one JSON per deployable contract: { contractName, sourceName, abi,
// bytecode }. `npm run build:contracts` runs it; `npm run build` calls that first.
//
// Usage: node scripts/compile-contracts.mjs [--out <dir>]   (default contracts/build)
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import solc from "solc";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const contractsDir = join(root, "contracts");

// Cancun: every EVM we target (anvil, and the mainnet chains' own registries are not ours) has it;
// pinning it keeps the bytecode independent of solc's moving default.
const EVM_VERSION = "cancun";

function findSources(dir) {
  const out = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) {
      if (entry !== "build") out.push(...findSources(path));
    } else if (entry.endsWith(".sol")) {
      out.push(path);
    }
  }
  return out.sort();
}

export function compileContracts(outDir = join(contractsDir, "build")) {
  const sources = {};
  for (const file of findSources(contractsDir)) {
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
  return written;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf("--out");
  const outDir = i > 0 ? resolve(process.argv[i + 1]) : undefined;
  const started = Date.now();
  const written = compileContracts(outDir);
  process.stdout.write(`compiled ${written.length} contracts (${written.join(", ")}) in ${Date.now() - started} ms\n`);
}
