import type { Address } from "@solana/kit";
import { SNS_WRITE_METHOD, type SnsWriteOp } from "./solana-devnet.js";
import { snsWallet } from "./sns-fixtures.js";

/** The simulation's operation kinds (simulate.ts), as the SNS writer does them. */
type SimKind = "register" | "record" | "transfer" | "reset" | "reverse";

const OWNERS: readonly Address[] = Array.from({ length: 6 }, (_, i) => snsWallet(`sim-${i}`));

interface SimSolName {
  label: string;
  owner: Address;
}

/**
 * `devnet simulate` on the devnet's Solana: registrations of `sim-<run>-<n>.sol`, Records V2 set
 * (`url`) and deleted (the "reset"), registry transfers and primary names, sent to its endpoint's
 * write method (solana-devnet.ts, SNS_WRITE_METHOD) so that they go through the devnet's SNS
 * writer from any process.
 *
 * @example const sns = createSnsSimulation(rpcUrl, runId); await sns.run("register", rng, 1);
 */
export function createSnsSimulation(rpcUrl: string, runId: string) {
  const names: SimSolName[] = [];
  let id = 0;
  const call = async (op: SnsWriteOp, ...args: string[]): Promise<number> => {
    const res = await fetch(rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: ++id, method: SNS_WRITE_METHOD, params: [op, ...args] }),
    });
    const body = (await res.json()) as { result?: number; error?: { message: string } };
    if (body.error) throw new Error(`${SNS_WRITE_METHOD} ${op}: ${body.error.message}`);
    return body.result as number;
  };
  return {
    names,
    /** One operation of `kind` (a registration when no name exists yet); resolves with its slot. */
    async run(kind: SimKind, rng: () => number, counter: number): Promise<number> {
      const pick = <T>(xs: readonly T[]) => xs[Math.floor(rng() * xs.length)];
      if (kind === "register" || names.length === 0) {
        const n = { label: `sim-${runId}-${counter}`, owner: pick(OWNERS) };
        names.push(n);
        return call("register", `${n.label}.sol`, n.owner);
      }
      const n = pick(names);
      const name = `${n.label}.sol`;
      switch (kind) {
        case "record":
          return call(
            "setRecordV2",
            name,
            "url",
            Buffer.from(`https://${n.label}.example/v${counter}`).toString("base64"),
          );
        case "reset":
          return call("deleteRecordV2", name, "url");
        case "reverse":
          return call("setPrimary", n.owner, name);
        default: {
          n.owner = pick(OWNERS.filter((o) => o !== n.owner));
          return call("transfer", name, n.owner);
        }
      }
    },
  };
}
