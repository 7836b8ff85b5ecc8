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
import { isPortTaken, onFreePorts } from "./chain-start.js";
import { createSolanaLedger } from "./solana-ledger.js";
import { DEVNET_ADVANCE_METHOD, DEVNET_DROP_METHOD, type SolanaRpc, startSolanaRpc } from "./solana-rpc.js";
import { ataOf, createSnsWriter } from "./sns-writer.js";

const ALICE = "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU" as Address;
const BOB = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM" as Address;

/** A notification's params as the tests read them. */
interface Notified {
  subscription: number;
  result: { context: { slot: number }; value: { owner: string; data: [string, string] } };
}

/** A raw WebSocket on the endpoint: every message it received, and a wait for one of them. */
async function openSocket(url: string) {
  const ws = new WebSocket(url);
  const got: Array<{ id?: number; result?: unknown; method?: string; params?: Notified }> = [];
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
  return { ws, got, until };
}

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
    const { ws, got, until } = await openSocket(rpc.wsUrl);
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
      const n = await until(() => got.find((m) => m.method === "accountNotification")?.params);
      expect(n.subscription).toBe(sub);
      expect(n.result.context.slot).toBe(slot);
      expect(n.result.value.owner).toBe(SNS_PROGRAMS.splToken);
      const data = new Uint8Array(Buffer.from(n.result.value.data[0], "base64"));
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

