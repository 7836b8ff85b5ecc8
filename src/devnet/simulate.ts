import type { Hex } from "viem";
import type { Provider } from "../domain/providers.js";
import { callData, type EnsAddresses } from "./deploy.js";
import { unsCall } from "./real-uns.js";
import { realCallData } from "./real-ens.js";
import type { DevnetChain } from "./seed.js";
import { fnsTokenId, namehash, namehashId } from "./token-ids.js";
import { createSnsSimulation } from "./simulate-sns.js";
import { syntheticOwners } from "./synthetic-owners.js";
import type { TxRequest } from "./tx-sender.js";

export interface SimulateOptions {
  /** Operations per second, over all chains. */
  rate: number;
  /** PRNG seed: the same seed replays the same sequence of operations. */
  seed?: number;
  /** Called after each batch is sent (progress output). */
  onBatch?: (report: SimulationReport) => void;
  /** The devnet's Solana endpoint: its `.sol` names change too (simulate-sns.ts), as one more source. */
  solana?: { rpcUrl: string };
}

export interface SimulationReport {
  ops: number;
  byKind: Record<SimOpKind, number>;
  /** Transactions found reverted when their receipts were checked. */
  reverted: number;
  /** Batches that could not be sent (RPC errors); the last message is kept. */
  errors: number;
  lastError: string | null;
}

const SIM_OP_KINDS = ["register", "record", "transfer", "reset", "reverse"] as const;
export type SimOpKind = (typeof SIM_OP_KINDS)[number];

export interface Simulation {
  readonly report: SimulationReport;
  stop(): Promise<SimulationReport>;
}

const OWNERS: readonly Hex[] = syntheticOwners("sim", 9);
const TICK_MS = 100;

interface SimName {
  label: string;
  owner: Hex;
  wrapped: boolean;
}

interface Source {
  chain: DevnetChain;
  provider: Provider;
  addresses: Record<string, Hex>;
  names: SimName[];
}

function createRng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function fullName(s: Source, n: SimName): string {
  return s.provider === "NAMESPACE_C" ? `${n.label}.eth` : `${n.label}.sim`;
}

function tokenIdOf(s: Source, n: SimName): bigint {
  return s.provider === "NAMESPACE_A" ? fnsTokenId(fullName(s, n)) : namehashId(fullName(s, n));
}

