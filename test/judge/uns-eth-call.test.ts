import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { namehashId } from "../../src/devnet/token-ids.js";
import {
  type Answer,
  apiAnswer,
  canonical,
  contractReader,
  differences,
  isZero,
  type JudgedName,
  startUnsJudgeWorld,
  type UnsJudgeWorld,
} from "./uns-judge.harness.js";

/**
 * The chain state read directly, no event decoding: `eth_call` on each chain's ProxyReader
 * (`getDataForMany`, `ownerOfForMany`, `registryOf`, `reverseOf`) and on the registries
 * themselves (UNSRegistry `ownerOf`/`getMany`/`reverseNameOf`, CNSRegistry `ownerOf`/`resolverOf`
 * + CNS Resolver `getMany`), compared with omniname's API for every seeded UNS and CNS name. The
 * failure lists every difference.
 */
describe("UNS and CNS names: eth_call on ProxyReader and the registries against omniname's API", () => {
  let w: UnsJudgeWorld;
  const read = contractReader(() => w);
  const addressesOf = (network: JudgedName["network"]) =>
    w.devnet.manifest.networks[network]!.contracts.NAMESPACE_B!.addresses;

  beforeAll(async () => {
    w = await startUnsJudgeWorld();
  }, 180_000);
  afterAll(async () => {
    await w?.close();
  });

  it("ProxyReader.getDataForMany and the registries' own views agree with the API on every name", async () => {
    const problems: string[] = [];
    let compared = 0;
    for (const network of ["ETHEREUM", "POLYGON"] as const) {
      const a = addressesOf(network);
      const names = w.names.filter((n) => n.network === network);
      const keys = [...new Set(names.flatMap((n) => n.nativeKeys))];
      const tokens = names.map((n) => namehashId(n.ascii));
      const [resolvers, owners, values] = await read<[string[], string[], string[][]]>(
        network,
        "ProxyReader",
        a.proxyReader,
        "getDataForMany",
        [keys, tokens],
      );
      const owners2 = await read<string[]>(network, "ProxyReader", a.proxyReader, "ownerOfForMany", [tokens]);
      for (const [i, n] of names.entries()) {
        const tag = `${n.kind} ${network}/${n.name}`;
        const owner = isZero(owners[i]) ? null : owners[i].toLowerCase();
        if ((isZero(owners2[i]) ? null : owners2[i].toLowerCase()) !== owner)
          problems.push(`${tag}: ownerOfForMany ${owners2[i]} but getDataForMany ${owners[i]}`);
        const registryOf = (
          await read<string>(network, "ProxyReader", a.proxyReader, "registryOf", [tokens[i]])
        ).toLowerCase();
        const natives = Object.fromEntries(keys.map((k, j) => [k, values[i][j]]));
        const chain: Answer = {
          owner,
          records: canonical(natives),
          registry: isZero(registryOf) ? null : registryOf,
        };
        problems.push(...differences(tag, chain, await apiAnswer(w, n), "ProxyReader"));

        // The registry's own views say the same as the reader.
        if (n.kind === "cns") {
          // A burned CNS token has no owner: ownerOf reverts.
          const cnsOwner = await read<string>(network, "CNSRegistry", a.cnsRegistry, "ownerOf", [
            tokens[i],
          ]).catch(() => null);
          if ((cnsOwner?.toLowerCase() ?? null) !== owner)
            problems.push(`${tag}: CNSRegistry.ownerOf ${cnsOwner}`);
          const resolver = await read<string>(network, "CNSRegistry", a.cnsRegistry, "resolverOf", [
            tokens[i],
          ]).catch(() => null);
          if (
            (resolver?.toLowerCase() ?? null) !== (isZero(resolvers[i]) ? null : resolvers[i].toLowerCase())
          )
            problems.push(`${tag}: CNSRegistry.resolverOf ${resolver}, ProxyReader ${resolvers[i]}`);
          if (resolver) {
            const direct = await read<string[]>(network, "Resolver", resolver, "getMany", [keys, tokens[i]]);
            if (direct.join("\u0000") !== values[i].join("\u0000"))
              problems.push(`${tag}: Resolver.getMany differs`);
          }
        } else if (n.kind === "uns") {
          const unsOwner = await read<string>(network, "UNSRegistry", a.registry, "ownerOf", [tokens[i]]);
          if ((isZero(unsOwner) ? null : unsOwner.toLowerCase()) !== owner)
            problems.push(`${tag}: UNSRegistry.ownerOf ${unsOwner}`);
          const direct = await read<string[]>(network, "UNSRegistry", a.registry, "getMany", [
            keys,
            tokens[i],
          ]);
          if (direct.join("\u0000") !== values[i].join("\u0000"))
            problems.push(`${tag}: UNSRegistry.getMany differs`);
          if (resolvers[i].toLowerCase() !== a.registry) problems.push(`${tag}: resolver ${resolvers[i]}`);
        }
        compared++;
      }
    }
    expect(problems, problems.join("\n")).toEqual([]);
    expect(compared).toBe(w.names.length);
  }, 300_000);

  it("reverseOf / reverseNameOf agree with the API's primary names", async () => {
    const problems: string[] = [];
    let seen = 0;
    for (const network of ["ETHEREUM", "POLYGON"] as const) {
      const a = addressesOf(network);
      for (const address of w.addresses) {
        const token = await read<bigint>(network, "ProxyReader", a.proxyReader, "reverseOf", [address]);
        const name = await read<string>(network, "UNSRegistry", a.registry, "reverseNameOf", [address]);
        const byToken = w.names.find((n) => n.network === network && namehashId(n.ascii) === token);
        if (token !== 0n && byToken?.ascii !== name)
          problems.push(`${network} ${address}: reverseOf token ${token} but reverseNameOf ${name}`);
        const res = await w.api(
          `reverse-resolve?walletAddress=${address}&network=${network}&provider=NAMESPACE_B`,
        );
        const first = Array.isArray(res.body.data) ? res.body.data[0]?.domain : undefined;
        const stored = await w.store.domainMap.findReverse(address, { network, provider: "NAMESPACE_B" });
        if (token !== 0n) {
          seen++;
          if (first !== byToken?.name)
            problems.push(`${network} ${address}: chain reverse ${name}, API first ${first}`);
        } else if (stored.length > 0) {
          problems.push(`${network} ${address}: no reverse on chain, omniname has ${stored.length}`);
        }
      }
    }
    expect(problems, problems.join("\n")).toEqual([]);
    expect(seen).toBeGreaterThan(3);
  }, 300_000);
});
