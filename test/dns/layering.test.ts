import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const src = new URL("../../src/", import.meta.url).pathname;
/** The layers below dns/ (CONVENTIONS.md, "Layout"): none of them may import it. */
const BELOW = [
  "domain",
  "store",
  "scoring",
  "resolution",
  "providers",
  "crawler",
  "config",
  "devnet",
  "accounts",
];

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

describe("src/dns layering", () => {
  it("nothing below dns/ imports it", () => {
    const offenders = BELOW.flatMap((layer) => files(join(src, layer)))
      .filter((f) => /from "(\.\.\/)+dns\//.test(readFileSync(f, "utf8")))
      .map((f) => relative(src, f));
    expect(offenders).toEqual([]);
  });

  it("dns/ (tests aside) imports only resolution, store ports, scoring, domain, config and its own files", () => {
    const allowed =
      /from "\.\.\/(resolution|store|scoring|domain|config)\/|from "\.\.\/app-context\.js"|from "\.\/|from "node:|from "(dns-packet|punycode\/punycode\.js|pino|fastify)"/;
    const imports = files(join(src, "dns"))
      .filter((f) => !f.endsWith(".test.ts"))
      .flatMap((f) =>
        [...readFileSync(f, "utf8").matchAll(/^import .* from "[^"]+";$/gm)].map(
          (m) => `${relative(src, f)}: ${m[0]}`,
        ),
      );
    expect(imports.filter((i) => !allowed.test(i))).toEqual([]);
  });
});
