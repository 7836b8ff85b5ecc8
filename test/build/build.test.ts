import { execFile } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { checkStamp, hashInputs, listFiles, writeStamp } from "../../scripts/build-stamp.mjs";

const repo = fileURLToPath(new URL("../../", import.meta.url));
const temps: string[] = [];
afterAll(() => {
  for (const t of temps) rmSync(t, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "omniname-build-"));
  temps.push(dir);
  return dir;
}

function write(path: string, content: string): void {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, content);
}

describe("build stamps", () => {
  function fixture() {
    const root = tempDir();
    write(join(root, "src", "a.ts"), "export const a = 1;\n");
    write(join(root, "src", "sub", "b.ts"), "export const b = 2;\n");
    write(join(root, "out", "a.js"), "");
    const inputs = () => listFiles(join(root, "src"), (n) => n.endsWith(".ts"));
    const hash = () => hashInputs(root, inputs(), ["compiler 1.0"]);
    const stamp = join(root, "out", ".build-stamp.json");
    return { root, hash, stamp };
  }

  it("is not current before the first build", () => {
    const { hash, stamp } = fixture();
    expect(checkStamp(stamp, hash())).toEqual({ current: false, reason: "never built" });
  });

  it("is current after a build, also when a source is only touched", () => {
    const { root, hash, stamp } = fixture();
    writeStamp(stamp, hash(), ["a.js"]);
    expect(checkStamp(stamp, hash())).toEqual({ current: true });
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(root, "src", "a.ts"), later, later);
    expect(checkStamp(stamp, hash())).toEqual({ current: true });
  });

  it.each([
    [
      "a source is edited",
      (root: string) => writeFileSync(join(root, "src", "a.ts"), "export const a = 3;\n"),
    ],
    ["a source is added", (root: string) => write(join(root, "src", "c.ts"), "export const c = 1;\n")],
    ["a source is deleted", (root: string) => unlinkSync(join(root, "src", "sub", "b.ts"))],
    [
      "a source is renamed",
      (root: string) => {
        write(join(root, "src", "sub", "b2.ts"), readFileSync(join(root, "src", "sub", "b.ts"), "utf8"));
        unlinkSync(join(root, "src", "sub", "b.ts"));
      },
    ],
  ])("is not current when %s", (_what, change) => {
    const { root, hash, stamp } = fixture();
    writeStamp(stamp, hash(), ["a.js"]);
    change(root);
    expect(checkStamp(stamp, hash())).toEqual({ current: false, reason: "sources changed" });
  });

  it("is not current when the compiler version changes", () => {
    const { root, hash, stamp } = fixture();
    writeStamp(stamp, hash(), ["a.js"]);
    const files = listFiles(join(root, "src"), (n) => n.endsWith(".ts"));
    expect(checkStamp(stamp, hashInputs(root, files, ["compiler 1.1"]))).toMatchObject({ current: false });
  });

  it("is not current when an output was deleted", () => {
    const { root, hash, stamp } = fixture();
    writeStamp(stamp, hash(), ["a.js"]);
    unlinkSync(join(root, "out", "a.js"));
    expect(checkStamp(stamp, hash())).toEqual({ current: false, reason: "a.js is missing" });
  });

  it("hashes a copy of the tree in another folder the same", () => {
    const a = fixture();
    const b = fixture();
    expect(a.hash()).toBe(b.hash());
  });
});

/**
 * A project of the repository's layout in `root`: its build scripts, tsconfig and lock file, and
 * its node_modules (a link). Returns a run of the build script there, giving its stdout.
 */
function buildFixture(root: string): (...args: string[]) => Promise<string> {
  for (const f of ["build.mjs", "build-stamp.mjs", "compile-contracts.mjs"])
    write(join(root, "scripts", f), readFileSync(join(repo, "scripts", f), "utf8"));
  copyFileSync(join(repo, "tsconfig.json"), join(root, "tsconfig.json"));
  copyFileSync(join(repo, "package-lock.json"), join(root, "package-lock.json"));
  symlinkSync(join(repo, "node_modules"), join(root, "node_modules"));
  return async (...args) =>
    (
      await promisify(execFile)(process.execPath, [join(root, "scripts", "build.mjs"), ...args], {
        cwd: root,
      })
    ).stdout;
}

const tinyContract = (n: number) =>
  `// SPDX-License-Identifier: MIT\npragma solidity ^0.8.0;\ncontract Tiny { function v() external pure returns (uint256) { return ${n}; } }\n`;