describe("the devnet's Solana with finalized lagging confirmed, and forks", () => {
  let rpc: SolanaRpc;
  const ledger = createSolanaLedger(undefined, { finalityLag: 2 });
  const writer = createSnsWriter(ledger);
  beforeAll(async () => {
    rpc = await startSolanaRpc(ledger);
    ledger.advance(10);
  });
  afterAll(async () => {
    await rpc?.close();
  });
  const post = async (method: string, params: unknown[] = []) => {
    const r = await (
      await fetch(rpc.url, {
        method: "POST",
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
      })
    ).json();
    if (r.error) throw Object.assign(new Error(r.error.message), { code: r.error.code });
    return r.result;
  };

  it("answers each commitment its own state, notifies each when reached, and drops unfinalized slots", async () => {
    const { ws, got, until } = await openSocket(rpc.wsUrl);
    const subscribe = async (id: number, commitment: string) => {
      ws.send(
        JSON.stringify({
          jsonrpc: "2.0",
          id,
          method: "programSubscribe",
          params: [SNS_PROGRAMS.nameService, { encoding: "base64", commitment }],
        }),
      );
      return (await until(() => got.find((m) => m.id === id))).result as number;
    };
    /** The slots each subscription was notified at, after a round trip (answers come in order). */
    let probe = 100;
    const notified = async (sub: number) => {
      const id = ++probe;
      ws.send(JSON.stringify({ jsonrpc: "2.0", id, method: "getSlot" }));
      await until(() => got.find((m) => m.id === id));
      return [
        ...new Set(
          got.filter((m) => m.params?.subscription === sub).map((m) => m.params?.result.context.slot),
        ),
      ];
    };
    const confirmedSub = await subscribe(1, "confirmed");
    const finalizedSub = await subscribe(2, "finalized");
    const key = domainKeyOf("fork.sol") as Address;
    const confirmedConn = new Connection(rpc.url, "confirmed");
    const finalizedConn = new Connection(rpc.url, "finalized");
    const sdkOwner = async (conn: Connection) => {
      try {
        return (await sdk.NameRegistryState.retrieve(conn, new PublicKey(key))).registry.owner.toBase58();
      } catch {
        return null;
      }
    };
    try {
      const registered = writer.register("fork.sol", ALICE);
      expect(await post("getSlot", [{ commitment: "confirmed" }])).toBe(registered);
      expect(await post("getSlot", [{ commitment: "finalized" }])).toBe(registered - 2);
      expect(await post("getSlot")).toBe(registered - 2); // Solana's default commitment: finalized
      // Bonfida's SDK over web3.js sees the name at confirmed only.
      expect([await sdkOwner(confirmedConn), await sdkOwner(finalizedConn)]).toEqual([ALICE, null]);
      const info = await post("getAccountInfo", [key, { encoding: "base64", commitment: "finalized" }]);
      expect(info).toEqual({ context: { slot: registered - 2, apiVersion: "2.2.0" }, value: null });
      expect(await notified(confirmedSub)).toEqual([registered]);
      expect(await notified(finalizedSub)).toEqual([]);
      // Two slots later the registration is final: notified at finalized with its own slot.
      expect(await post(DEVNET_ADVANCE_METHOD, [2])).toBe(registered + 2);
      expect(await notified(finalizedSub)).toEqual([registered]);
      expect(await sdkOwner(finalizedConn)).toBe(ALICE);

      // A transfer confirmed, then its fork dropped: undone at every commitment, never finalized.
      const moved = writer.transfer("fork.sol", BOB);
      expect([await sdkOwner(confirmedConn), await sdkOwner(finalizedConn)]).toEqual([BOB, ALICE]);
      const gpa = async (commitment: string) =>
        (
          (await post("getProgramAccounts", [
            SNS_PROGRAMS.nameService,
            {
              encoding: "base64",
              commitment,
              filters: [{ memcmp: { offset: 0, bytes: SNS_PROGRAMS.solRoot } }],
            },
          ])) as Array<{ pubkey: string; account: { data: [string, string] } }>
        )
          .filter((a) => a.pubkey === key)
          .map((a) => new PublicKey(Buffer.from(a.account.data[0], "base64").subarray(32, 64)).toBase58());
      expect([await gpa("confirmed"), await gpa("finalized")]).toEqual([[BOB], [ALICE]]);
      expect(await post(DEVNET_DROP_METHOD)).toEqual([moved]);
      expect([await sdkOwner(confirmedConn), await sdkOwner(finalizedConn)]).toEqual([ALICE, ALICE]);
      expect([await gpa("confirmed"), await gpa("finalized")]).toEqual([[ALICE], [ALICE]]);
      await post(DEVNET_ADVANCE_METHOD, [5]);
      expect(await notified(finalizedSub)).toEqual([registered]);
      expect(await notified(confirmedSub)).toEqual([registered, moved]);
      // Slot numbers go on past the dropped ones.
      expect(writer.transfer("fork.sol", BOB)).toBeGreaterThan(moved + 5);
      await expect(post("getSlot", [{ commitment: "recent-ish" }])).rejects.toMatchObject({ code: -32602 });
    } finally {
      ws.close();
    }
  });
});

describe("the devnet's Solana endpoint on a taken port", () => {
  it("rejects with an error onFreePorts retries past, and leaves no 'error' event unhandled", async () => {
    const holder = await startSolanaRpc(createSolanaLedger());
    const unhandled: unknown[] = [];
    const onUncaught = (e: unknown) => unhandled.push(e);
    process.on("uncaughtException", onUncaught);
    try {
      const taken = await startSolanaRpc(createSolanaLedger(), holder.port).then(
        () => null,
        (e: unknown) => e,
      );
      expect(isPortTaken(taken)).toBe(true);
      // A WebSocketServer attached before the bind re-emitted the server's EADDRINUSE as its own
      // 'error' event, with no listener: the process died before the promise could reject.
      await new Promise((r) => setTimeout(r, 50));
      expect(unhandled).toEqual([]);
      // The retry lands on the next free port, WebSocket included.
      const next = await onFreePorts(holder.port, 1, (port) => startSolanaRpc(createSolanaLedger(), port));
      try {
        expect(next.port).not.toBe(holder.port);
        const { ws } = await openSocket(next.wsUrl);
        ws.close();
      } finally {
        await next.close();
      }
    } finally {
      process.off("uncaughtException", onUncaught);
      await holder.close();
    }
  });
});
