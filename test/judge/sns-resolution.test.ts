import type { Address } from "@solana/kit";
import { Connection, PublicKey } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SnsScanStats, SnsSync } from "../../src/crawler/sns-sync.js";
import { SNS_HOSTILE, SNS_NAMES, SNS_WALLETS } from "../../src/devnet/sns-fixtures.js";
import { snsAdapter } from "../../src/providers/sns/sns.adapter.js";
import { canonicalKeyOf, SNS_RECORDS } from "../../src/providers/sns/sns-records.js";
import { createTestApp, type TestApp } from "../api/helpers/test-app.js";
import { type SnsEndpoint, snsPass, startSnsEndpoint } from "../helpers/sns-world.js";
import { sns as sdk } from "./sns-sdk.js";

/**
 * A judge we did not write: Bonfida's `@bonfida/spl-name-service` 3.0.26 (on @solana/web3.js 1.x)
 * reads every `.sol` name of the SNS world from the devnet's Solana endpoint, and omniname's API
 * answers from the map its SNS source built from the same endpoint. Owner (the SDK's rule:
 * the tokenized name's NFT holder, else the registry owner), records (Records V2 when fresh, V1
 * where V2 is absent, each mapped onto our canonical key) and primary names must agree.
 */

interface Answer {
  owner: string | null;
  records: Record<string, string>;
}

async function sdkAnswer(conn: Connection, name: string): Promise<Answer> {
  const domain = name.replace(/\.sol$/, "");
  const key = sdk.getDomainKeySync(domain).pubkey;
  let owner: string | null = null;
  try {
    const { registry, nftOwner } = await sdk.NameRegistryState.retrieve(conn, key);
    owner = (nftOwner ?? registry.owner).toBase58();
  } catch {
    return { owner: null, records: {} };
  }
  const records: Record<string, string> = {};
  for (const record of SNS_RECORDS) {
    let value: string | undefined;
    let v2Exists = false;
    try {
      const v2 = await sdk.getRecordV2(conn, domain, record, { deserialize: true });
      v2Exists = true;
      if (v2.verified.staleness) value = v2.deserializedContent;
    } catch {
      // no V2 record, or content the SDK cannot deserialize
    }
    if (!v2Exists)
      try {
        value = await sdk.getRecord(conn, domain, record, true);
      } catch {
        // no V1 record
      }
    if (value !== undefined && value !== "") records[canonicalKeyOf(record)] = value;
  }
  return { owner, records };
}

