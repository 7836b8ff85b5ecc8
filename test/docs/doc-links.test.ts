import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// The project's docs stand on their own: every file they point at is in the repository, and none
// of them (nor a comment in the code) sends the reader to notes that only the authors had.

const root = fileURLToPath(new URL("../../", import.meta.url));

function walk(dir: string, keep: (path: string) => boolean): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if ([".git", "node_modules", "dist", "data", ".tmp", "coverage"].includes(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...walk(path, keep));
    else if (keep(path)) out.push(path);
  }
  return out;
}

const rel = (path: string) => relative(root, path).split("\\").join("/");
const repoFiles = walk(root, () => true).map(rel);

/** README.md, docs/*.md, and the READMEs of bench/, contracts/ and src/. */
const docs = walk(root, (p) => p.endsWith(".md"))
  .map(rel)
  .filter((p) => !p.startsWith("contracts/build/") && !p.startsWith("test/"))
  .sort();

/** `{a,b}` alternatives and `*` wildcards of a path written in a doc, as one regular expression. */
function pathPattern(path: string): RegExp {
  const escaped = path
    .replace(/[.+^$()|[\]\\]/g, "\\$&")
    .replace(/\{([^}]*)\}/g, (_m, alts: string) => `(${alts.split(",").join("|")})`)
    .replace(/\*/g, "[^/]*");
  return new RegExp(`^${escaped}(/.*)?$`);
}

function existsInRepo(path: string): boolean {
  const clean = path.replace(/\/$/, "");
  if (!/[{*]/.test(clean)) return existsSync(join(root, clean));
  const re = pathPattern(clean);
  return repoFiles.some((f) => re.test(f));
}

/** Folders whose files a doc names by their path from the repository root. */
const PATH_PREFIX = /^(docs|src|bench|test|scripts|contracts|bin)\//;
/** Paths under these are build output: git-ignored, created by `npm run build`. */
const GENERATED = /^(contracts\/build|dist)\//;

interface Ref {
  doc: string;
  target: string;
}

function brokenLinks(doc: string): Ref[] {
  const text = readFileSync(join(root, doc), "utf8");
  const broken: Ref[] = [];
  for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = m[1]!;
    if (/^[a-z]+:/i.test(target) || target.startsWith("#")) continue;
    const file = target.split("#")[0]!;
    if (!existsSync(resolve(root, dirname(doc), file))) broken.push({ doc, target });
  }
  for (const m of text.matchAll(/`([^`\s]+)`/g)) {
    const target = m[1]!.replace(/:\d+$/, "");
    if (target.includes("<") || target.includes("…")) continue;
    if (PATH_PREFIX.test(target)) {
      if (!GENERATED.test(target) && !existsInRepo(target)) broken.push({ doc, target });
    } else if (/^[\w.-]+\.md$/.test(target)) {
      // A bare file name: the file next to the doc.
      if (!existsSync(join(root, dirname(doc), target))) broken.push({ doc, target });
    }
  }
  return broken;
}

/** References to documents that are not part of the project. */
const OUTSIDE_REFERENCES = [
  /DESIGN\s*§/,
  /DESIGN\.md/,
  /\bDESIGN:/,
  /(?<!docs\/)chain-facts\.md/,
  /\.\.\/shared\//,
  /\/work\//,
  /machine-notes/,
  /\bissue notes\b/i,
  /\blater issue\b/i,
  /\bissue \d+\b/i,
  /\bspec §/,
];

function outsideReferences(file: string): string[] {
  const text = readFileSync(join(root, file), "utf8");
  return text
    .split("\n")
    .flatMap((line, i) =>
      OUTSIDE_REFERENCES.some((re) => re.test(line)) ? [`${file}:${i + 1}: ${line.trim()}`] : [],
    );
}

describe("documentation links", () => {
  it("finds the project's docs", () => {
    expect(docs).toEqual(
      expect.arrayContaining(["README.md", "docs/chain-facts.md", "docs/crawler.md", "bench/README.md"]),
    );
  });

  it.each(docs)("%s links only to files that exist in the repository", (doc) => {
    expect(brokenLinks(doc)).toEqual([]);
  });

  it("reads a path's alternatives and wildcards", () => {
    expect(existsInRepo("src/providers/{fns,uns,ens}/README.md")).toBe(true);
    expect(existsInRepo("bench/*.bench.ts")).toBe(true);
    expect(existsInRepo("src/providers/{fns,nope}/README.md")).toBe(true);
    expect(existsInRepo("src/providers/{nope,nada}/README.md")).toBe(false);
    expect(existsInRepo("docs/nope.md")).toBe(false);
  });

  it("reports a missing file, a link to one, and a bare name that is not next to the doc", () => {
    const fixture = "test/docs/fixtures/broken-links.md";
    expect(brokenLinks(fixture).map((r) => r.target)).toEqual([
      "../../../docs/nope.md",
      "docs/nope.md",
      "src/providers/{nope,nada}/README.md",
      "chain-facts.md",
    ]);
  });
});

describe("references outside the project", () => {
  const code = walk(join(root, "src"), (p) => p.endsWith(".ts"))
    .concat(walk(join(root, "test"), (p) => p.endsWith(".ts")))
    .concat(walk(join(root, "bench"), (p) => p.endsWith(".ts")))
    .concat(walk(join(root, "scripts"), (p) => /\.(ts|mjs|mts)$/.test(p)))
    .map(rel)
    // This file names the patterns it looks for.
    .filter((f) => f !== "test/docs/doc-links.test.ts");

  it("no doc points at notes outside the repository (design notes, issues, machine notes)", () => {
    expect(docs.flatMap(outsideReferences)).toEqual([]);
  });

  it("no comment in the code does either", () => {
    expect(code.flatMap(outsideReferences)).toEqual([]);
  });

  it("recognises each kind of outside reference", () => {
    expect(outsideReferences("test/docs/fixtures/broken-links.md").map((r) => r.split(": ")[1])).toEqual([
      "`chain-facts.md`, `broken-links.md`, `contracts/build/Tiny.json`, `dist/main.js`, `contracts/build/<Contract>.json`.",
      "See DESIGN §4.",
      "Figures are in the issue notes.",
      "DNS (later issue).",
      "Copied from /work/shared/notes.",
    ]);
  });
});
