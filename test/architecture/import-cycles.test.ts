import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = join(dirname(fileURLToPath(import.meta.url)), "../../src");

/** Every module of src/ (tests aside) and the modules of src/ it imports, type-only imports included. */
function importGraph(): Map<string, string[]> {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (p.endsWith(".ts") && !p.endsWith(".test.ts") && !p.endsWith(".testing.ts")) files.push(p);
    }
  };
  walk(SRC);
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const f of files) {
    const deps: string[] = [];
    for (const m of readFileSync(f, "utf8").matchAll(/^(?:import|export)\s[^;]*?from\s+"(\.[^"]+)\.js"/gms)) {
      const target = resolve(dirname(f), `${m[1]}.ts`);
      if (known.has(target)) deps.push(target);
    }
    graph.set(f, deps);
  }
  return graph;
}

/** The strongly connected components of more than one module (Tarjan): each is an import circle. */
function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const c: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        c.push(relative(SRC, w));
      } while (w !== v);
      if (c.length > 1) out.push(c.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

describe("imports of src/", () => {
  it("form no circle, type-only imports included (a circle is a layer that imports upward)", () => {
    expect(circles(importGraph())).toEqual([]);
  });

  it("the check finds a circle when there is one", () => {
    const g = new Map([
      ["/a.ts", ["/b.ts"]],
      ["/b.ts", ["/c.ts"]],
      ["/c.ts", ["/a.ts"]],
      ["/d.ts", ["/a.ts"]],
    ]);
    expect(circles(g).map((c) => c.length)).toEqual([3]);
  });
});
