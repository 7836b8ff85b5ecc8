import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADDR } from "./helpers/world.js";
import { type Backend, createTestApp, type TestApp } from "./helpers/test-app.js";

const V1 = "/svc/api/v1";

// The endpoint tables of the interface spec and docs/api.md, on both store backends.
describe.each<Backend>(["sqlite", "postgres"])("API v1 on %s", (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ backend });
  });
  afterAll(async () => {
    await t?.close();
  });

  const json = async (url: string, headers?: Record<string, string>) => {
    const res = await t.get(url, headers);
    return { status: res.statusCode, body: res.json(), headers: res.headers };
  };

  describe("resolve", () => {
    it("returns one record in the spec's exact shape", async () => {
      const { status, body, headers } = await json(`${V1}/resolve?domain=alice.wallet`);
      expect(status).toBe(200);
      expect(headers["content-type"]).toMatch(/^application\/json/);
      expect(body).toEqual({
        result: true,
        data: {
          info: {
            sld: "alice",
            tld: "wallet",
            smartContractAddress: "0x5fbdb2315678afecb367f032d93f642f64180aa3",
            lastUpdate: "2024-01-01T00:00:00.123Z",
            CSAMValidation: true,
            KYC: true,
            tags: [],
          },
          records: {
            "profile.OWNER.fullname": "Alice Example",
            "record.A.0": "192.0.2.1",
            "record.A.2": "192.0.2.2",
            "record.A.10": "192.0.2.10",
            "record.TXT.0": "https://alice.example.com/verify",
            "redirect.WEBSITE.0": "https://alice.example.com",
            "token.ETH.0": ADDR.alice,
          },
          domain: "alice.wallet",
          fullQualifiedDomain: "alice.wallet",
          network: "POLYGON",
          provider: "NAMESPACE_A",
          ownerAddress: ADDR.alice,
          // The stored base score (80) and the age rule's +4 (registered a year before NOW).
          score: 84,
          spam: false,
        },
      });
      // Key order: numeric indexes in numeric order.
      expect(Object.keys(body.data.records)).toEqual([
        "profile.OWNER.fullname",
        "record.A.0",
        "record.A.2",
        "record.A.10",
        "record.TXT.0",
        "redirect.WEBSITE.0",
        "token.ETH.0",
      ]);
      expect(body.data.info.lastUpdate).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    });

    it("returns the highest-scored domain of a name in several namespaces, equal to deep-resolve[0]", async () => {
      const one = await json(`${V1}/resolve?domain=alice.wallet`);
      const all = await json(`${V1}/deep-resolve?domain=alice.wallet`);
      expect(all.body.data).toHaveLength(3);
      expect(one.body.data).toEqual(all.body.data[0]);
      const scores = all.body.data.map((r: { score: number }) => r.score);
      expect(scores).toEqual([...scores].sort((a, b) => b - a));
    });

    it("accepts fullQualifiedDomain as the alias of domain", async () => {
      const a = await json(`${V1}/resolve?fullQualifiedDomain=bob.eth`);
      expect(a.status).toBe(200);
      expect(a.body.data.domain).toBe("bob.eth");
      expect((await json(`${V1}/resolve?domain=bob.eth&fullQualifiedDomain=bob.eth`)).status).toBe(200);
      const differ = await json(`${V1}/resolve?domain=bob.eth&fullQualifiedDomain=alice.wallet`);
      expect(differ.status).toBe(400);
      expect(differ.body.error.code).toBe("INVALID_PARAMETER");
    });

    it.each([
      ["  ALICE.Wallet  ", "alice.wallet"],
      ["alice.wallet.", "alice.wallet"],
      ["xn--caf-dma.eth", "café.eth"],
      ["CAFÉ.eth", "café.eth"],
      ["cafe\u0301.eth", "café.eth"],
      ["ｂｏｂ.eth", "bob.eth"],
    ])("normalizes %j before lookup", async (input, name) => {
      const { status, body } = await json(`${V1}/resolve?domain=${encodeURIComponent(input)}`);
      expect(status).toBe(200);
      expect(body.data.domain).toBe(name);
    });

    it.each([
      ["network=ETHEREUM", "NAMESPACE_B", "ETHEREUM"],
      ["network=bsc", "NAMESPACE_A", "BSC"],
      ["network=bnb", "NAMESPACE_A", "BSC"],
      ["network=Polygon", "NAMESPACE_A", "POLYGON"],
      ["provider=NAMESPACE_B", "NAMESPACE_B", "ETHEREUM"],
      ["provider=uns", "NAMESPACE_B", "ETHEREUM"],
      ["provider=Unstoppable-Domains", "NAMESPACE_B", "ETHEREUM"],
      ["provider=fns&network=bsc", "NAMESPACE_A", "BSC"],
      ["network=&provider=", "NAMESPACE_A", "POLYGON"],
    ])("narrows with %s", async (filter, provider, network) => {
      const { status, body } = await json(`${V1}/resolve?domain=alice.wallet&${filter}`);
      expect(status).toBe(200);
      expect(body.data).toMatchObject({ provider, network });
    });

    it.each([
      "domain=nobody.wallet",
      "domain=alice.wallet&network=ETHEREUM&provider=NAMESPACE_A",
      "domain=alice.wallet&network=SOLANA",
      "domain=alice.wallet&provider=NAMESPACE_D",
      "domain=alice.wallet&provider=sns",
      "domain=expired.eth",
      "domain=blocked.wallet",
    ])("answers 404 DOMAIN_NOT_FOUND for %s", async (qs) => {
      const { status, body } = await json(`${V1}/resolve?${qs}`);
      expect(status).toBe(404);
      expect(body).toEqual({
        result: false,
        error: { code: "DOMAIN_NOT_FOUND", message: expect.any(String) },
      });
    });

    it("serves spam-flagged names with spam true and their tags", async () => {
      const { body } = await json(`${V1}/resolve?domain=spammy.wallet`);
      // Base score 5, +4 for its age: still under the spam cap of 10.
      expect(body.data).toMatchObject({ spam: true, score: 9, info: { tags: ["lookalike"] } });
    });

    it("adds scoreDetails with explain=true and changes nothing else", async () => {
      const plain = await json(`${V1}/resolve?domain=alice.wallet`);
      const explained = await json(`${V1}/resolve?domain=alice.wallet&explain=true`);
      const { scoreDetails, ...rest } = explained.body.data;
      expect(rest).toEqual(plain.body.data);
      expect(scoreDetails.length).toBeGreaterThan(0);
      for (const d of scoreDetails) {
        expect(d).toEqual({
          rule: expect.any(String),
          effect: expect.any(Number),
          reason: expect.any(String),
        });
      }
      expect(
        "scoreDetails" in (await json(`${V1}/resolve?domain=alice.wallet&explain=false`)).body.data,
      ).toBe(false);
      const deep = await json(`${V1}/deep-resolve?domain=alice.wallet&explain=1`);
      expect(deep.body.data.every((r: object) => "scoreDetails" in r)).toBe(true);
    });

    it("accepts a trailing slash on the path", async () => {
      expect((await json(`${V1}/resolve/?domain=alice.wallet`)).status).toBe(200);
    });

    it("ignores unknown extra parameters, even repeated", async () => {
      const { status } = await json(`${V1}/resolve?domain=alice.wallet&utm=1&utm=2&Domain=x`);
      expect(status).toBe(200);
    });
  });

  describe("deep-resolve", () => {
    it("returns every domain of the name, best first, with the deterministic tie-break", async () => {
      const { status, body } = await json(`${V1}/deep-resolve?domain=alice.wallet`);
      expect(status).toBe(200);
      expect(
        body.data.map((r: { provider: string; network: string; score: number }) => [
          r.provider,
          r.network,
          r.score,
        ]),
      ).toEqual([
        // Base scores 80, 60, 60, each +4 for a year registered.
        ["NAMESPACE_A", "POLYGON", 84],
        // Equal scores: the earlier registration first.
        ["NAMESPACE_B", "ETHEREUM", 64],
        ["NAMESPACE_A", "BSC", 64],
      ]);
      for (const r of body.data) {
        expect(r.domain).toBe("alice.wallet");
        expect(r.fullQualifiedDomain).toBe("alice.wallet");
        expect(typeof r.info.smartContractAddress).toBe("string");
      }
    });

    it("narrows with network and provider", async () => {
      const { body } = await json(`${V1}/deep-resolve?domain=alice.wallet&provider=FREENAME`);
      expect(body.data.map((r: { network: string }) => r.network)).toEqual(["POLYGON", "BSC"]);
    });

    it.each([
      "domain=nobody.wallet",
      "domain=alice.wallet&network=SOLANA",
      "domain=alice.wallet&network=AURORA",
    ])("answers 200 with data [] for %s", async (qs) => {
      const { status, body } = await json(`${V1}/deep-resolve?${qs}`);
      expect(status).toBe(200);
      expect(body).toEqual({ result: true, data: [] });
    });
  });

  describe("reverse-resolve", () => {
    it("returns the address's domains, primary name first, then score, then name; no smartContractAddress", async () => {
      const mixedCase = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
      const { status, body } = await json(`${V1}/reverse-resolve?walletAddress=${mixedCase}`);
      expect(status).toBe(200);
      expect(body.data.map((r: { domain: string }) => r.domain)).toEqual([
        "bob.eth",
        "alice.wallet",
        "apple.crypto",
        "bob.crypto",
      ]);
      for (const r of body.data) {
        expect(r.ownerAddress).toBe(ADDR.bob);
        expect("smartContractAddress" in r.info).toBe(false);
        expect("scoreDetails" in r).toBe(false);
        expect(Object.keys(r).sort()).toEqual(
          [
            "domain",
            "fullQualifiedDomain",
            "info",
            "network",
            "ownerAddress",
            "provider",
            "records",
            "score",
            "spam",
          ].sort(),
        );
      }
    });

    it("counts a reverse record only when the address owns the domain", async () => {
      const { body } = await json(`${V1}/reverse-resolve?walletAddress=${ADDR.carol}`);
      const names = body.data.map((r: { domain: string }) => r.domain);
      expect(names).not.toContain("sold.crypto");
      // Expired and CSAM-failing names are not served here either.
      expect(names).toEqual(["café.eth", "alice.wallet"]);
      const dave = await json(`${V1}/reverse-resolve?walletAddress=${ADDR.dave}`);
      expect(dave.body.data.map((r: { domain: string }) => r.domain)).toEqual([
        "sold.crypto",
        "spammy.wallet",
      ]);
    });

    it.each([
      ["network=ETHEREUM", ["bob.eth", "alice.wallet"]],
      ["provider=NAMESPACE_B", ["alice.wallet", "apple.crypto", "bob.crypto"]],
      ["provider=ens", ["bob.eth"]],
      ["network=polygon&provider=uns", ["apple.crypto", "bob.crypto"]],
      ["network=SOLANA", []],
    ])("narrows with %s", async (filter, names) => {
      const { body } = await json(`${V1}/reverse-resolve?walletAddress=${ADDR.bob}&${filter}`);
      expect(body.data.map((r: { domain: string }) => r.domain)).toEqual(names);
    });

    it("answers 200 with data [] for an address without domains", async () => {
      const { status, body } = await json(`${V1}/reverse-resolve?walletAddress=${ADDR.nobody}`);
      expect(status).toBe(200);
      expect(body).toEqual({ result: true, data: [] });
    });
  });

  describe("400s", () => {
    it.each([
      ["resolve", "", "MISSING_PARAMETER"],
      ["resolve", "domain=", "MISSING_PARAMETER"],
      ["resolve", "fullQualifiedDomain=", "MISSING_PARAMETER"],
      ["deep-resolve", "network=ETHEREUM", "MISSING_PARAMETER"],
      ["reverse-resolve", "", "MISSING_PARAMETER"],
      ["reverse-resolve", "walletAddress=", "MISSING_PARAMETER"],
      ["resolve", "domain=alice", "INVALID_DOMAIN"],
      ["resolve", "domain=a..wallet", "INVALID_DOMAIN"],
      ["resolve", "domain=al%E2%80%8Bice.wallet", "INVALID_DOMAIN"],
      ["resolve", "domain=%C3%28.eth", "INVALID_DOMAIN"],
      ["deep-resolve", "domain=a%2Fb.wallet", "INVALID_DOMAIN"],
      ["resolve", "domain=alice.wallet&network=MARS", "INVALID_NETWORK"],
      ["deep-resolve", "domain=alice.wallet&network=1", "INVALID_NETWORK"],
      ["reverse-resolve", `walletAddress=${ADDR.bob}&network=x`, "INVALID_NETWORK"],
      ["resolve", "domain=alice.wallet&provider=NAMESPACE_E", "INVALID_PROVIDER"],
      ["reverse-resolve", `walletAddress=${ADDR.bob}&provider=x`, "INVALID_PROVIDER"],
      ["reverse-resolve", "walletAddress=0x1234", "INVALID_ADDRESS"],
      ["reverse-resolve", `walletAddress=${ADDR.bob}00`, "INVALID_ADDRESS"],
      ["reverse-resolve", "walletAddress=alice.wallet", "INVALID_ADDRESS"],
      ["reverse-resolve", `walletAddress=${ADDR.bob.replace("0x", "0y")}`, "INVALID_ADDRESS"],
      // base58 alphabet and length, but 33 bytes: not a Solana address.
      ["reverse-resolve", "walletAddress=7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsUU", "INVALID_ADDRESS"],
      ["reverse-resolve", "walletAddress=0OIl1111111111111111111111111111111", "INVALID_ADDRESS"],
      ["resolve", "domain=alice.wallet&explain=maybe", "INVALID_PARAMETER"],
      ["resolve", "domain=a.wallet&domain=b.wallet", "INVALID_PARAMETER"],
      ["reverse-resolve", `walletAddress=${ADDR.bob}&walletAddress=${ADDR.alice}`, "INVALID_PARAMETER"],
      ["resolve", "domain=alice.wallet&network=ETHEREUM&network=POLYGON", "INVALID_PARAMETER"],
      ["resolve", `domain=${"a".repeat(1021)}.eth`, "PARAMETER_TOO_LONG"],
      ["resolve", `domain=${"%C3%A9".repeat(520)}.eth`, "PARAMETER_TOO_LONG"],
      ["deep-resolve", `domain=${"a.".repeat(256)}eth`, "PARAMETER_TOO_LONG"],
      ["resolve", `domain=alice.wallet&pad=${"x".repeat(9000)}`, "PARAMETER_TOO_LONG"],
      ["reverse-resolve", `walletAddress=${"0".repeat(200)}`, "PARAMETER_TOO_LONG"],
    ])("%s?%s -> %s", async (endpoint, qs, code) => {
      const { status, body } = await json(`${V1}/${endpoint}?${qs}`);
      expect(status).toBe(400);
      expect(body).toEqual({ result: false, error: { code, message: expect.any(String) } });
    });

    it("says why a name fails normalization", async () => {
      const { body } = await json(`${V1}/resolve?domain=al%E2%80%8Bice.wallet`);
      expect(body.error.message).toMatch(/invisible/);
      const net = await json(`${V1}/resolve?domain=a.b&network=MARS`);
      expect(net.body.error.message).toContain("ETHEREUM, POLYGON, BSC, AURORA, SOLANA");
    });
  });

  describe("authentication", () => {
    it.each([
      [{}, "API_KEY_MISSING"],
      [{ "api-key": "" }, "API_KEY_MISSING"],
      [{ "api-key": "on_00000000_0000000000000000000000000000000" }, "API_KEY_INVALID"],
      [{ "api-key": "nope" }, "API_KEY_INVALID"],
    ])("answers 401 for %j", async (headers, code) => {
      const res = await t.app.inject({ url: `${V1}/resolve?domain=alice.wallet`, headers });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ result: false, error: { code, message: expect.any(String) } });
    });

    it("checks the key before the parameters", async () => {
      const res = await t.app.inject({ url: `${V1}/resolve?network=MARS` });
      expect(res.json().error.code).toBe("API_KEY_MISSING");
    });

    it("refuses a revoked key within the cache TTL", async () => {
      const { createApiKey } = await import("../../src/accounts/api-keys.js");
      const { key, apiKey } = await createApiKey(t.store, t.ctx.pepper, t.projectId, "to revoke");
      expect((await t.get(`${V1}/resolve?domain=alice.wallet`, { "api-key": key })).statusCode).toBe(200);
      await t.store.projects.revokeApiKey(apiKey.id, Date.now());
      const started = Date.now();
      let status = 200;
      while (status === 200 && Date.now() - started < 5000) {
        status = (await t.get(`${V1}/resolve?domain=alice.wallet`, { "api-key": key })).statusCode;
        if (status === 200) await new Promise((r) => setTimeout(r, 100));
      }
      expect(status).toBe(401);
      expect(Date.now() - started).toBeLessThan(3000);
    });
  });
});
