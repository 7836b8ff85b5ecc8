import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { AppError, ERROR_CODES, statusOf } from "./errors.js";

// docs/errors.md is the partner-facing copy of the registry: one table row per code.
const doc = readFileSync(new URL("../../docs/errors.md", import.meta.url), "utf8");
const rows = [
  ...doc.matchAll(/^\|\s*`([A-Z_]+)`\s*\|\s*(\d{3})\s*\|\s*([A-Z]+)\s*\|\s*(.+?)\s*\|\s*$/gm),
].map((m) => ({
  code: m[1],
  status: Number(m[2]),
  rcode: m[3],
  meaning: m[4],
}));

describe("error registry", () => {
  it("docs/errors.md lists every code of the registry exactly once", () => {
    const documented = rows.map((r) => r.code);
    expect(new Set(documented).size).toBe(documented.length);
    expect([...documented].sort()).toEqual(Object.keys(ERROR_CODES).sort());
  });

  it.each(Object.entries(ERROR_CODES))("%s has the documented status and rcode", (code, entry) => {
    const row = rows.find((r) => r.code === code);
    expect(row).toBeDefined();
    expect(row?.status).toBe(entry.status);
    expect(row?.rcode).toBe(entry.rcode);
    expect(row?.meaning.length).toBeGreaterThan(10);
  });

  it("codes are stable upper-snake identifiers with a status in 4xx/5xx", () => {
    for (const [code, e] of Object.entries(ERROR_CODES)) {
      expect(code).toMatch(/^[A-Z][A-Z0-9_]+$/);
      expect(e.status).toBeGreaterThanOrEqual(400);
      expect(e.status).toBeLessThan(600);
    }
  });

  it("AppError takes its status from the registry and keeps the cause", () => {
    const cause = new Error("socket closed");
    const e = new AppError("STORE_UNAVAILABLE", undefined, { cause, retryable: true });
    expect(e.status).toBe(503);
    expect(statusOf("DOMAIN_NOT_FOUND")).toBe(404);
    expect(e.message).toBe(ERROR_CODES.STORE_UNAVAILABLE.message);
    expect(e.cause).toBe(cause);
    expect(e.retryable).toBe(true);
  });
});
