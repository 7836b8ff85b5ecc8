import type { Address } from "@solana/kit";
import type { WebSocket } from "ws";
import {
  type AccountOptions,
  accountJson,
  address,
  commitmentOf,
  compile,
  type Filter,
  type Json,
  matches,
  RpcError,
} from "./solana-accounts.js";
import type { LedgerAccount, LedgerCommitment, LedgerListener, SolanaLedger } from "./solana-ledger.js";

type LedgerChange = Parameters<LedgerListener>[1];

/** A written account as a notification shows it: a closed one has no lamports, no data, the system program. */
function notifiedJson(a: LedgerAccount & { exists: boolean }, o: AccountOptions): Json {
  if (a.exists) return accountJson(a, o);
  const closed = { ...a, data: new Uint8Array(0), owner: "11111111111111111111111111111111" as Address };
  return { ...accountJson(closed, o), lamports: 0 };
}

/**
 * `programSubscribe` (with filters, encoding, dataSlice), `accountSubscribe` (encoding, dataSlice:
 * every write of the account, its closing included) and `slotSubscribe`, as Solana notifies them.
 */
export function subscriptions(ledger: SolanaLedger, ws: WebSocket): void {
  let next = 1;
  const subs = new Map<
    number,
    | {
        kind: "program";
        program: Address;
        opts: AccountOptions;
        filters: Filter[];
        commitment: LedgerCommitment;
      }
    | { kind: "account"; address: Address; opts: AccountOptions; commitment: LedgerCommitment }
    | { kind: "slot" }
  >();
  const notify = (method: string, subscription: number, result: unknown) =>
    ws.send(JSON.stringify({ jsonrpc: "2.0", method, params: { result, subscription } }));
  const heard = (level: "confirmed" | "finalized") => (slot: number, accounts: LedgerChange) => {
    for (const [id, s] of subs) {
      if (s.kind !== "slot" && (s.commitment === "finalized") !== (level === "finalized")) continue;
      if (s.kind === "slot" && level === "finalized") continue;
      if (s.kind === "account") {
        for (const a of accounts)
          if (a.address === s.address)
            notify("accountNotification", id, { context: { slot }, value: notifiedJson(a, s.opts) });
        continue;
      }
      if (s.kind === "slot") {
        ws.send(
          JSON.stringify({
            jsonrpc: "2.0",
            method: "slotNotification",
            params: { result: { slot, parent: slot - 1, root: ledger.slot("finalized") }, subscription: id },
          }),
        );
        continue;
      }
      for (const a of accounts) {
        if (a.owner !== s.program) continue;
        if (a.exists && !matches(a, s.filters)) continue;
        notify("programNotification", id, {
          context: { slot },
          value: { pubkey: a.address, account: notifiedJson(a, s.opts) },
        });
      }
    }
  };
  const offs = [
    ledger.onChange(heard("confirmed"), "confirmed"),
    ledger.onChange(heard("finalized"), "finalized"),
  ];
  ws.on("close", () => {
    for (const off of offs) off();
  });
  ws.on("message", (raw) => {
    let req: { id?: unknown; method?: string; params?: unknown[] };
    try {
      req = JSON.parse(String(raw));
    } catch {
      ws.send(JSON.stringify({ jsonrpc: "2.0", error: { code: -32700, message: "Parse error" }, id: null }));
      return;
    }
    const id = req.id ?? null;
    const params = Array.isArray(req.params) ? req.params : [];
    try {
      if (req.method === "programSubscribe") {
        const sub = next++;
        const opts = (params[1] ?? {}) as AccountOptions;
        subs.set(sub, {
          kind: "program",
          program: address(params[0]),
          opts,
          filters: compile(opts.filters ?? []),
          commitment: commitmentOf(opts),
        });
        ws.send(JSON.stringify({ jsonrpc: "2.0", result: sub, id }));
      } else if (req.method === "accountSubscribe") {
        const sub = next++;
        const opts = (params[1] ?? {}) as AccountOptions;
        subs.set(sub, { kind: "account", address: address(params[0]), opts, commitment: commitmentOf(opts) });
        ws.send(JSON.stringify({ jsonrpc: "2.0", result: sub, id }));
      } else if (req.method === "slotSubscribe") {
        const sub = next++;
        subs.set(sub, { kind: "slot" });
        ws.send(JSON.stringify({ jsonrpc: "2.0", result: sub, id }));
      } else if (
        req.method === "programUnsubscribe" ||
        req.method === "accountUnsubscribe" ||
        req.method === "slotUnsubscribe"
      ) {
        ws.send(JSON.stringify({ jsonrpc: "2.0", result: subs.delete(Number(params[0])), id }));
      } else throw new RpcError(-32601, "Method not found");
    } catch (e) {
      const code = e instanceof RpcError ? e.code : -32603;
      ws.send(JSON.stringify({ jsonrpc: "2.0", error: { code, message: (e as Error).message }, id }));
    }
  });
}
