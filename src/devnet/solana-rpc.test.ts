import { Connection, PublicKey } from "@solana/web3.js";
import { WebSocket } from "ws";
import type { Address } from "@solana/kit";
import { sns as sdk } from "../../test/judge/sns-sdk.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  decodeTokenAccount,
  domainKeyOf,
  SNS_PROGRAMS,
  tokenizedMintOf,
} from "../providers/sns/sns-program.js";
import { createSolanaLedger } from "./solana-ledger.js";
import { type SolanaRpc, startSolanaRpc } from "./solana-rpc.js";
import { ataOf, createSnsWriter } from "./sns-writer.js";

const ALICE = "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU" as Address;
const BOB = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM" as Address;

describe("the devnet's Solana endpoint, read by Bonfida's SDK", () => {
  let rpc: SolanaRpc;
  let conn: Connection;
  const ledger = createSolanaLedger();
  const writer = createSnsWriter(ledger);

  beforeAll(async () => {
    rpc = await startSolanaRpc(ledger);
    conn = new Connection(rpc.url, "finalized");
    writer.register("alice.sol", ALICE);
    writer.register("pay.alice.sol", ALICE);
    writer.register("bob.sol", BOB);
    writer.setRecordV2("alice.sol", "SOL", Buffer.from(new PublicKey(ALICE).toBytes()));
    writer.setRecordV2("alice.sol", "url", Buffer.from("https://alice.example"));
    writer.setRecordV2("alice.sol", "ETH", Buffer.from("00112233445566778899aabbccddeeff00112233", "hex"));
    writer.setRecordV1("alice.sol", "IPFS", Buffer.from("QmAlice"));
    writer.setPrimary(ALICE, "alice.sol");
    writer.tokenize("bob.sol", ALICE);
  });
  afterAll(async () => {
    await rpc?.close();
  });

  it("derives the same account keys as the SDK", () => {
    for (const n of ["alice.sol", "pay.alice.sol", "bob"])
      expect(domainKeyOf(n)).toBe(sdk.getDomainKeySync(n).pubkey.toBase58());
  });

  it("answers the registry, reverse, records, primary domain and tokenized owner as the SDK reads them", async () => {
    const key = sdk.getDomainKeySync("alice.sol").pubkey;
    const { registry, nftOwner } = await sdk.NameRegistryState.retrieve(conn, key);
    expect(registry.owner.toBase58()).toBe(ALICE);
    expect(registry.parentName.toBase58()).toBe(SNS_PROGRAMS.solRoot);
    expect(nftOwner).toBeNull();
    expect(await sdk.reverseLookup(conn, key)).toBe("alice");
    const v2 = await sdk.getRecordV2(conn, "alice", sdk.Record.SOL, { deserialize: true });
    expect(v2.deserializedContent).toBe(ALICE);
    expect(v2.verified.staleness).toBe(true);
    expect(
      (await sdk.getRecordV2(conn, "alice", sdk.Record.Url, { deserialize: true })).deserializedContent,
    ).toBe("https://alice.example");
    expect(
      (await sdk.getRecordV2(conn, "alice", sdk.Record.ETH, { deserialize: true })).deserializedContent,
    ).toBe("0x00112233445566778899aabbccddeeff00112233");
    expect(await sdk.getRecord(conn, "alice", sdk.Record.IPFS, true)).toBe("QmAlice");
    const primary = await sdk.getPrimaryDomain(conn, new PublicKey(ALICE));
    expect(primary.reverse).toBe("alice");
    expect(primary.stale).toBe(false);
    expect((await sdk.resolve(conn, "bob")).toBase58()).toBe(ALICE);
    const bob = await sdk.NameRegistryState.retrieve(conn, sdk.getDomainKeySync("bob.sol").pubkey);
    expect(bob.nftOwner?.toBase58()).toBe(ALICE);
    const owned = (await sdk.getAllDomains(conn, new PublicKey(ALICE))).map((k) => k.toBase58()).sort();
    expect(owned).toEqual([sdk.getDomainKeySync("alice.sol").pubkey.toBase58()].sort());
  });

  it("answers -32602 for an unknown mint, and JSON-RPC errors for bad requests", async () => {
    const post = async (body: unknown) =>
      (await fetch(rpc.url, { method: "POST", body: JSON.stringify(body) })).json();
    const unknown = await post({ jsonrpc: "2.0", id: 1, method: "getTokenLargestAccounts", params: [BOB] });
    expect(unknown.error.code).toBe(-32602);
    expect(
      (await post({ jsonrpc: "2.0", id: 2, method: "getAccountInfo", params: ["not-base58!"] })).error.code,
    ).toBe(-32602);
    expect((await post({ jsonrpc: "2.0", id: 3, method: "nope", params: [] })).error.code).toBe(-32601);
    const batch = await post([
      { jsonrpc: "2.0", id: 4, method: "getSlot" },
      { jsonrpc: "2.0", id: 5, method: "getHealth" },
    ]);
    expect(batch.map((r: { result: unknown }) => r.result)).toEqual([ledger.slot(), "ok"]);
  });

  it("notifies accountSubscribe of every write of the account (Solana's accountNotification), until unsubscribed", async () => {
    const ws = new WebSocket(rpc.wsUrl);
    interface Notified {
      subscription: number;
      result: { context: { slot: number }; value: { owner: string; data: [string, string] } };
    }
    const got: Array<{ id?: number; result?: unknown; method?: string; params: Notified }> = [];
    ws.on("message", (m) => got.push(JSON.parse(String(m))));
    await new Promise((r) => ws.once("open", r));
    const until = async <T>(find: () => T | undefined): Promise<T> => {
      for (let i = 0; i < 400; i++) {
        const v = find();
        if (v !== undefined) return v;
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error("no answer from the endpoint");
    };
    const mint = tokenizedMintOf(domainKeyOf("bob.sol") as Address);
    const held = ataOf(ALICE, mint);
    try {
      ws.send(
        JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "accountSubscribe",
          params: [held, { encoding: "base64", commitment: "finalized" }],
        }),
      );
      const sub = (await until(() => got.find((m) => m.id === 1))).result;
      writer.register("other.sol", BOB); // another account: not notified
      const slot = writer.transferNft("bob.sol", ALICE, BOB);
      const n = await until(() => got.find((m) => m.method === "accountNotification"));
      expect(n.params.subscription).toBe(sub);
      expect(n.params.result.context.slot).toBe(slot);
      expect(n.params.result.value.owner).toBe(SNS_PROGRAMS.splToken);
      const data = new Uint8Array(Buffer.from(n.params.result.value.data[0], "base64"));
      expect(decodeTokenAccount(data)).toMatchObject({ mint, owner: ALICE, amount: 0n });
      expect(got.filter((m) => m.method === "accountNotification")).toHaveLength(1);
      ws.send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "accountUnsubscribe", params: [sub] }));
      expect((await until(() => got.find((m) => m.id === 2))).result).toBe(true);
      writer.transferNft("bob.sol", BOB, ALICE);
      // The endpoint answers in order: once this answer is in, a notification of the write would be too.
      ws.send(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "getSlot" }));
      await until(() => got.find((m) => m.id === 3));
      expect(got.filter((m) => m.method === "accountNotification")).toHaveLength(1);
    } finally {
      ws.close();
    }
  });
});
