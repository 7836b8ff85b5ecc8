import { randomBytes } from "node:crypto";
import { chmodSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Reads a secret kept in DATA_DIR (the API-key pepper, the demo API key), creating it on first
 * use with `generate` (default: 32 random bytes, base64url). The file is mode 0600 and appears
 * whole or not at all (written aside, then hard-linked into place): when two processes start at
 * once on one DATA_DIR, the second reads the first's secret instead of keeping its own (two
 * peppers would make every key of one process unknown to the other).
 *
 * @example const pepper = config.apiKeyPepper ?? dataDirSecret(config.dataDir, "pepper");
 */
export function dataDirSecret(
  dataDir: string,
  file: string,
  generate: () => string = () => randomBytes(32).toString("base64url"),
): string {
  mkdirSync(dataDir, { recursive: true });
  const path = join(dataDir, file);
  try {
    return readFileSync(path, "utf8").trim();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
  const secret = generate();
  const aside = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  writeFileSync(aside, `${secret}\n`, { mode: 0o600, flag: "wx" });
  try {
    // The mode of a new file is filtered by the umask: set it whatever the umask is.
    chmodSync(aside, 0o600);
    linkSync(aside, path);
    return secret;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    return readFileSync(path, "utf8").trim();
  } finally {
    rmSync(aside, { force: true });
  }
}
