import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { Abi, Hex } from "viem";
import { AppError } from "../domain/errors.js";

/** A compiled contract of the protocols' own code, as shipped by `@unstoppabledomains/uns`. */
export interface RealArtifact {
  abi: Abi;
  bytecode: Hex;
}

const cache = new Map<string, RealArtifact>();
let artifactsDir: string | null = null;

function dir(): string {
  if (!artifactsDir) {
    const pkg = createRequire(import.meta.url).resolve("@unstoppabledomains/uns/package.json");
    artifactsDir = join(dirname(pkg), "artifacts");
  }
  return artifactsDir;
}

/**
 * The ABI and creation bytecode of a real protocol contract (`ENSRegistry`, `NameWrapper`,
 * `UNSRegistry`, …) from `@unstoppabledomains/uns/artifacts/<name>.json` (hardhat artifacts, the
 * bytecode the protocols deployed; nothing of ours is compiled into them).
 */
export function loadRealArtifact(name: string): RealArtifact {
  const hit = cache.get(name);
  if (hit) return hit;
  let raw: { abi: Abi; bytecode: Hex };
  try {
    raw = JSON.parse(readFileSync(join(dir(), `${name}.json`), "utf8")) as { abi: Abi; bytecode: Hex };
  } catch (e) {
    throw new AppError("INTERNAL_ERROR", `no artifact ${name} in @unstoppabledomains/uns`, { cause: e });
  }
  if (!raw.bytecode || raw.bytecode === "0x") {
    throw new AppError("INTERNAL_ERROR", `${name} in @unstoppabledomains/uns is abstract (no bytecode)`);
  }
  const artifact = { abi: raw.abi, bytecode: raw.bytecode };
  cache.set(name, artifact);
  return artifact;
}
