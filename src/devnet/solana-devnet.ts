import { randomBytes } from "node:crypto";
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { type Address, getBase58Decoder, isAddress } from "@solana/kit";
import { NETWORKS } from "../domain/networks.js";
import { SNS_MAINNET } from "../providers/sns/sns.adapter.js";
import type { DevnetNetwork } from "./manifest.js";
import { seedSnsWorld } from "./sns-fixtures.js";
import { createSnsWriter, type SnsWriter } from "./sns-writer.js";
import { createSolanaLedger, type LedgerState, type SolanaLedger } from "./solana-ledger.js";
import { RpcError } from "./solana-accounts.js";
import { type SolanaRpc, startSolanaRpc } from "./solana-rpc.js";

/**
 * The devnet's Solana: a LiteSVM ledger (solana-ledger.ts) behind the JSON-RPC and WebSocket
 * endpoint (solana-rpc.ts), seeded with the `.sol` world of sns-fixtures.ts, its state kept in
 * DATA_DIR/solana.json.gz. The state file is rewritten (to a temporary file, fsynced, renamed) in
 * the same call as every slot's write, before anyone can read that slot: after a crash the file
 * holds every slot any reader saw, so a restart never takes back what the SNS source indexed.
 * A devnet slot holds a handful of accounts and the demo ledger a few dozen: the write is small.
 */
export interface DevnetSolana {
  readonly ledger: SolanaLedger;
  readonly writer: SnsWriter;
  readonly rpc: SolanaRpc;
  /** True when the ledger was loaded from its state file (nothing seeded). */
  readonly resumed: boolean;
  /** The manifest's `networks.SOLANA`. */
  manifestEntry(): DevnetNetwork;
  stop(): Promise<void>;
}

/**
 * The devnet's own JSON-RPC method for changing `.sol` names from another process (`devnet
 * simulate`), through the same writer the seeding uses: params `[operation, ...arguments]`.
 */
export const SNS_WRITE_METHOD = "omniname_snsWrite";

/** The operations of SNS_WRITE_METHOD and their string arguments (contents in base64). */
export const SNS_WRITE_OPS = {
  register: ["name", "owner"],
  transfer: ["name", "to"],
  remove: ["name"],
  setRecordV2: ["name", "record", "contentBase64"],
  deleteRecordV2: ["name", "record"],
  setPrimary: ["wallet", "name"],
} as const;
export type SnsWriteOp = keyof typeof SNS_WRITE_OPS;

export function solanaStatePath(dataDir: string): string {
  return join(dataDir, "solana.json.gz");
}

interface SavedLedger {
  version: 1;
  slot: number;
  genesisHash: string;
  accounts: Array<{ address: string; owner: string; lamports: string; data: string }>;
}

/** The ledger state saved in `path`, or null when there is none; throws when it cannot be read. */
export function loadSolanaState(path: string): LedgerState | null {
  if (!existsSync(path)) return null;
  const saved = JSON.parse(gunzipSync(readFileSync(path)).toString("utf8")) as SavedLedger;
  if (saved?.version !== 1 || !Number.isInteger(saved.slot) || !Array.isArray(saved.accounts))
    throw new Error(`${path} is not a saved Solana ledger`);
  return {
    slot: saved.slot,
    genesisHash: saved.genesisHash,
    accounts: saved.accounts.map((a) => ({
      address: a.address as Address,
      owner: a.owner as Address,
      lamports: BigInt(a.lamports),
      data: new Uint8Array(Buffer.from(a.data, "base64")),
    })),
  };
}