/** One operation as transactions; mutates the simulated state the way the chain will. */
function opTxs(s: Source, kind: SimOpKind, rng: () => number, counter: number, runId: string): TxRequest[] {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rng() * xs.length)];
  const registry = s.addresses.registry;
  const contract = "FNSRegistry";
  // UNS runs the real contracts (real-uns.ts): names are issued by the MintingManager, and only
  // the owner acts on its name.
  const isUns = s.provider === "NAMESPACE_B";
  const uns = (fn: string, args: readonly unknown[], from: Hex): TxRequest[] => [
    { from, to: registry, data: unsCall("UNSRegistry", fn, args) },
  ];
  const ens = s.addresses as unknown as EnsAddresses;
  if (kind === "register" || s.names.length === 0) {
    const n: SimName = { label: `sim-${runId}-${counter}`, owner: pick(OWNERS), wrapped: counter % 2 === 0 };
    s.names.push(n);
    const url = `https://${n.label}.example.com`;
    if (s.provider === "NAMESPACE_C") {
      // The deployer registers as a NameWrapper controller: no commit-reveal minute in a live stream.
      n.wrapped = true;
      return [
        {
          to: ens.nameWrapper,
          data: realCallData("NameWrapper", "registerAndWrapETH2LD", [
            n.label,
            n.owner,
            BigInt(365 * 86_400),
            ens.resolver,
            0,
          ]),
        },
      ];
    }
    if (isUns) {
      const args = [n.owner, [n.label, "sim"], ["browser.redirect_url"], [url], false];
      return [{ to: s.addresses.mintingManager, data: unsCall("MintingManager", "issueWithRecords", args) }];
    }
    const args = [n.owner, tokenIdOf(s, n), fullName(s, n), ["redirect.WEBSITE.0"], [url]];
    return [{ to: registry, data: callData(contract, "mintWithRecords", args) }];
  }
  const n = pick(s.names);
  const node = namehash(fullName(s, n));
  const tokenId = tokenIdOf(s, n);
  const value = `v${counter}`;
  if (isUns) {
    if (kind === "record") return uns("set", ["profile.OWNER.description", value, tokenId], n.owner);
    if (kind === "reset") return uns("reset", [tokenId], n.owner);
    if (kind === "reverse") return uns("setReverse", [[n.label, "sim"]], n.owner);
    const from = n.owner;
    n.owner = pick(OWNERS.filter((o) => o !== from));
    return uns("transferFrom", [from, n.owner, tokenId], from);
  }
  switch (kind) {
    case "record":
      return s.provider === "NAMESPACE_C"
        ? [
            {
              to: ens.resolver,
              data: realCallData("PublicResolver", "setText", [node, "description", value]),
            },
          ]
        : [
            {
              to: registry,
              data: callData(contract, "setRecord", ["profile.OWNER.description", value, tokenId]),
            },
          ];
    case "reset":
      return s.provider === "NAMESPACE_C"
        ? [{ to: ens.resolver, data: realCallData("PublicResolver", "clearRecords", [node]) }]
        : [{ to: registry, data: callData(contract, "reset", [tokenId]) }];
    case "reverse":
      return s.provider === "NAMESPACE_C"
        ? [
            {
              to: ens.reverseRegistrar,
              data: realCallData("ReverseRegistrar", "setNameForAddr", [
                n.owner,
                n.owner,
                ens.resolver,
                fullName(s, n),
              ]),
            },
          ]
        : // FNS: the owner sets its own reverse record (Freename's setReverse(tokenId)).
          [{ from: n.owner, to: registry, data: callData(contract, "setReverse", [tokenId]) }];
    default: {
      const from = n.owner;
      const to = pick(OWNERS.filter((o) => o !== from));
      n.owner = to;
      if (s.provider !== "NAMESPACE_C") {
        return [{ to: registry, data: callData(contract, "transferFrom", [from, to, tokenId]) }];
      }
      return [
        {
          to: ens.nameWrapper,
          data: realCallData("NameWrapper", "safeTransferFrom", [from, to, BigInt(node), 1n, "0x"]),
        },
      ];
    }
  }
}

/**
 * Keeps registering and changing names at a steady rate on running chains (which mine on their
 * own: interval mining or automine): registrations, record sets, transfers, resets and reverse
 * records over every deployed source, chosen by a seeded PRNG. Receipts are checked a few
 * seconds later and reverts counted. With `solana`, the devnet's `.sol` names are one more source
 * (registrations, Records V2 set and deleted, transfers, primary names: simulate-sns.ts).
 */
