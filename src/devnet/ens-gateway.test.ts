import {
  type Hex,
  type PublicClient,
  createPublicClient,
  decodeAbiParameters,
  decodeErrorResult,
  encodeDeployData,
  encodeFunctionData,
  http,
  namehash,
  parseAbi,
  toHex,
  zeroAddress,
} from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AnvilInstance, randomPortBase, findFreePortRange, startAnvil } from "./anvil.js";
import { abiOf, ensureArtifacts, loadArtifact } from "./artifacts.js";
import {
  DEVNET_GATEWAY_KEY,
  DEVNET_GATEWAY_SIGNER,
  answerGatewayCall,
  dnsDecodeName,
  gatewaySignatureHash,
} from "./ens-gateway-answer.js";
import { type EnsGateway, type GatewayFault, startEnsGateway } from "./ens-gateway.js";
import { DEVNET_DEPLOYER } from "./devnet.js";
import { devnetRpc } from "./rpc.js";
import { dnsEncode } from "./token-ids.js";

// The gateway and contracts/ens-offchain/OffchainResolver.sol together on a bare anvil: viem's
// own CCIP-Read (readContract follows OffchainLookup) is the client, so the revert, the gateway's
// signature and the callback are checked against code we did not write.

const RESOLVER_ABI = parseAbi([
  "function addr(bytes32) view returns (address)",
  "function addr(bytes32,uint256) view returns (bytes)",
  "function text(bytes32,string) view returns (string)",
  "function contenthash(bytes32) view returns (bytes)",
]);

const ALICE = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8";
const RECORDS = new Map<string, Map<string, string>>([
  [
    "alice.wild.eth",
    new Map([
      ["addr.60", ALICE],
      ["addr.0", "0x76a91462e907b15cbf27d5425399ebf6f0fb50ebb88f1888ac"],
      ["text.url", "https://alice.example.com"],
      ["contenthash", "0xe30101701220aabb"],
    ]),
  ],
]);

