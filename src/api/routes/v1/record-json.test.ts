import { Type } from "@sinclair/typebox";
import Fastify, { type FastifyInstance, type FastifyReply } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DomainWithRecords } from "../../../domain/types.js";
import type { RankedDomain } from "../../../resolution/rank.js";
import { shapeRecord, type WireRecord } from "../../../resolution/record-shape.js";
import {
  createForwardAnswers,
  createReverseAnswers,
  type ForwardAnswers,
  JSON_CONTENT_TYPE,
  type ReverseAnswers,
} from "./record-json.js";
import { ForwardRecord, ok, ReverseRecord } from "./v1.schemas.js";

function domain(over: Partial<DomainWithRecords> = {}): DomainWithRecords {
  return {
    id: 1,
    provider: "NAMESPACE_A",
    network: "POLYGON",
    tokenId: `0x${"1".padStart(64, "0")}`,
    name: "alice.wallet",
    sld: "alice",
    tld: "wallet",
    owner: "0x00000000000000000000000000000000000a11ce",
    contractAddress: "0x465ea4967479a96d4490d575b5a6cc2b4a4bee65",
    resolver: null,
    registeredAt: 1_700_000_000_000,
    registeredBlock: 10,
    expiresAt: null,
    lastUpdateBlock: 10,
    lastUpdateAt: 1_700_000_000_123,
    baseScore: 50,
    spam: false,
    csamOk: true,
    kyc: false,
    tags: [],
    records: [
      { key: "record.A.0", value: "192.0.2.1", nativeKey: "record.A.0", nativeValue: "192.0.2.1" },
      { key: "token.ETH.0", value: "0xabc", nativeKey: "token.ETH.0", nativeValue: "0xabc" },
    ],
    ...over,
  };
}

const rec = (key: string, value: string) => ({ key, value, nativeKey: key, nativeValue: value });

function ranked(d: DomainWithRecords, over: Partial<RankedDomain> = {}): RankedDomain {
  return { domain: d, score: d.baseScore, spam: d.spam, tags: d.tags, details: [], ...over };
}

// Records and fields that stress a serializer: escapes, odd keys, numbers it must round or clamp.
const CASES: RankedDomain[] = [
  ranked(domain()),
  ranked(domain({ records: [] })),
  ranked(domain({ id: 2, kyc: true, spam: true, tags: ["collision", "origin-provider"] }), { score: 67.6 }),
  ranked(domain({ id: 3 }), { score: Number.NaN, tags: ["expired"] }),
  ranked(domain({ id: 4, lastUpdateAt: Number.NaN }), { score: 140 }),
  ranked(
    domain({
      id: 5,
      name: "ünï🚀.wallet",
      sld: "ünï🚀",
      records: [
        rec("__proto__", "not a prototype"),
        rec("10", "integer-like key"),
        rec("2", "another"),
        rec("record.TXT.0", 'quote " backslash \\ newline \n tab \t nul \u0000 bell \u0007'),
        rec("record.TXT.1", "line separator \u2028 paragraph \u2029 lone \ud800 surrogate"),
        rec("record.TXT.2", "x".repeat(5000)),
        rec("social.TWITTER.0", "</script><script>alert(1)</script>"),
      ],
    }),
  ),
];

let app: FastifyInstance;
let answers: ForwardAnswers | null = null;
let reverseAnswers: ReverseAnswers | null = null;
// The same cases on frozen domains, as the SQLite store hands them out: their bytes are memoized.
const FROZEN: RankedDomain[] = CASES.map((r) => ({ ...r, domain: Object.freeze({ ...r.domain }) }));
const reverseCases = (q: unknown) =>
  (q as { n: string }).n === "0" ? [] : (q as { n: string }).n === "frozen" ? FROZEN : CASES;

beforeAll(async () => {
  // The reference: the envelope serialized by the response schema, as the routes did before.
  app = Fastify();
  const pick = (q: unknown) => CASES[Number((q as { i: string }).i)];
  const many = (q: unknown) => ((q as { n: string }).n === "0" ? [] : CASES);
  app.get("/schema/one", { schema: { response: { 200: ok(ForwardRecord) } } }, async (req) => ({
    result: true,
    data: shapeRecord(pick(req.query), "forward", false),
  }));
  app.get("/schema/many", { schema: { response: { 200: ok(Type.Array(ForwardRecord)) } } }, async (req) => ({
    result: true,
    data: many(req.query).map((r) => shapeRecord(r, "forward", false)),
  }));
  const ours = (reply: FastifyReply) =>
    (answers ??= createForwardAnswers(
      reply.compileSerializationSchema(ForwardRecord) as unknown as (r: WireRecord) => string,
    ));
  app.get("/bytes/one", async (req, reply) => {
    reply.header("content-type", JSON_CONTENT_TYPE);
    return ours(reply).resolveBody(pick(req.query));
  });
  app.get("/bytes/many", async (req, reply) => {
    reply.header("content-type", JSON_CONTENT_TYPE);
    return ours(reply).deepResolveBody(many(req.query));
  });
  app.get(
    "/schema/reverse",
    { schema: { response: { 200: ok(Type.Array(ReverseRecord)) } } },
    async (req) => ({
      result: true,
      data: reverseCases(req.query).map((r) => shapeRecord(r, "reverse", false)),
    }),
  );
  app.get("/bytes/reverse", async (req, reply) => {
    reply.header("content-type", JSON_CONTENT_TYPE);
    reverseAnswers ??= createReverseAnswers(
      reply.compileSerializationSchema(ReverseRecord) as unknown as (r: WireRecord) => string,
    );
    return reverseAnswers.listBody(reverseCases(req.query));
  });
  await app.ready();
});
afterAll(async () => {
  await app.close();
});