/** Writes the ledger to `path` so that the file is either the old one or the whole new one. */
export function saveSolanaState(path: string, ledger: SolanaLedger): void {
  const saved: SavedLedger = {
    version: 1,
    slot: ledger.slot(),
    genesisHash: ledger.genesisHash(),
    accounts: ledger.accounts().map((a) => ({
      address: a.address,
      owner: a.owner,
      lamports: String(a.lamports),
      data: Buffer.from(a.data).toString("base64"),
    })),
  };
  const tmp = `${path}.tmp`;
  const fd = openSync(tmp, "w", 0o644);
  try {
    writeSync(fd, gzipSync(JSON.stringify(saved)));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

/**
 * SNS_WRITE_METHOD over `writer` on `ledger`: checks each argument (a registration of a name that
 * exists is refused, as the name service refuses to create an account twice), answers the slot
 * written.
 */
export function snsWriteMethod(writer: SnsWriter, ledger: SolanaLedger): (params: unknown[]) => number {
  const text = (v: unknown, what: string): string => {
    if (typeof v !== "string" || v.length === 0 || v.length > 256)
      throw new RpcError(-32602, `Invalid params: ${what} must be a non-empty string`);
    return v;
  };
  const name = (v: unknown) => {
    const n = text(v, "name");
    if (!/^[a-z0-9-]+(\.[a-z0-9-]+)?\.sol$/.test(n))
      throw new RpcError(-32602, `Invalid params: ${n} is not a .sol name this devnet writes`);
    return n;
  };
  const wallet = (v: unknown, what: string): Address => {
    const a = text(v, what);
    if (!isAddress(a)) throw new RpcError(-32602, `Invalid params: ${what} is not a base58 address`);
    return a;
  };
  return (params) => {
    const [op, a, b, c] = params;
    try {
      switch (op) {
        case "register": {
          const n = name(a);
          if (ledger.get(writer.keyOf(n)))
            throw new RpcError(-32602, `Invalid params: ${n} is already registered`);
          return writer.register(n, wallet(b, "owner"));
        }
        case "transfer":
          return writer.transfer(name(a), wallet(b, "to"));
        case "remove":
          return writer.remove(name(a));
        case "setRecordV2":
          return writer.setRecordV2(
            name(a),
            text(b, "record"),
            new Uint8Array(Buffer.from(text(c, "content"), "base64")),
          );
        case "deleteRecordV2":
          return writer.deleteRecordV2(name(a), text(b, "record"));
        case "setPrimary":
          return writer.setPrimary(wallet(a, "wallet"), name(b));
        default:
          throw new RpcError(
            -32602,
            `Invalid params: operation must be one of ${Object.keys(SNS_WRITE_OPS).join(", ")}`,
          );
      }
    } catch (e) {
      if (e instanceof RpcError) throw e;
      // The writer's own refusals: a name that is not registered, and the like.
      throw new RpcError(-32602, `Invalid params: ${(e as Error).message}`);
    }
  };
}

export interface StartDevnetSolanaOptions {
  dataDir: string;
  port: number;
  /** Keep the ledger in DATA_DIR/solana.json.gz. */
  persist: boolean;
  /** The saved state to resume (loadSolanaState), or null for a fresh ledger. */
  state: LedgerState | null;
  /** Seed the `.sol` world (without its hostile accounts) on a fresh ledger. */
  seed: boolean;
}

/** Starts the devnet's Solana on 127.0.0.1:`port`, resumed from `state` or fresh (and seeded). */
export async function startDevnetSolana(o: StartDevnetSolanaOptions): Promise<DevnetSolana> {
  const fresh = o.state === null;
  const ledger = createSolanaLedger(
    o.state ?? { slot: 1, genesisHash: getBase58Decoder().decode(randomBytes(32)), accounts: [] },
  );
  const writer = createSnsWriter(ledger);
  const path = solanaStatePath(o.dataDir);
  if (fresh && o.seed) seedSnsWorld(writer, { hostile: false });
  // Registered before the endpoint exists: the first listener, so a slot is on disk before a
  // subscriber is told of it, and (write being synchronous) before any request can read it.
  if (o.persist) {
    saveSolanaState(path, ledger);
    ledger.onChange(() => saveSolanaState(path, ledger));
  }
  const rpc = await startSolanaRpc(ledger, o.port, {
    [SNS_WRITE_METHOD]: snsWriteMethod(writer, ledger),
  });
  return {
    ledger,
    writer,
    rpc,
    resumed: !fresh,
    manifestEntry: () => ({
      chainId: NETWORKS.SOLANA.chainId,
      rpcUrl: rpc.url,
      wsUrl: rpc.wsUrl,
      contracts: { NAMESPACE_D: SNS_MAINNET.SOLANA },
      genesisHash: ledger.genesisHash(),
    }),
    stop: () => rpc.close(),
  };
}