describe("SNS names: Bonfida's spl-name-service against omniname's API", () => {
  let sns: SnsEndpoint;
  let conn: Connection;
  let t: TestApp;
  let stats: SnsScanStats;
  let sync: SnsSync;

  beforeAll(async () => {
    sns = await startSnsEndpoint();
    conn = new Connection(sns.rpc.url, "finalized");
    t = await createTestApp({
      seed: async (store) => {
        ({ sync, stats } = await snsPass(sns, store));
      },
      now: Date.now(),
    });
  });
  afterAll(async () => {
    await t?.close();
    await sns?.close();
  });

  const api = async (path: string) => {
    const r = await t.get(`/svc/api/v1/${path}`);
    return { status: r.statusCode, body: r.json() };
  };
  const apiAnswer = async (name: string): Promise<Answer> => {
    const r = await api(`resolve?domain=${encodeURIComponent(name)}&network=SOLANA&provider=NAMESPACE_D`);
    if (r.status === 404) return { owner: null, records: {} };
    expect(r.status).toBe(200);
    return { owner: r.body.data.ownerAddress, records: r.body.data.records };
  };

  it("agrees with the SDK on the owner and records of every seeded name", async () => {
    const diffs: string[] = [];
    for (const name of SNS_NAMES) {
      const [want, got] = await Promise.all([sdkAnswer(conn, name), apiAnswer(name)]);
      expect(want.owner, `${name}: the SDK finds the name`).not.toBeNull();
      if (
        JSON.stringify(want) !==
        JSON.stringify({ owner: got.owner, records: sorted(got.records, want.records) })
      )
        diffs.push(`${name}: SDK ${JSON.stringify(want)} API ${JSON.stringify(got)}`);
    }
    expect(diffs).toEqual([]);
  });

  it("agrees with the SDK on the primary name of every wallet, and refuses a malformed address", async () => {
    const owners = new Map<string, string[]>();
    // huge.sol: served, only its overlong record is skipped.
    for (const name of [...SNS_NAMES, "huge.sol"]) {
      const owner = (await sdkAnswer(conn, name)).owner as string;
      owners.set(owner, [...(owners.get(owner) ?? []), name]);
    }
    const diffs: string[] = [];
    let primaries = 0;
    for (const wallet of Object.values(SNS_WALLETS)) {
      let want: string | null = null;
      try {
        const p = await sdk.getPrimaryDomain(conn, new PublicKey(wallet));
        if (!p.stale) want = `${p.reverse}.sol`;
      } catch {
        // no primary domain account
      }
      const r = await api(`reverse-resolve?walletAddress=${wallet}&network=SOLANA&provider=NAMESPACE_D`);
      expect(r.status, wallet).toBe(200);
      const listed = (r.body.data as Array<{ domain: string }>).map((d) => d.domain);
      // The primary name first (the SDK's, not stale); then only names the SDK says the wallet owns.
      if (want !== null) {
        primaries++;
        if (listed[0] !== want) diffs.push(`${wallet}: SDK primary ${want}, API ${listed.join(",")}`);
      }
      const owned = new Set(owners.get(wallet) ?? []);
      for (const d of listed.slice(want === null ? 0 : 1))
        if (!owned.has(d)) diffs.push(`${wallet}: API lists ${d}, which the SDK does not give it`);
    }
    expect(diffs).toEqual([]);
    expect(primaries).toBe(2); // alice → alice.sol, carol → bob.sol; dave's points at a name he does not own
    // Case-sensitive: the same letters upper-cased are not alice's address.
    const upper = await api(
      `reverse-resolve?walletAddress=${SNS_WALLETS.alice.toUpperCase()}&network=SOLANA`,
    );
    expect(
      upper.status === 400 || (upper.status === 200 && upper.body.data.length === 0),
      JSON.stringify(upper.body),
    ).toBe(true);
    const bad = await api("reverse-resolve?walletAddress=7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsUU");
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("INVALID_ADDRESS");
  });

  it("serves the tokenized name to its NFT holder, fresh V2 over stale, V1 where V2 is absent", async () => {
    expect((await apiAnswer("bob.sol")).owner).toBe(SNS_WALLETS.carol);
    const carol = await apiAnswer("carol.sol");
    expect(carol.records["redirect.WEBSITE.0"]).toBeUndefined();
    expect(carol.records["social.GITHUB.0"]).toBe("carol");
    expect((await apiAnswer("dave.sol")).records).toMatchObject({
      "token.ETH.0": "0x00000000219ab540356cbb839cbe05303d7705fa",
      "record.A.0": "198.51.100.7",
    });
  });

  it("skips and reports the hostile accounts, and serves the rest", async () => {
    const reported = new Set(stats.issues.map((i) => i.account));
    for (const account of Object.values(SNS_HOSTILE)) expect(reported.has(account), account).toBe(true);
    expect((await api("resolve?domain=weird-class.sol&network=SOLANA")).status).toBe(404);
    const huge = await apiAnswer("huge.sol");
    expect(huge.owner).toBe(SNS_WALLETS.eve);
    expect(huge.records["profile.OWNER.description"]).toBeUndefined();
  });

  it("journals nothing on a pass over unchanged accounts, and the change of a transfer", async () => {
    const again = await sync.scanOnce();
    expect(again.changed).toBe(0);
    sns.writer.transfer("dave.sol", SNS_WALLETS.eve as Address);
    const moved = await sync.scanOnce();
    expect(moved.changed).toBeGreaterThanOrEqual(1);
    expect((await apiAnswer("dave.sol")).owner).toBe(SNS_WALLETS.eve);
    expect((await sdkAnswer(conn, "dave.sol")).owner).toBe(SNS_WALLETS.eve);
  });

  it("is what the adapter names: token id of a name = its account", () => {
    expect(snsAdapter.tokenIdOf("alice.sol")).toBe(
      `0x${Buffer.from(new PublicKey(sdk.getDomainKeySync("alice").pubkey).toBytes()).toString("hex")}`,
    );
  });
});

/** The API's records restricted to the keys of the SNS record set, in the SDK answer's key order. */
function sorted(got: Record<string, string>, want: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of Object.keys(want)) if (k in got) out[k] = got[k];
  for (const k of Object.keys(got)) if (!(k in out)) out[k] = got[k];
  return out;
}