describe("ENS offchain resolver and gateway", () => {
  let anvil: AnvilInstance;
  let gateway: EnsGateway;
  let client: PublicClient;
  let resolver: Hex;

  beforeAll(async () => {
    await ensureArtifacts();
    const base = await findFreePortRange(2, randomPortBase());
    anvil = await startAnvil({ chainId: 1, port: base });
    gateway = await startEnsGateway({
      port: base + 1,
      recordsOf: (n) => RECORDS.get(n) ?? null,
      signerKey: DEVNET_GATEWAY_KEY,
    });
    client = createPublicClient({ transport: http(anvil.rpcUrl) }) as PublicClient;
    const { abi, bytecode } = loadArtifact("OffchainResolver");
    const data = encodeDeployData({ abi, bytecode, args: [gateway.url, [DEVNET_GATEWAY_SIGNER]] });
    const hash = await devnetRpc(anvil.rpcUrl).call<Hex>("eth_sendTransaction", [
      { from: DEVNET_DEPLOYER, data },
    ]);
    resolver = (await client.waitForTransactionReceipt({ hash })).contractAddress!;
  });
  afterAll(async () => {
    await gateway?.stop();
    await anvil?.stop();
  });

  /** `resolve(dnsEncode(name), call)` through viem's CCIP-Read, decoded as `fn` returns. */
  async function resolveVia(name: string, fn: "addr" | "text" | "contenthash", args: readonly unknown[]) {
    const inner = encodeFunctionData({
      abi: RESOLVER_ABI,
      functionName: fn,
      args: [namehash(name), ...args] as never,
    });
    const out = (await client.readContract({
      address: resolver,
      abi: abiOf("OffchainResolver"),
      functionName: "resolve",
      args: [dnsEncode(name), inner],
    })) as Hex;
    const type = fn === "addr" && args.length === 0 ? "address" : fn === "text" ? "string" : "bytes";
    return decodeAbiParameters([{ type }], out)[0];
  }

  it("is an ENSIP-10 extended resolver (and ERC-165)", async () => {
    const abi = abiOf("OffchainResolver");
    for (const id of ["0x9061b923", "0x01ffc9a7"] as const)
      expect(
        await client.readContract({ address: resolver, abi, functionName: "supportsInterface", args: [id] }),
      ).toBe(true);
    expect(
      await client.readContract({
        address: resolver,
        abi,
        functionName: "supportsInterface",
        args: ["0x3b3b57de"],
      }),
    ).toBe(false);
  });

  it("reverts with OffchainLookup naming itself, the gateway and its callback", async () => {
    const data = encodeFunctionData({
      abi: abiOf("OffchainResolver"),
      functionName: "resolve",
      args: [dnsEncode("alice.wild.eth"), "0x3b3b57de" + namehash("alice.wild.eth").slice(2)],
    });
    const raw = await fetch(anvil.rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "eth_call",
        params: [{ to: resolver, data }, "latest"],
      }),
    }).then((r) => r.json() as Promise<{ error: { data: Hex } }>);
    const err = decodeErrorResult({ abi: abiOf("OffchainResolver"), data: raw.error.data });
    expect(err.errorName).toBe("OffchainLookup");
    const [sender, urls, callData, callback] = err.args as [Hex, string[], Hex, Hex];
    expect(sender.toLowerCase()).toBe(resolver.toLowerCase());
    expect(urls).toEqual([gateway.url]);
    expect(callData).toBe(data);
    expect(callback).toBe("0xf4d4d2f8"); // resolveWithProof(bytes,bytes)
  });

  it.each([
    ["the ETH address", "alice.wild.eth", "addr", [], ALICE],
    [
      "a coin address (BTC, coin type 0)",
      "alice.wild.eth",
      "addr",
      [0n],
      RECORDS.get("alice.wild.eth")!.get("addr.0"),
    ],
    ["a text record", "alice.wild.eth", "text", ["url"], "https://alice.example.com"],
    ["the contenthash", "alice.wild.eth", "contenthash", [], "0xe30101701220aabb"],
    ["no address for an unknown name", "nobody.wild.eth", "addr", [], zeroAddress],
    ["an empty text for an unknown key", "alice.wild.eth", "text", ["nope"], ""],
  ] as const)("answers %s, signed and checked by the resolver", async (_, name, fn, args, expected) => {
    expect(String(await resolveVia(name, fn, args)).toLowerCase()).toBe(String(expected).toLowerCase());
  });

  it("signs what the contract hashes", async () => {
    const hash = await client.readContract({
      address: resolver,
      abi: abiOf("OffchainResolver"),
      functionName: "signatureHash",
      args: [resolver, 123n, "0x1234", "0xabcd"],
    });
    expect(hash).toBe(gatewaySignatureHash(resolver, 123n, "0x1234", "0xabcd"));
  });

  it.each([
    ["badSignature", /InvalidSignature|reverted/],
    ["expired", /SignatureExpired|reverted/],
    ["status500", /500|injected failure/],
    ["malformed", /JSON|Unexpected|not valid/i],
  ] as Array<[GatewayFault, RegExp]>)("fails on a %s answer", async (fault, message) => {
    gateway.setFault(fault, "alice.wild.eth");
    try {
      await expect(resolveVia("alice.wild.eth", "addr", [])).rejects.toThrow(message);
      // Only that name: the others still answer.
      expect(await resolveVia("bob.wild.eth", "addr", [])).toBe(zeroAddress);
    } finally {
      gateway.setFault("none", "alice.wild.eth");
    }
    expect(String(await resolveVia("alice.wild.eth", "addr", [])).toLowerCase()).toBe(ALICE);
  });

  it("redirects, hangs and sends a huge body when told to (over plain HTTP)", async () => {
    const path = async () => {
      const data = encodeFunctionData({
        abi: abiOf("OffchainResolver"),
        functionName: "resolve",
        args: [dnsEncode("alice.wild.eth"), `0x3b3b57de${namehash("alice.wild.eth").slice(2)}`],
      });
      return `http://127.0.0.1:${gateway.port}/${resolver}/${data}.json`;
    };
    const url = await path();
    try {
      gateway.setFault("redirect");
      const r = await fetch(url, { redirect: "manual" });
      expect(r.status).toBe(302);
      const followed = await fetch(new URL(r.headers.get("location")!, url));
      expect(followed.status).toBe(200);
      expect(((await followed.json()) as { data: string }).data).toMatch(/^0x/);

      gateway.setFault("huge");
      const huge = await fetch(url);
      expect((await huge.arrayBuffer()).byteLength).toBeGreaterThan(10 * 1024 * 1024);

      gateway.setFault("hang");
      await expect(fetch(url, { signal: AbortSignal.timeout(300) })).rejects.toThrow(/abort|timeout/i);
    } finally {
      gateway.setFault("none");
    }
    // The control endpoint (a process started by `npm start` is reached that way).
    const set = await fetch(`http://127.0.0.1:${gateway.port}/__devnet/fault`, {
      method: "POST",
      body: JSON.stringify({ fault: "status500" }),
    });
    expect(set.status).toBe(200);
    expect((await fetch(url)).status).toBe(500);
    await fetch(`http://127.0.0.1:${gateway.port}/__devnet/fault`, {
      method: "POST",
      body: JSON.stringify({ fault: "none" }),
    });
    expect((await fetch(url)).status).toBe(200);
  });

  it("answers a POST { sender, data } like the GET", async () => {
    const data = encodeFunctionData({
      abi: abiOf("OffchainResolver"),
      functionName: "resolve",
      args: [dnsEncode("alice.wild.eth"), `0x3b3b57de${namehash("alice.wild.eth").slice(2)}`],
    });
    const post = await fetch(`http://127.0.0.1:${gateway.port}/`, {
      method: "POST",
      body: JSON.stringify({ sender: resolver, data }),
    });
    const direct = await answerGatewayCall({
      sender: resolver,
      callData: data,
      recordsOf: (n) => RECORDS.get(n) ?? null,
      signerKey: DEVNET_GATEWAY_KEY,
      expires: 0,
    });
    const body = (await post.json()) as { data: Hex };
    // Same result, other expiry: compare the decoded result.
    const [result] = decodeAbiParameters(
      [{ type: "bytes" }, { type: "uint64" }, { type: "bytes" }],
      body.data,
    );
    const [expected] = decodeAbiParameters(
      [{ type: "bytes" }, { type: "uint64" }, { type: "bytes" }],
      direct.data,
    );
    expect(result).toBe(expected);
  });

  it.each([
    ["alice.wild.eth", "alice.wild.eth"],
    ["a Unicode label", "🚀.eth"],
  ])("decodes a DNS-encoded name: %s", (_, name) => {
    expect(dnsDecodeName(dnsEncode(name))).toBe(name);
  });

  it.each([
    ["no terminating zero", toHex(new Uint8Array([3, 97, 98, 99]))],
    ["a label overrunning the packet", toHex(new Uint8Array([9, 97, 0]))],
    ["bytes after the end", toHex(new Uint8Array([1, 97, 0, 0]))],
  ] as Array<[string, Hex]>)("refuses a DNS-encoded name with %s", (_, encoded) => {
    expect(() => dnsDecodeName(encoded)).toThrow();
  });
});
