import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ACTIVE_NETWORKS, NETWORKS } from "../../src/domain/networks.js";
import { PROVIDERS, PROVIDER_ORDER } from "../../src/domain/providers.js";
import { ENS_MAINNET } from "../../src/providers/ens/ens.adapter.js";
import { ENS_TOPICS } from "../../src/providers/ens/ens-topics.js";
import { FNS_MAINNET, FNS_TOPICS } from "../../src/providers/fns/fns.adapter.js";
import type { SourceContracts } from "../../src/providers/provider.js";
import { SNS_MAINNET } from "../../src/providers/sns/sns.adapter.js";
import { UNS_MAINNET } from "../../src/providers/uns/uns.adapter.js";
import { UNS_TOPICS } from "../../src/providers/uns/uns-events.js";

// docs/chain-facts.md is what a reader checks the adapters against: it must hold every address,
// start block and topic the code uses, and the networks' and providers' tables of src/domain.

const doc = readFileSync(new URL("../../docs/chain-facts.md", import.meta.url), "utf8");
const lower = doc.toLowerCase();

const MAINNET: Array<[string, Partial<Record<string, SourceContracts>>]> = [
  ["ENS", ENS_MAINNET],
  ["UNS", UNS_MAINNET],
  ["FNS", FNS_MAINNET],
  ["SNS", SNS_MAINNET],
];

describe("docs/chain-facts.md", () => {
  const contracts = MAINNET.flatMap(([protocol, table]) =>
    Object.entries(table).flatMap(([network, c]) =>
      Object.entries(c!.addresses).map(([role, address]) => ({
        protocol,
        network,
        role,
        address,
        startBlock: c!.startBlock,
      })),
    ),
  );

  it.each(contracts)("lists $protocol $network $role at $address", ({ address, role }) => {
    // EVM addresses are lower case in the code and checksummed here; base58 is compared exactly.
    const line = doc
      .split("\n")
      .find((l) => l.includes(`\`${address}\``) || l.toLowerCase().includes(`\`${address}\``));
    expect(line, `${address} is not in docs/chain-facts.md`).toBeDefined();
    expect(line).toContain(`\`${role}\``);
  });

  it.each(
    MAINNET.flatMap(([protocol, table]) =>
      Object.entries(table).map(([network, c]) => ({ protocol, network, c: c! })),
    ),
  )("gives the start block of $protocol on $network", ({ c }) => {
    const first = Object.values(c.addresses)[0]!;
    const line = doc
      .split("\n")
      .find((l) => l.includes(`\`${first}\``) || l.toLowerCase().includes(`\`${first}\``))!;
    const block = c.startBlock === 0 ? "unknown (0)" : c.startBlock.toLocaleString("en-US");
    expect(line).toContain(`| ${block} |`);
  });

  const topics = Object.entries({
    ...ENS_TOPICS,
    ...prefixed("UNS", UNS_TOPICS),
    ...prefixed("FNS", FNS_TOPICS),
  });
  it.each(topics)("has the topic of %s", (_name, topic) => {
    expect(lower).toContain(`\`${topic.toLowerCase()}\``);
  });

  it.each(ACTIVE_NETWORKS)("gives the chain id and finality window of %s", (network) => {
    const n = NETWORKS[network];
    expect(doc).toContain(`| \`${network}\` | ${n.chainId} | ${n.finality} |`);
  });

  it.each(PROVIDER_ORDER)("gives the networks of %s", (provider) => {
    const p = PROVIDERS[provider];
    const line = doc.split("\n").find((l) => l.startsWith(`| \`${provider}\` |`));
    expect(line).toBeDefined();
    const networks = p.networks.join(", ");
    expect(line).toContain(p.comingSoon ? `${networks} (coming soon)` : `| ${networks} |`);
  });
});

function prefixed(prefix: string, topics: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(topics).map(([k, v]) => [`${prefix}.${k}`, v]));
}
