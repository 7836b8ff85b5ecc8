// Decides whether a build step has anything to do. A step's inputs (source files, config files and
// tool versions) are hashed by content into one SHA-256; after a successful build the step writes
// a stamp file with that hash and the list of its outputs. The step is current when the stamp's
// hash equals the inputs' hash now and every listed output still exists.
//
// Content, not modification times: `git checkout` and `touch` change times without changing what
// the build would produce, and a file restored from elsewhere can carry an older time than its
// output. A stamp written before a crash that interrupted the build is impossible: it is written
// last, through a rename, after the step succeeded.
import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync, renameSync, writeFileSync } from "node:fs";
import { join, relative, sep } from "node:path";

/**
 * Every file under `dir` (recursively, sorted) whose name passes `keep`; folders named in `skip` are
 * not entered. Paths are absolute.
 * @param {string} dir
 * @param {(name: string) => boolean} keep
 * @param {string[]} [skip]
 * @returns {string[]}
 */
export function listFiles(dir, keep, skip = []) {
  const out = [];
  if (!existsSync(dir)) return out;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!skip.includes(entry.name)) out.push(...listFiles(path, keep, skip));
    } else if (keep(entry.name)) {
      out.push(path);
    }
  }
  return out.sort();
}

/**
 * The hash of a step's inputs: each file's path (relative to `root`, so that a copy of the tree in
 * another folder hashes the same) and content, then each extra string (tool versions, settings).
 * A missing file hashes as missing rather than failing, so that deleting an input is a change.
 * @param {string} root
 * @param {string[]} files
 * @param {string[]} [extra]
 * @returns {string}
 */
export function hashInputs(root, files, extra = []) {
  const h = createHash("sha256");
  for (const file of [...files].sort()) {
    h.update(`file\0${relative(root, file).split(sep).join("/")}\0`);
    h.update(existsSync(file) ? readFileSync(file) : "\0missing\0");
    h.update("\0");
  }
  for (const e of extra) h.update(`extra\0${e}\0`);
  return h.digest("hex");
}

/**
 * Whether the step whose stamp is `stampFile` is current for inputs hashing to `hash`.
 * @param {string} stampFile
 * @param {string} hash
 * @returns {{ current: true } | { current: false, reason: string }}
 */
export function checkStamp(stampFile, hash) {
  if (!existsSync(stampFile)) return { current: false, reason: "never built" };
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(stampFile, "utf8"));
  } catch {
    return { current: false, reason: "unreadable stamp" };
  }
  if (stamp?.hash !== hash) return { current: false, reason: "sources changed" };
  const outputs = Array.isArray(stamp.outputs) ? stamp.outputs : [];
  if (outputs.length === 0) return { current: false, reason: "no outputs recorded" };
  const root = join(stampFile, "..");
  const missing = outputs.find((o) => !existsSync(join(root, o)));
  if (missing !== undefined) return { current: false, reason: `${missing} is missing` };
  return { current: true };
}

/**
 * Records a successful build: `outputs` are paths relative to the stamp's folder.
 * @param {string} stampFile
 * @param {string} hash
 * @param {string[]} outputs
 */
export function writeStamp(stampFile, hash, outputs) {
  const tmp = `${stampFile}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify({ hash, outputs: [...outputs].sort() }, null, 2)}\n`);
  renameSync(tmp, stampFile);
}

/** The version field of an installed package, or "absent". */
export function packageVersion(root, name) {
  const file = join(root, "node_modules", ...name.split("/"), "package.json");
  return existsSync(file) ? JSON.parse(readFileSync(file, "utf8")).version : "absent";
}
