import { type Hex, parseEther } from "viem";
import { AppError } from "../domain/errors.js";
import { MIN_COMMITMENT_AGE, type RealEnsAddresses, realCallData } from "./real-ens.js";
import {
  controllerRegistration,
  deposit,
  multicall,
  realResolverCalls,
  YEAR,
} from "./real-ens-transactions.js";
import {
  type SeedDomain,
  type SeedStep,
  UPDATE_DELAY,
  initialRecords,
  ownerChain,
  recordMap,
  toSeconds,
} from "./seed-plan.js";
import { labelhash, namehash } from "./token-ids.js";
import type { TxRequest } from "./tx-sender.js";

/**
 * How each ENS name is written on the real contracts; the judges and verify.ts read the same
 * decisions back.
 */
export interface RealEnsChoice {
  /**
   * `controller`: commit + register through ETHRegistrarController (which always wraps).
   * `wrapperController`: a label under 3 characters, which the controller refuses
   * (`valid`), registered by the deployer as a NameWrapper controller (`registerAndWrapETH2LD`).
   * `subname`: `NameWrapper.setSubnodeRecord` by the parent's owner.
   */
  via: "controller" | "wrapperController" | "subname";
  /** Still in the NameWrapper at the end; otherwise unwrapped right after registration (`unwrapETH2LD`). */
  wrapped: boolean;
  /** Registered a year short and renewed through the controller to the fixture expiry. */
  renewed: boolean;
  /**
   * Registered on the second PublicResolver (with one extra stale text record); after the
   * transfers the owner points the name at the main resolver and writes its records there.
   */
  resolverChange: boolean;
  /** The owner sets the primary name through `ReverseRegistrar.setName`. */
  reverse: boolean;
}

/** The stale record the old resolver keeps after a resolver change (must never be served). */
export const OLD_RESOLVER_RECORD = ["text.note", "written on the previous resolver"] as const;

function parentOf(name: string): string {
  return name.slice(name.indexOf(".") + 1);
}

/**
 * Deterministic choices over the ENS domains of a world, in world order: every other .eth name
 * that the controller accepts is unwrapped after registration, except parents of subnames
 * (subnames are created through the wrapper); every other unexpired one is renewed; names with
 * previous owners change resolver.
 */
export function realEnsChoices(domains: readonly SeedDomain[]): Map<string, RealEnsChoice> {
  const ens = domains.filter((d) => d.provider === "NAMESPACE_C");
  const parents = new Set(ens.filter((d) => d.name.split(".").length > 2).map((d) => parentOf(d.name)));
  const out = new Map<string, RealEnsChoice>();
  let secondLevel = 0;
  let renewable = 0;
  for (const d of ens) {
    const labels = d.name.split(".");
    if (labels[labels.length - 1] !== "eth") {
      throw new AppError("INVALID_DOMAIN", `ENS devnet names live under .eth: ${d.name}`);
    }
    const resolverChange = (d.history?.previousOwners?.length ?? 0) > 0;
    if (labels.length > 2) {
      out.set(d.name, { via: "subname", wrapped: true, renewed: false, resolverChange, reverse: d.reverse });
      continue;
    }
    const short = [...labels[0]].length < 3;
    const via = short ? "wrapperController" : "controller";
    const wrapped = short || parents.has(d.name) || secondLevel++ % 2 === 0;
    const expired = d.expiresAt !== null && d.expiresAt < Date.now();
    const renewed =
      via === "controller" &&
      !expired &&
      d.expiresAt !== null &&
      toSeconds(d.expiresAt) - toSeconds(d.registeredAt) > YEAR + 28 * 86_400 &&
      renewable++ % 3 === 1;
    out.set(d.name, { via, wrapped, renewed, resolverChange, reverse: d.reverse });
  }
  return out;
}

/**
 * Splits transactions of several senders into consecutive blocks (from `at` on, a second
 * apart) wherever the sender changes: within one block, transactions of different senders have
 * no guaranteed order, while one sender's are ordered by nonce.
 */
function phased(at: number, txs: readonly TxRequest[], deployer: Hex): SeedStep[] {
  const steps: SeedStep[] = [];
  let sender: string | null = null;
  for (const tx of txs) {
    const from = (tx.from ?? deployer).toLowerCase();
    if (from !== sender || steps.length === 0) {
      steps.push({ at: at + steps.length, txs: [] });
      sender = from;
    }
    steps[steps.length - 1].txs.push(tx);
  }
  return steps;
}

/** Gas money for the owners that send their own transactions (generated addresses hold none). */
function fund(owners: readonly string[]): TxRequest[] {
  return [...new Set(owners)].map((to) => ({
    to: to as Hex,
    data: "0x",
    value: parseEther("1"),
    gas: 21_000n,
    label: `fund ${to}`,
  }));
}

/**
 * One ENS domain of a world on the real contracts: registration (controller commit/register
 * with the records as resolver `data`, the wrapper controller for short labels, or a wrapped
 * subname by the parent's owner), an unwrap, transfers along the history, a renewal, a resolver
 * change, a `clearRecords` reset and the primary name. `world` gives each parent's owner.
 */
