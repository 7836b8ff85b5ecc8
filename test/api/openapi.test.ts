import { Ajv } from "ajv";
import { statusRoutes } from "../../src/api/routes/status.routes.js";
import { NETWORKS } from "../../src/domain/networks.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestApp, type TestApp } from "./helpers/test-app.js";
import { ADDR } from "./helpers/world.js";

const V1 = "/svc/api/v1";
const BATCH = ["resolve", "deep-resolve", "reverse-resolve"];

interface Operation {
  requestBody?: { required: boolean; content: Record<string, { schema: Record<string, unknown> }> };
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
    // /status as the server role registers it, after buildApp.
    t = await createTestApp({
      beforeReady: (app, store) => void app.register(statusRoutes, { store }),
    });
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
        "/status",
        "/dns-query",
        `${V1}/deep-resolve`,
        `${V1}/resolve`,
        `${V1}/reverse-resolve`,
        `${V1}/dns-query`,
        ...BATCH.map((b) => `${V1}/batch/${b}`),
        `${V1}/changes`,
      ].sort(),
    );
    for (const [path, p] of Object.entries(doc.paths))
      expect(Object.keys(p)).toEqual(
        path.includes("/batch/") ? ["post"] : path.endsWith("/dns-query") ? ["get", "post"] : ["get"],
      );
    expect(doc.paths["/status"].get.security).toEqual([]);
    expect(doc.paths["/dns-query"].get.security).toEqual([]);
    expect(doc.paths[`${V1}/dns-query`].get.security).toBeUndefined();
    expect(doc.paths["/healthz"].get.security).toEqual([]);
    expect(doc.paths[`${V1}/resolve`].get.security).toBeUndefined();
  });

  it.each([
    [
      "resolve",
      ["at", "atBlock", "domain", "explain", "fullQualifiedDomain", "network", "provenance", "provider"],
      // domain or fullQualifiedDomain: a rule over two parameters, which OpenAPI cannot state.
      [],
    ],
    [
      "deep-resolve",
      ["at", "atBlock", "domain", "explain", "fullQualifiedDomain", "network", "provenance", "provider"],
      // domain or fullQualifiedDomain: a rule over two parameters, which OpenAPI cannot state.
      [],
    ],
    [
      "reverse-resolve",
      ["at", "atBlock", "network", "provenance", "provider", "walletAddress"],
      ["walletAddress"],
    ],
  ])("documents the query parameters of %s", (endpoint, names, required) => {
    const params = doc.paths[`${V1}/${endpoint}`].get.parameters ?? [];
    expect(params.map((p) => p.name).sort()).toEqual(names);
    expect(params.filter((p) => p.required).map((p) => p.name)).toEqual(required);
    expect(params.every((p) => p.in === "query")).toBe(true);
    // network: every wire value and alias of the domain table, any case, padded or empty; nothing else.
    const network = new RegExp(String(params.find((p) => p.name === "network")?.schema.pattern), "u");
    for (const [wire, { aliases }] of Object.entries(NETWORKS))
      for (const v of [wire, ...aliases]) {
        expect(network.test(v)).toBe(true);
        expect(network.test(` ${v.toLowerCase()} `)).toBe(true);
      }
    for (const v of ["", "  "]) expect(network.test(v)).toBe(true);
    for (const v of ["MARS", "ETHEREUMX", "eth\u0000", "__proto__"]) expect(network.test(v)).toBe(false);
    expect(doc.paths[`${V1}/${endpoint}`].get.responses).toHaveProperty("4XX");
  });

  // The document describes what is really served: live answers validate against it.
  it.each([
    ["resolve", "domain=alice.wallet&explain=true", "200"],
    ["deep-resolve", "domain=alice.wallet", "200"],
    ["deep-resolve", "domain=nobody.wallet", "200"],
    ["reverse-resolve", `walletAddress=${ADDR.bob}`, "200"],
    ["resolve", "domain=alice.wallet&provenance=true", "200"],
    ["deep-resolve", "domain=alice.wallet&provenance=true&explain=true", "200"],
    ["reverse-resolve", `walletAddress=${ADDR.bob}&provenance=true`, "200"],
    ["resolve", "domain=alice.wallet&atBlock=POLYGON:1", "4XX"],
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

describe("OpenAPI document of the batch calls", () => {
  let t: TestApp;
  let doc: { paths: Record<string, Record<string, Operation>> };
  beforeAll(async () => {
    t = await createTestApp();
    doc = (await t.app.inject({ url: `${V1}/openapi.json` })).json();
  });
  afterAll(async () => {
    await t?.close();
  });

  it.each([
    ["resolve", "domains", ["alice.wallet", "nobody.wallet", "not a name"]],
    ["deep-resolve", "domains", ["alice.wallet", "nobody.wallet"]],
    ["reverse-resolve", "walletAddresses", [ADDR.bob, "0xZZ"]],
  ])(
    "batch/%s: a live body validates against the request schema, a live answer against the 200 schema",
    async (endpoint, field, inputs) => {
      const op = doc.paths[`${V1}/batch/${endpoint}`].post;
      const bodySchema = op.requestBody?.content["application/json"].schema ?? {};
      const ajv = new Ajv({ strict: false });
      const payload = { [field]: inputs, network: "POLYGON" };
      expect(ajv.validate(bodySchema, payload), JSON.stringify(ajv.errors)).toBe(true);
      expect(ajv.validate(bodySchema, { [field]: [] })).toBe(false);
      expect(ajv.validate(bodySchema, { [field]: Array(1001).fill("a") })).toBe(false);
      const res = await t.app.inject({
        method: "POST",
        url: `${V1}/batch/${endpoint}`,
        headers: { "api-key": t.key, "content-type": "application/json" },
        payload,
      });
      const validate = ajv.compile(op.responses["200"].content?.["application/json"].schema ?? {});
      expect(validate(res.json()), JSON.stringify(validate.errors)).toBe(true);
      const error = ajv.compile(op.responses["4XX"].content?.["application/json"].schema ?? {});
      const bad = await t.app.inject({
        method: "POST",
        url: `${V1}/batch/${endpoint}`,
        headers: { "api-key": t.key },
        payload: {},
      });
      expect(error(bad.json())).toBe(true);
    },
  );

  it("documents /dns-query's wire and JSON forms", () => {
    const get = doc.paths["/dns-query"].get as Operation & { responses: Record<string, { content: object }> };
    expect(get.parameters?.map((p) => p.name)).toEqual(["dns", "name", "type", "cd"]);
    expect(Object.keys(get.responses["200"].content)).toEqual([
      "application/dns-message",
      "application/dns-json",
    ]);
    expect(Object.keys(doc.paths["/dns-query"].post.requestBody?.content ?? {})).toEqual([
      "application/dns-message",
    ]);
  });
});

describe("OpenAPI document with the console mounted", () => {
  it("documents only the partner API and the probes, not the console API", async () => {
    const t = await createTestApp({ app: { console: true } });
    try {
      const paths = Object.keys((await t.app.inject({ url: `${V1}/openapi.json` })).json().paths);
      expect(paths.filter((p) => p.startsWith("/console"))).toEqual([]);
      expect(paths).toContain(`${V1}/batch/resolve`);
      expect(paths).toContain(`${V1}/changes`);
      // The console's hooks run in the v1 scope and the API still answers.
      expect((await t.get(`${V1}/resolve?domain=alice.wallet`)).statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });
});