export function startSimulation(chains: readonly DevnetChain[], options: SimulateOptions): Simulation {
  const rng = createRng(options.seed ?? 0x5eed);
  const runId = Date.now().toString(36);
  const sources: Source[] = chains.flatMap((chain) =>
    (Object.keys(chain.contracts) as Provider[]).map((provider) => ({
      chain,
      provider,
      addresses: chain.contracts[provider]!.addresses as Record<string, Hex>,
      names: [],
    })),
  );
  const sns = options.solana ? createSnsSimulation(options.solana.rpcUrl, runId) : null;
  const report: SimulationReport = {
    ops: 0,
    byKind: { register: 0, record: 0, transfer: 0, reset: 0, reverse: 0 },
    reverted: 0,
    errors: 0,
    lastError: null,
  };
  const weights: Array<[SimOpKind, number]> = [
    ["register", 0.35],
    ["record", 0.3],
    ["transfer", 0.15],
    ["reset", 0.05],
    ["reverse", 0.15],
  ];
  const drawKind = (): SimOpKind => {
    let r = rng();
    for (const [k, w] of weights) {
      r -= w;
      if (r < 0) return k;
    }
    return "record";
  };
  // ENS checks who sends: the simulated owners make the deployer their operator on the registry
  // (reverse records), the wrapper (transfers) and the resolver (records), once, so that every
  // operation is the deployer's and keeps its nonce order.
  const prepare = async () => {
    for (const s of sources.filter((x) => x.provider === "NAMESPACE_C")) {
      const ens = s.addresses as unknown as EnsAddresses;
      const deployer = s.chain.sender.from;
      await s.chain.sender.rpc.call("anvil_autoImpersonateAccount", [true]);
      const txs: TxRequest[] = OWNERS.map((o) => ({ to: o, data: "0x", value: 10n ** 18n, gas: 21_000n }));
      for (const o of OWNERS) {
        txs.push(
          {
            from: o,
            to: ens.registry,
            data: realCallData("ENSRegistry", "setApprovalForAll", [deployer, true]),
          },
          {
            from: o,
            to: ens.nameWrapper,
            data: realCallData("NameWrapper", "setApprovalForAll", [deployer, true]),
          },
          {
            from: o,
            to: ens.resolver,
            data: realCallData("PublicResolver", "setApprovalForAll", [deployer, true]),
          },
        );
      }
      await s.chain.sender.send(txs.slice(0, OWNERS.length));
      await s.chain.sender.mine();
      await s.chain.sender.send(txs.slice(OWNERS.length));
      await s.chain.sender.mine();
    }
  };
  const toCheck: Array<{ rpc: DevnetChain["sender"]["rpc"]; hash: Hex; sentAt: number }> = [];
  const started = Date.now();
  let stopped = false;
  let busy: Promise<void> = prepare().catch((e: unknown) => {
    report.errors++;
    report.lastError = (e as Error).message;
  });

  async function checkReceipts(final: boolean): Promise<void> {
    const due = toCheck.filter((t) => final || Date.now() - t.sentAt > 5_000);
    if (due.length === 0) return;
    toCheck.splice(0, toCheck.length, ...toCheck.filter((t) => !due.includes(t)));
    for (const t of due) {
      const r = await t.rpc.call<{ status: Hex } | null>("eth_getTransactionReceipt", [t.hash]);
      if (r && r.status !== "0x1") report.reverted++;
    }
  }

  async function tick(): Promise<void> {
    const due = Math.floor(((Date.now() - started) / 1000) * options.rate) - report.ops;
    const perChain = new Map<DevnetChain, TxRequest[]>();
    const snsOps: Array<() => Promise<number>> = [];
    for (let i = 0; i < due; i++) {
      const at = Math.floor(rng() * (sources.length + (sns ? 1 : 0)));
      if (sns && at === sources.length) {
        const kind = sns.names.length === 0 ? "register" : drawKind();
        const counter = report.ops;
        snsOps.push(() => sns.run(kind, rng, counter));
        report.ops++;
        report.byKind[kind]++;
        continue;
      }
      const s = sources[at];
      const kind = s.names.length === 0 ? "register" : drawKind();
      const txs = opTxs(s, kind, rng, report.ops, runId);
      perChain.set(s.chain, [...(perChain.get(s.chain) ?? []), ...txs]);
      report.ops++;
      report.byKind[kind]++;
    }
    for (const [chain, txs] of perChain) {
      const hashes = await chain.sender.send(txs, { track: false });
      for (const hash of hashes) toCheck.push({ rpc: chain.sender.rpc, hash, sentAt: Date.now() });
    }
    // In order: each op's names and owners were drawn for the state the ones before leave.
    for (const op of snsOps)
      await op().catch((e: unknown) => {
        report.errors++;
        report.lastError = (e as Error).message;
      });
    if (due > 0) options.onBatch?.(report);
    await checkReceipts(false);
  }

  const timer = setInterval(() => {
    if (stopped) return;
    busy = busy.then(tick).catch((e: unknown) => {
      report.errors++;
      report.lastError = (e as Error).message;
    });
  }, TICK_MS);

  return {
    report,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await busy;
      // Let the last transactions be mined before their receipts are read.
      await new Promise((r) => setTimeout(r, 1_500));
      await checkReceipts(true);
      return report;
    },
  };
}