describe("forward answers as bytes", () => {
  it.each(CASES.map((_, i) => i))("writes case %i exactly as the response schema does", async (i) => {
    const a = await app.inject(`/schema/one?i=${i}`);
    const b = await app.inject(`/bytes/one?i=${i}`);
    expect(b.statusCode).toBe(200);
    expect(b.headers["content-type"]).toBe(a.headers["content-type"]);
    expect(b.body).toBe(a.body);
    expect(b.rawPayload.equals(a.rawPayload)).toBe(true);
  });

  it("writes deep-resolve lists, empty or not, exactly as the response schema does", async () => {
    for (const n of ["0", "all"]) {
      const a = await app.inject(`/schema/many?n=${n}`);
      const b = await app.inject(`/bytes/many?n=${n}`);
      expect(b.rawPayload.equals(a.rawPayload)).toBe(true);
      expect(b.headers["content-type"]).toBe(a.headers["content-type"]);
    }
  });
});

describe("reverse answers as bytes", () => {
  it("writes reverse-resolve lists, empty or not, frozen domains twice, exactly as the response schema does", async () => {
    for (const n of ["0", "all", "frozen", "frozen"]) {
      const a = await app.inject(`/schema/reverse?n=${n}`);
      const b = await app.inject(`/bytes/reverse?n=${n}`);
      expect(b.statusCode).toBe(200);
      expect(b.rawPayload.equals(a.rawPayload)).toBe(true);
      expect(b.headers["content-type"]).toBe(a.headers["content-type"]);
    }
    // No smartContractAddress in a reverse record, and no forward bytes reused for it.
    const body = (await app.inject("/bytes/reverse?n=all")).body;
    expect(body).not.toContain("smartContractAddress");
  });
});

describe("memoized record bytes", () => {
  const serializeCalls: WireRecord[] = [];
  const make = () =>
    createForwardAnswers((r) => {
      serializeCalls.push(r);
      return JSON.stringify(r);
    });

  it("serializes a frozen domain once per ranking and reuses the bytes", () => {
    const a = make();
    const d = Object.freeze(domain());
    serializeCalls.length = 0;
    const first = a.resolveBody(ranked(d));
    expect(a.resolveBody(ranked(d))).toBe(first);
    expect(a.resolveBody(ranked(d, { tags: [] }))).toBe(first); // equal tags, another array
    const other = a.resolveBody(ranked(d, { score: 70 }));
    expect(other).not.toBe(first);
    expect(JSON.parse(other.toString()).data.score).toBe(70);
    expect(a.resolveBody(ranked(d))).toBe(first);
    expect(a.resolveBody(ranked(d, { spam: true }))).not.toBe(first);
    expect(serializeCalls.length).toBe(3);
    // deep-resolve reuses the same bytes
    const list = a.deepResolveBody([ranked(d), ranked(d, { score: 70 })]);
    expect(serializeCalls.length).toBe(3);
    expect(JSON.parse(list.toString()).data.map((r: WireRecord) => r.score)).toEqual([50, 70]);
  });

  it("never memoizes a domain that is not frozen: the store may hand out objects it changes", () => {
    const a = make();
    const d = domain();
    serializeCalls.length = 0;
    const first = a.resolveBody(ranked(d));
    d.owner = "0x0000000000000000000000000000000000000b0b";
    const second = a.resolveBody(ranked(d));
    expect(serializeCalls.length).toBe(2);
    expect(JSON.parse(second.toString()).data.ownerAddress).toBe(d.owner);
    expect(first.equals(second)).toBe(false);
  });

  it("keys on the tags a ranker gave, even when it changes its array afterwards", () => {
    const a = make();
    const d = Object.freeze(domain());
    const tags = ["expired"];
    const first = a.resolveBody(ranked(d, { tags }));
    tags[0] = "collision";
    const changed = a.resolveBody(ranked(d, { tags }));
    expect(JSON.parse(changed.toString()).data.info.tags).toEqual(["collision"]);
    expect(a.resolveBody(ranked(d, { tags: ["expired"] }))).toBe(first);
  });
});
