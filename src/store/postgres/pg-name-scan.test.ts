import { describe, expect, it } from "vitest";
import { DOMAIN_READ_COLUMNS, toDomainWithRecords } from "../kysely/domain-map-scans.queries.js";
import { type DomainRow, toDomain } from "../kysely/rows.js";
import { copyField, createPageCutter } from "./pg-name-scan.js";

describe("copyField", () => {
  it.each([
    ["plain", "plain"],
    ["\\N", null],
    ["a\\\\b", "a\\b"],
    ["tab\\there", "tab\there"],
    ["line\\nbreak\\r", "line\nbreak\r"],
    ["\\b\\f\\v", "\b\f\v"],
    ["\\N-not-null", "N-not-null"],
    ["é漢字🙂", "é漢字🙂"],
  ])("%j -> %j", (field, want) => {
    expect(copyField(field)).toBe(want);
  });
});

/** A COPY line of the scan: a domain's 20 columns, then a record's 4 (or nulls). */
function line(id: number, name: string, record: [string, string] | null): string {
  const domain = [
    String(id),
    "NAMESPACE_A",
    "POLYGON",
    `0x${id}`,
    name,
    name.split(".")[0],
    name.split(".")[1],
    "0xowner",
    "0xcontract",
    "\\N",
    "1700000000000",
    "\\N",
    "\\N",
    "7",
    "1700000000001",
    "50",
    "0",
    "1",
    "0",
    // The JSON text ["a\\tag"] (a backslash in the tag), each backslash doubled by COPY.
    '["a\\\\\\\\tag"]',
  ];
  const rec = record === null ? ["\\N", "\\N", "\\N", "\\N"] : [record[0], record[1], record[0], record[1]];
  return [...domain, ...rec].join("\t");
}

describe("createPageCutter", () => {
  it("builds domains with their records and cuts pages only between names", () => {
    const cut = createPageCutter(2);
    const pages = [];
    const lines = [
      line(1, "a.x", ["record.A.0", "1.2.3.4"]),
      line(1, "a.x", ["record.TXT.0", "tab\\there"]),
      line(2, "b.x", null),
      line(3, "b.x", null),
      line(4, "b.x", ["token.ETH.0", "v"]),
      line(5, "c.x", null),
    ];
    for (const l of lines) {
      const full = cut.push(l);
      if (full !== null) pages.push(full);
    }
    pages.push(cut.end());
    expect(pages.map((p) => p.map((d) => d.id))).toEqual([[1, 2, 3, 4], [5]]);
    const [a, b] = pages[0];
    expect(a.records).toEqual([
      { key: "record.A.0", value: "1.2.3.4", nativeKey: "record.A.0", nativeValue: "1.2.3.4" },
      { key: "record.TXT.0", value: "tab\there", nativeKey: "record.TXT.0", nativeValue: "tab\there" },
    ]);
    expect(b.records).toEqual([]);
    expect(a).toMatchObject({
      resolver: null,
      registeredAt: 1700000000000,
      registeredBlock: null,
      lastUpdateBlock: 7,
      baseScore: 50,
      spam: false,
      csamOk: true,
      kyc: false,
      tags: ["a\\tag"],
    });
  });

  it("a text that reads \\N (sent as \\\\N) stays text; only the bare \\N is null", () => {
    const cut = createPageCutter(10);
    // A record whose key and value are the two characters \N, and a resolver that reads \N.
    const fields = line(1, "a.x", ["\\\\N", "\\\\N"]).split("\t");
    fields[9] = "\\\\N";
    cut.push(fields.join("\t"));
    const [d] = cut.end();
    expect(d.resolver).toBe("\\N");
    expect(d.records).toEqual([{ key: "\\N", value: "\\N", nativeKey: "\\N", nativeValue: "\\N" }]);
    expect(d.registeredBlock).toBeNull();
  });

  it("gives an empty last page for an empty map", () => {
    expect(createPageCutter(10).end()).toEqual([]);
  });
});

/** A value as COPY's text format writes it. */
const copyText = (v: string | number | null) =>
  v === null
    ? "\\N"
    : String(v).replace(/[\\\t\n\r]/g, (c) => ({ "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r" })[c]!);

describe("a domain read from a scan's row", () => {
  const base: DomainRow = {
    id: 41,
    provider: "NAMESPACE_B",
    network: "ETHEREUM",
    token_id: "0xt\\ok\ten",
    name: "a.wallet",
    rname: "wallet.a",
    sld: "a",
    tld: "wallet",
    owner: "0xowner",
    contract_address: "0xcontract",
    resolver: "0xresolver",
    registered_at: 1700000000000,
    registered_block: 12,
    expires_at: 1800000000000,
    last_update_block: 13,
    last_update_at: 1700000000001,
    base_score: 57,
    spam: 1,
    csam_ok: 0,
    kyc: 1,
    tags: '["a\\\\b","c"]',
  };
  const nulls: DomainRow = {
    ...base,
    id: 42,
    resolver: null,
    registered_at: null,
    registered_block: null,
    expires_at: null,
    spam: 0,
    csam_ok: 1,
    kyc: 0,
    tags: "[]",
  };
  // Every column of DOMAIN_READ_COLUMNS, in COPY text and in JSON: a column added to the scans and
  // to rows.ts but read differently by either format fails here.
  it.each([
    ["values", base],
    ["nulls and other flags", nulls],
  ])("is the same from COPY text, from JSON values and from a row object (%s)", (_, row) => {
    const want = { ...toDomain(row), records: [] };
    const values = DOMAIN_READ_COLUMNS.map((c) => row[c]);
    const cut = createPageCutter(10);
    cut.push([...values.map(copyText), "\\N", "\\N", "\\N", "\\N"].join("\t"));
    expect(cut.end()).toEqual([want]);
    expect(toDomainWithRecords(JSON.parse(JSON.stringify(values)), [])).toEqual(want);
  });
});