// The real build script over a small project of the same layout (one contract, two modules), so
// that the real solc and tsc run but in well under the time of the project's own build.
describe("scripts/build.mjs", () => {
  const root = tempDir();
  const build = buildFixture(root);
  write(join(root, "contracts", "tiny", "Tiny.sol"), tinyContract(1));
  write(join(root, "src", "lib.ts"), 'export const greeting: string = "one";\n');
  write(
    join(root, "src", "main.ts"),
    'import { greeting } from "./lib.js";\nexport const main = greeting;\n',
  );
  write(join(root, "src", "main.test.ts"), "export {};\n");

  const mtime = (path: string) => statSync(join(root, path)).mtimeMs;

  it("builds from scratch, then does nothing while the build is current, then only what changed", async () => {
    expect(await build()).toMatch(
      /contracts compiled \(never built; 1 contracts.*typescript compiled \(never built/,
    );
    expect(readFileSync(join(root, "dist", "lib.js"), "utf8")).toContain('"one"');
    expect(JSON.parse(readFileSync(join(root, "contracts", "build", "Tiny.json"), "utf8")).bytecode).toMatch(
      /^0x/,
    );
    const built = { lib: mtime("dist/lib.js"), tiny: mtime("contracts/build/Tiny.json") };

    expect(await build()).toMatch(/^build: contracts current, typescript current in \d+ ms\n$/);
    expect(mtime("dist/lib.js")).toBe(built.lib);
    expect(mtime("contracts/build/Tiny.json")).toBe(built.tiny);

    writeFileSync(join(root, "src", "lib.ts"), 'export const greeting: string = "two";\n');
    expect(await build()).toMatch(/contracts current, typescript compiled \(sources changed/);
    expect(readFileSync(join(root, "dist", "lib.js"), "utf8")).toContain('"two"');
    expect(mtime("contracts/build/Tiny.json")).toBe(built.tiny);

    writeFileSync(join(root, "contracts", "tiny", "Tiny.sol"), tinyContract(2));
    expect(await build()).toMatch(/contracts compiled \(sources changed; 1 contracts.*typescript current/);

    unlinkSync(join(root, "dist", "main.js"));
    expect(await build()).toMatch(/contracts current, typescript compiled \(main\.js is missing/);
    expect(readFileSync(join(root, "dist", "main.js"), "utf8")).toContain("greeting");

    expect(await build("--force")).toMatch(/contracts compiled \(--force.*typescript compiled \(--force/);
    expect(await build()).toMatch(/contracts current, typescript current/);
  });

  it("does not stamp a TypeScript build that failed, so the next build tries again", async () => {
    writeFileSync(join(root, "src", "lib.ts"), "export const greeting: string = 3;\n");
    await expect(build()).rejects.toThrow(/tsc failed/);
    await expect(build()).rejects.toThrow(/tsc failed/);
    writeFileSync(join(root, "src", "lib.ts"), 'export const greeting: string = "three";\n');
    expect(await build()).toMatch(/typescript compiled \(sources changed/);
  });

  it("builds the web console with vite only when web/ or a file it bundles changed, and reports gzipped sizes", async () => {
    write(
      join(root, "web", "index.html"),
      '<!doctype html><div id="root"></div><script type="module" src="/src/main.ts"></script>\n',
    );
    write(join(root, "src", "shared.ts"), 'export const label: string = "first";\n');
    write(
      join(root, "web", "src", "main.ts"),
      'import { label } from "../../src/shared";\ndocument.getElementById("root")!.textContent = label;\nvoid import("./page");\n',
    );
    write(join(root, "web", "src", "page.ts"), 'export const page = "a lazily loaded page";\n');
    const first = await build();
    expect(first).toMatch(
      /web built \(never built, [\d.]+ s; first page JS [\d.]+ KB gzip, largest page [\d.]+ KB gzip\)/,
    );
    expect(first).toMatch(/web: assets\/page-[\w-]+\.js +page JS/);
    const html = readFileSync(join(root, "web", "dist", "index.html"), "utf8");
    expect(html).toMatch(/src="\/console\/assets\/index-[\w-]+\.js"/);
    // The file outside web/ that the bundle uses is recorded as an input; the server's are not.
    expect(JSON.parse(readFileSync(join(root, "web", "dist", ".web-inputs.json"), "utf8"))).toEqual([
      "src/shared.ts",
    ]);
    const sizes = JSON.parse(readFileSync(join(root, "web", "dist", ".bundle-sizes.json"), "utf8"));
    expect(sizes.entryGzipBytes).toBeGreaterThan(0);
    expect(sizes.pages).toHaveLength(1);

    expect(await build()).toMatch(/^build: contracts current, typescript current, web current in \d+ ms\n$/);
    writeFileSync(join(root, "src", "lib.ts"), 'export const greeting: string = "four";\n');
    expect(await build()).toMatch(/typescript compiled \(sources changed.*web current/);
    writeFileSync(join(root, "src", "shared.ts"), 'export const label: string = "second";\n');
    expect(await build()).toMatch(/web built \(sources changed/);
    writeFileSync(join(root, "web", "src", "page.ts"), 'export const page = "changed";\n');
    expect(await build()).toMatch(/typescript current, web built \(sources changed/);
    rmSync(join(root, "web", "dist", "index.html"));
    expect(await build()).toMatch(/web built \(index\.html is missing/);
  });
});

// The DNS server's batched UDP addon (native/udp-batch): built by the same script with npm's
// node-gyp against the installed headers, stamped like the other steps.
describe.runIf(process.platform === "linux")("scripts/build.mjs: the udp-batch addon", () => {
  const root = tempDir();
  const build = buildFixture(root);
  write(join(root, "src", "main.ts"), "export const main = 1;\n");
  write(join(root, "contracts", "tiny", "Tiny.sol"), tinyContract(1));
  for (const f of ["binding.gyp", "udp_batch.c"])
    write(join(root, "native", "udp-batch", f), readFileSync(join(repo, "native", "udp-batch", f), "utf8"));
  const addon = join(root, "native", "udp-batch", "build", "Release", "udp_batch.node");

  it("compiles the addon once, then leaves it while its sources are unchanged, and again when one changes", async () => {
    expect(await build()).toMatch(/udp-batch built \(never built/);
    expect(existsSync(addon)).toBe(true);
    const built = statSync(addon).mtimeMs;
    expect(await build()).toMatch(/udp-batch current/);
    expect(statSync(addon).mtimeMs).toBe(built);
    const c = join(root, "native", "udp-batch", "udp_batch.c");
    write(c, `${readFileSync(c, "utf8")}\n// edited\n`);
    expect(await build()).toMatch(/udp-batch built \(sources changed/);
  }, 120_000);
});
