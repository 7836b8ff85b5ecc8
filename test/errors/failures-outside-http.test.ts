import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getPlan } from "../../src/accounts/plans.js";
import { loadConfig } from "../../src/config/load-config.js";
import { createRpcClient } from "../../src/crawler/rpc-client.js";
import { AppError, ERROR_CODES } from "../../src/domain/errors.js";
import { parseGeoBlockedWords } from "../../src/scoring/geography.js";
import { parseIanaTlds } from "../../src/scoring/iana-tlds.js";
import { parseKycFile } from "../../src/scoring/kyc-list.js";
import { parseBlocklist } from "../../src/scoring/scoring-lists.js";

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(AppError);
    return (e as AppError).code;
  }
  throw new Error("expected a failure");
}

describe("failures outside HTTP carry their own codes, not borrowed HTTP ones", () => {
  it.each([
    ["a setting with an invalid value", () => loadConfig({ PORT: "eighty" })],
    [
      "an unreadable OMNINAME_CONFIG file",
      () => loadConfig({ OMNINAME_CONFIG: "/nonexistent/omniname.json" }),
    ],
    ["a DEFAULT_PLAN missing from PLANS", () => getPlan(loadConfig({}), "platinum")],
    ["a spam blocklist line that is no name", () => parseBlocklist("ok.x\nnot a name\n")],
    ["a geography file that is not JSON", () => parseGeoBlockedWords("{")],
    ["an IANA list with a bad line", () => parseIanaTlds("COM\nnot a tld\n")],
    ["a KYC list with a bad address", () => parseKycFile("0x1234\n")],
  ])("%s is CONFIG_INVALID", (_label, fn) => {
    expect(codeOf(fn)).toBe("CONFIG_INVALID");
  });

  describe("the chains' JSON-RPC client", () => {
    let server: Server;
    let url = "";
    beforeAll(async () => {
      server = createServer((_req, res) => {
        res.statusCode = 500;
        res.end("upstream down");
      });
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      url = `http://user:hunter2@127.0.0.1:${(server.address() as AddressInfo).port}/v3/0123456789abcdef0123456789`;
    });
    afterAll(async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    });

    it("fails with RPC_UNAVAILABLE (retryable, 503 if it ever reached HTTP) and a redacted URL", async () => {
      const rpc = createRpcClient({ url, maxRetries: 0 });
      const e = await rpc.call("eth_blockNumber", []).then(
        () => null,
        (err: unknown) => err,
      );
      expect(e).toBeInstanceOf(AppError);
      expect((e as AppError).code).toBe("RPC_UNAVAILABLE");
      expect((e as AppError).retryable).toBe(true);
      expect((e as AppError).status).toBe(503);
      expect((e as AppError).message).not.toContain("hunter2");
    });
  });

  it("the registry has a code for a reorg deeper than the finality window", () => {
    expect(ERROR_CODES.REORG_BEYOND_FINALITY.status).toBe(500);
  });
});
