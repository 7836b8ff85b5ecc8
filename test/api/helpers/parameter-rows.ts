import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_CODES, type ErrorCode } from "../../../src/domain/errors.js";
import { createTestApp, type TestApp } from "./test-app.js";

/* The table of v1 parameter probes (parameters.test.ts, history-parameters.test.ts): rows and their runner. */

export const V1 = "/svc/api/v1";
export const NETWORKS =
  "one of ETHEREUM, POLYGON, BSC, AURORA, SOLANA (any case; aliases such as ETH, MATIC, BNB)";
export const PROVIDERS =
  "one of NAMESPACE_A, NAMESPACE_B, NAMESPACE_C, NAMESPACE_D (any case; aliases such as FNS, UNS, ENS)";
export const ADDRESS =
  "a wallet address: 0x followed by 40 hexadecimal digits (prefix and digits in any case), or a base58 Solana address";
export const EXPLAIN = "true or false (1/0 and yes/no also work)";
export const KEY = "KEY";

/** One probe: the route, the query, the api-key header(s) (KEY: the test key), and the answer. */
export interface Row {
  route: "resolve" | "deep-resolve" | "reverse-resolve";
  /** The parameter (or header) the row is about: a refusal's message must name it. */
  param: string;
  what: string;
  query: string;
  apiKey?: string | string[] | null;
  status: number;
  code?: ErrorCode;
  message?: string | RegExp;
  /** The name the message must carry, when not `"param"` (an empty alias: domain is missing). */
  named?: string;
}

export const missing = (p: string) => `The parameter "${p}" is required (it is missing or empty).`;
export const undecodable = (p: string) =>
  `The parameter "${p}" is not valid URL encoding: a "%" must be followed by two hexadecimal digits (write a literal "%" as %25).`;
export const twice = (p: string) => `The parameter "${p}" is given more than once; give it once.`;
export const mustBe = (p: string, expected: string, got: string) =>
  `The parameter "${p}" must be ${expected}; got ${JSON.stringify(got)}.`;
export const notAName = (p: string) => new RegExp(`^The parameter "${p}" is not a valid domain name: .+\\.$`);

// What a message written for a person never shows: a validator's words, a JSON pointer, a regex.
const INTERNALS =
  /pattern|querystring|instancePath|must match|must NOT|must be (string|boolean|integer|equal)|\^|\\s|\[0-9/;

/** Sends every row to a fresh test app and checks status, code, message, and that the message names the parameter. */
export function runRows(title: string, ROWS: Row[]): void {
  describe(title, () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp();
    });
    afterAll(async () => {
      await t?.close();
    });

    it.each(ROWS.map((row) => [`${row.route} ${row.param}: ${row.what}`, row] as const))(
      "%s",
      async (_label, row) => {
        const key = row.apiKey === undefined ? t.key : row.apiKey;
        const headers: Record<string, string | string[]> = {};
        if (key !== null)
          headers["api-key"] = Array.isArray(key) ? key.map((k) => (k === KEY ? t.key : k)) : key;
        const res = await t.app.inject({ url: `${V1}/${row.route}?${row.query}`, headers });
        expect(res.statusCode, res.body.slice(0, 300)).toBe(row.status);
        if (row.status === 200) return;
        const body = res.json() as { result: boolean; error: { code: string; message: string } };
        expect(Object.keys(body).sort()).toEqual(["error", "result"]);
        expect(body.result).toBe(false);
        expect(body.error.code).toBe(row.code);
        expect(ERROR_CODES[row.code as ErrorCode].status).toBe(res.statusCode);
        if (typeof row.message === "string") expect(body.error.message).toBe(row.message);
        else expect(body.error.message).toMatch(row.message as RegExp);
        const named =
          row.named ?? (row.param.includes(" ") || row.param === "api-key" ? row.param : `"${row.param}"`);
        expect(body.error.message).toContain(named);
        expect(body.error.message).not.toMatch(INTERNALS);
      },
    );
  });
}
