import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { dataDirSecret } from "./data-dir-secret.js";

describe("dataDirSecret", () => {
  // `root`: the temporary directory each test made (the first one's DATA_DIR is below it).
  let root: string;
  let dir: string;
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("creates the secret once, mode 0600, and returns the same value on every later call", () => {
    root = mkdtempSync(join(tmpdir(), "omniname-secret-"));
    dir = join(root, "data");
    const first = dataDirSecret(dir, "pepper");
    expect(first).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(statSync(join(dir, "pepper")).mode & 0o777).toBe(0o600);
    expect(dataDirSecret(dir, "pepper")).toBe(first);
    expect(readFileSync(join(dir, "pepper"), "utf8")).toBe(`${first}\n`);
  });

  it("uses the generator only for a new file, and reads an existing one trimmed", () => {
    dir = root = mkdtempSync(join(tmpdir(), "omniname-secret-"));
    expect(dataDirSecret(dir, "demo-api-key", () => "on_generated")).toBe("on_generated");
    expect(dataDirSecret(dir, "demo-api-key", () => "on_other")).toBe("on_generated");
    writeFileSync(join(dir, "pepper"), "  written-by-operator \n");
    expect(dataDirSecret(dir, "pepper", () => "never")).toBe("written-by-operator");
  });

  it("keeps the secret already in place when another process created it first, and leaves no temp file", () => {
    dir = root = mkdtempSync(join(tmpdir(), "omniname-secret-"));
    // The other process links its file in while this one is generating.
    const got = dataDirSecret(dir, "pepper", () => {
      writeFileSync(join(dir, "pepper"), "the-first-process\n");
      return "the-second-process";
    });
    expect(got).toBe("the-first-process");
    expect(readdirSync(dir)).toEqual(["pepper"]);
  });
});
