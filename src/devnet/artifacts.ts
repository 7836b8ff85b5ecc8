import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { Abi, Hex } from "viem";
import { AppError } from "../domain/errors.js";

/**
 * The deployable devnet contracts, as compiled by scripts/compile-contracts.mjs. UNS, CNS and ENS
 * run the real contracts (real-uns.ts, real-ens.ts, real-artifacts.ts).
 */
export const CONTRACT_NAMES = ["FNSRegistry", "OffchainResolver"] as const;

export type ContractName = (typeof CONTRACT_NAMES)[number];

export interface Artifact {
  contractName: ContractName;
  abi: Abi;
  bytecode: Hex;
}

// src/devnet/ and dist/devnet/ are both two levels below the package root.
const PACKAGE_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CONTRACTS_DIR = join(PACKAGE_ROOT, "contracts");
const BUILD_DIR = join(CONTRACTS_DIR, "build");
const COMPILE_SCRIPT = join(PACKAGE_ROOT, "scripts", "compile-contracts.mjs");

const cache = new Map<ContractName, Artifact>();

export function loadArtifact(name: ContractName): Artifact {
  const hit = cache.get(name);
  if (hit) return hit;
  const file = join(BUILD_DIR, `${name}.json`);
  if (!existsSync(file)) {
    throw new AppError("INTERNAL_ERROR", `${file} is missing: run \`npm run build:contracts\``);
  }
  const raw = JSON.parse(readFileSync(file, "utf8")) as { abi: Abi; bytecode: Hex };
  const artifact: Artifact = { contractName: name, abi: raw.abi, bytecode: raw.bytecode };
  cache.set(name, artifact);
  return artifact;
}

export function abiOf(name: ContractName): Abi {
  return loadArtifact(name).abi;
}

/**
 * The hash of what our contracts are (each artifact's ABI and creation bytecode): recorded in
 * devnet.json when the devnet deploys them, so that a devnet whose saved chains hold an older
 * build (say, the FNS registry before it spoke Freename's ABI) is redeployed instead of resumed.
 */
export function artifactsFingerprint(): string {
  const h = createHash("sha256");
  for (const name of CONTRACT_NAMES) {
    const { abi, bytecode } = loadArtifact(name);
    h.update(name).update(JSON.stringify(abi)).update(bytecode);
  }
  return h.digest("hex");
}

function newestSourceMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    const st = statSync(path);
    if (st.isDirectory()) {
      if (entry !== "build") newest = Math.max(newest, newestSourceMtime(path));
    } else if (entry.endsWith(".sol")) {
      newest = Math.max(newest, st.mtimeMs);
    }
  }
  return newest;
}

/** True when an artifact is missing or older than a Solidity source. */
function areArtifactsStale(): boolean {
  const sources = newestSourceMtime(CONTRACTS_DIR);
  for (const name of CONTRACT_NAMES) {
    const file = join(BUILD_DIR, `${name}.json`);
    if (!existsSync(file) || statSync(file).mtimeMs < sources) return true;
  }
  return false;
}

/**
 * Compiles the contracts when the build is missing or stale (a development checkout that did not
 * run `npm run build`). Needs the `solc` dev dependency.
 */
export async function ensureArtifacts(): Promise<void> {
  if (!areArtifactsStale()) return;
  await promisify(execFile)(process.execPath, [COMPILE_SCRIPT], { cwd: PACKAGE_ROOT });
  cache.clear();
}
