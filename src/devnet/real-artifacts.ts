import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Abi, Hex } from "viem";
import { AppError } from "../domain/errors.js";

/**
 * The protocols' own compiled contracts, as `@unstoppabledomains/uns` ships them in `artifacts/`
 * (Hardhat artifacts of the real UNS, CNS and ENS contracts). The devnet deploys these bytecodes
 * unchanged, so the crawler is judged against the real contracts and not our reading of them.
 */
export interface RealArtifact {
  abi: Abi;
  bytecode: Hex;
}

interface HardhatArtifact {
  abi: Abi;
  bytecode: Hex;
  linkReferences?: Record<string, Record<string, Array<{ start: number; length: number }>>>;
}

const require = createRequire(import.meta.url);
const cache = new Map<string, HardhatArtifact>();

function read(name: string): HardhatArtifact {
  const hit = cache.get(name);
  if (hit) return hit;
  if (!/^[A-Za-z0-9_]+$/.test(name)) throw new AppError("INVALID_PARAMETER", `bad artifact name ${name}`);
  let file: string;
  try {
    file = require.resolve(`@unstoppabledomains/uns/artifacts/${name}.json`);
  } catch {
    throw new AppError(
      "INTERNAL_ERROR",
      `@unstoppabledomains/uns/artifacts/${name}.json is missing: install the dev dependency @unstoppabledomains/uns`,
    );
  }
  const raw = JSON.parse(readFileSync(file, "utf8")) as HardhatArtifact;
  cache.set(name, raw);
  return raw;
}

/**
 * ABI and creation bytecode of a real contract. Libraries the bytecode links to (Hardhat
 * `linkReferences`, by library name) are spliced in from `libraries`; a missing one is an error.
 *
 * @example const { abi, bytecode } = loadRealArtifact("UNSRegistry");
 */
export function loadRealArtifact(name: string, libraries: Record<string, Hex> = {}): RealArtifact {
  const raw = read(name);
  if (!raw.bytecode || raw.bytecode === "0x") {
    throw new AppError("INTERNAL_ERROR", `${name} in @unstoppabledomains/uns is abstract (no bytecode)`);
  }
  let code = raw.bytecode.slice(2);
  for (const [file, libs] of Object.entries(raw.linkReferences ?? {})) {
    for (const [lib, refs] of Object.entries(libs)) {
      const address = libraries[lib] ?? libraries[`${file}:${lib}`];
      if (!address) throw new AppError("INTERNAL_ERROR", `${name} links ${file}:${lib}: address not given`);
      const hex = address.slice(2).toLowerCase().padStart(40, "0");
      for (const { start, length } of refs) {
        code = code.slice(0, start * 2) + hex.slice(0, length * 2) + code.slice((start + length) * 2);
      }
    }
  }
  return { abi: raw.abi, bytecode: `0x${code}` };
}

/** The ABI alone (for calls and reads). */
export function realAbi(name: string): Abi {
  return read(name).abi;
}