export function planRealEnsDomain(
  d: SeedDomain,
  a: RealEnsAddresses,
  choice: RealEnsChoice,
  deployer: Hex,
  world: ReadonlyMap<string, SeedDomain>,
): SeedStep[] {
  const labels = d.name.split(".");
  const label = labels[0];
  const node = namehash(d.name);
  const owners = ownerChain(d) as Hex[];
  const at = toSeconds(d.registeredAt);
  const tag = `ENS ${d.name}`;
  const first = owners[0];
  const initial = [...initialRecords(d)];
  if (choice.resolverChange) initial.push(OLD_RESOLVER_RECORD);
  const firstResolver = choice.resolverChange ? a.oldResolver : a.resolver;
  const steps: SeedStep[] = [];
  const registration: TxRequest[] = [];
  let requires: string | undefined;

  if (choice.via === "controller") {
    if (d.expiresAt === null)
      throw new AppError("INVALID_PARAMETER", `${d.name}: a .eth name needs an expiry`);
    const duration = toSeconds(d.expiresAt) - at - (choice.renewed ? YEAR : 0);
    const { commit, register } = controllerRegistration(a, label, first, duration, firstResolver, initial);
    steps.push({ at: at - MIN_COMMITMENT_AGE - 10, txs: [...fund(owners), commit] });
    registration.push(register);
  } else if (choice.via === "wrapperController") {
    if (d.expiresAt === null)
      throw new AppError("INVALID_PARAMETER", `${d.name}: a .eth name needs an expiry`);
    steps.push({ at: at - 10, txs: fund(owners) });
    registration.push(
      {
        to: a.nameWrapper,
        data: realCallData("NameWrapper", "registerAndWrapETH2LD", [
          label,
          first,
          BigInt(toSeconds(d.expiresAt) - at),
          firstResolver,
          0,
        ]),
        gas: 1_000_000n,
        label: `${tag}: register through the wrapper`,
      },
      ...multicall(firstResolver, first, realResolverCalls(node, [...recordMap(initial)]), `${tag}: records`),
    );
  } else {
    const parent = world.get(parentOf(d.name));
    if (!parent) throw new AppError("INVALID_PARAMETER", `${d.name}: its parent is not in the world`);
    requires = `NAMESPACE_C/${parent.name}`;
    steps.push({ at: at - 10, txs: fund(owners) });
    registration.push(
      {
        from: parent.owner as Hex,
        to: a.nameWrapper,
        data: realCallData("NameWrapper", "setSubnodeRecord", [
          namehash(parent.name),
          label,
          first,
          firstResolver,
          0n,
          0,
          d.expiresAt === null ? 0n : BigInt(toSeconds(d.expiresAt)),
        ]),
        gas: 1_000_000n,
        label: `${tag}: create subname`,
      },
      ...multicall(firstResolver, first, realResolverCalls(node, [...recordMap(initial)]), `${tag}: records`),
    );
  }
  if (!choice.wrapped) {
    registration.push({
      from: first,
      to: a.nameWrapper,
      data: realCallData("NameWrapper", "unwrapETH2LD", [labelhash(label), first, first]),
      gas: 500_000n,
      label: `${tag}: unwrap`,
    });
  }
  const [registered, ...after] = phased(at, registration, deployer);
  steps.push({ ...registered, requires, registers: `NAMESPACE_C/${d.name}` }, ...after);

  const updates: TxRequest[] = [];
  for (let i = 1; i < owners.length; i++) {
    const [from, to] = [owners[i - 1], owners[i]];
    if (choice.wrapped) {
      updates.push({
        from,
        to: a.nameWrapper,
        data: realCallData("NameWrapper", "safeTransferFrom", [from, to, BigInt(node), 1n, "0x"]),
        gas: 300_000n,
        label: `${tag}: transfer to ${to}`,
      });
    } else {
      // Moving the registrar token leaves the registry owner; the new registrant reclaims it.
      const id = BigInt(labelhash(label));
      updates.push(
        {
          from,
          to: a.baseRegistrar,
          data: realCallData("BaseRegistrarImplementation", "safeTransferFrom", [from, to, id]),
          gas: 300_000n,
          label: `${tag}: transfer to ${to}`,
        },
        {
          from: to,
          to: a.baseRegistrar,
          data: realCallData("BaseRegistrarImplementation", "reclaim", [id, to]),
          gas: 200_000n,
          label: `${tag}: reclaim`,
        },
      );
    }
  }
  if (choice.renewed) {
    updates.push({
      to: a.controller,
      data: realCallData("ETHRegistrarController", "renew", [label, BigInt(YEAR)]),
      value: deposit(label, YEAR),
      gas: 300_000n,
      label: `${tag}: renew`,
    });
  }
  const owner = d.owner as Hex;
  if (choice.resolverChange) {
    updates.push({
      from: owner,
      to: choice.wrapped ? a.nameWrapper : a.registry,
      data: choice.wrapped
        ? realCallData("NameWrapper", "setResolver", [node, a.resolver])
        : realCallData("ENSRegistry", "setResolver", [node, a.resolver]),
      gas: 200_000n,
      label: `${tag}: resolver change`,
    });
  }
  if (d.history?.resetRecordsBefore) {
    updates.push({
      from: owner,
      to: a.resolver,
      data: realCallData("PublicResolver", "clearRecords", [node]),
      gas: 100_000n,
      label: `${tag}: clear`,
    });
  }
  if (choice.resolverChange || d.history?.resetRecordsBefore) {
    updates.push(
      ...multicall(a.resolver, owner, realResolverCalls(node, [...recordMap(d.records)]), `${tag}: records`),
    );
  }
  if (choice.reverse) {
    updates.push({
      from: owner,
      to: a.reverseRegistrar,
      data: realCallData("ReverseRegistrar", "setName", [d.name]),
      gas: 300_000n,
      label: `${tag}: primary name`,
    });
  }
  steps.push(...phased(at + UPDATE_DELAY, updates, deployer));
  return steps;
}
