import { Ajv } from "ajv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "./helpers/test-app.js";
import { ADDR } from "./helpers/world.js";

const V1 = "/svc/api/v1";

interface Operation {
  operationId?: string;
  security?: unknown[];
  parameters?: Array<{ name: string; in: string; required: boolean; schema: Record<string, unknown> }>;
  responses: Record<string, { content?: { "application/json": { schema: Record<string, unknown> } } }>;
}

describe("OpenAPI document", () => {
  let t: TestApp;
  let doc: {
    openapi: string;
    paths: Record<string, Record<string, Operation>>;
    components: { securitySchemes: Record<string, unknown> };
    security: unknown[];
  };
  beforeAll(async () => {
    t = await createTestApp();
    const res = await t.app.inject({ url: `${V1}/openapi.json` });
    expect(res.statusCode).toBe(200);
    doc = res.json();
  });
  afterAll(async () => {
    await t?.close();
  });

  it("is OpenAPI 3.1 with the api-key header scheme, served without a key", () => {
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.components.securitySchemes).toEqual({
      ApiKey: { type: "apiKey", in: "header", name: "api-key" },
    });
    expect(doc.security).toEqual([{ ApiKey: [] }]);
  });

  it("lists every route with its operation, and nothing else", () => {
    expect(Object.keys(doc.paths).sort()).toEqual(
      [
        "/healthz",
        "/readyz",
        `${V1}/changes`,
        `${V1}/deep-resolve`,
        `${V1}/resolve`,
        `${V1}/reverse-resolve`,
      ].sort(),
    );
    for (const p of Object.values(doc.paths)) expect(Object.keys(p)).toEqual(["get"]);
    expect(doc.paths["/healthz"].get.security).toEqual([]);
    expect(doc.paths[`${V1}/resolve`].get.security).toBeUndefined();
  });

  it.each([
    ["resolve", ["domain", "explain", "fullQualifiedDomain", "network", "provider"], ["domain"]],
    ["deep-resolve", ["domain", "explain", "fullQualifiedDomain", "network", "provider"], ["domain"]],
    ["reverse-resolve", ["network", "provider", "walletAddress"], ["walletAddress"]],
  ])("documents the query parameters of %s", (endpoint, names, required) => {
    const params = doc.paths[`${V1}/${endpoint}`].get.parameters ?? [];
    expect(params.map((p) => p.name).sort()).toEqual(names);
    expect(params.filter((p) => p.required).map((p) => p.name)).toEqual(required);
    expect(params.every((p) => p.in === "query")).toBe(true);
    const network = params.find((p) => p.name === "network");
    expect(network?.schema.enum).toEqual(["ETHEREUM", "POLYGON", "BSC", "AURORA", "SOLANA"]);
    expect(doc.paths[`${V1}/${endpoint}`].get.responses).toHaveProperty("4XX");
  });

  // The document describes what is really served: live answers validate against it.
  it.each([
    ["resolve", "domain=alice.wallet&explain=true", "200"],
    ["deep-resolve", "domain=alice.wallet", "200"],
    ["deep-resolve", "domain=nobody.wallet", "200"],
    ["reverse-resolve", `walletAddress=${ADDR.bob}`, "200"],
    ["resolve", "domain=nobody.wallet", "4XX"],
    ["resolve", "domain=alice", "4XX"],
  ])("a live %s?%s answer validates against its %s schema", async (endpoint, qs, status) => {
    const schema = doc.paths[`${V1}/${endpoint}`].get.responses[status].content?.["application/json"].schema;
    const validate = new Ajv({ strict: false }).compile(schema ?? {});
    const body = (await t.get(`${V1}/${endpoint}?${qs}`)).json();
    expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
  });

  it("reverse-resolve's record schema has no smartContractAddress, resolve's requires it", () => {
    const info = (endpoint: string) => {
      const s = doc.paths[`${V1}/${endpoint}`].get.responses["200"].content?.["application/json"].schema as {
        properties: {
          data: {
            items?: { properties: { info: { required: string[] } } };
            properties?: { info: { required: string[] } };
          };
        };
      };
      return (s.properties.data.items ?? s.properties.data).properties?.info.required ?? [];
    };
    expect(info("resolve")).toContain("smartContractAddress");
    expect(info("reverse-resolve")).not.toContain("smartContractAddress");
  });
});

describe("OpenAPI document with the console mounted", () => {
  it("documents only the partner API and the probes, not the console API", async () => {
    const t = await createTestApp({ app: { console: true } });
    try {
      const paths = Object.keys((await t.app.inject({ url: `${V1}/openapi.json` })).json().paths);
      expect(paths.sort()).toEqual(
        [
          "/healthz",
          "/readyz",
          `${V1}/changes`,
          `${V1}/deep-resolve`,
          `${V1}/resolve`,
          `${V1}/reverse-resolve`,
        ].sort(),
      );
      // The console's hooks run in the v1 scope and the API still answers.
      expect((await t.get(`${V1}/resolve?domain=alice.wallet`)).statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });
});
