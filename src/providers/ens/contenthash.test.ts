import { hexToBytes } from "viem";
import { describe, expect, it } from "vitest";
import { decodeContenthash } from "./contenthash.js";

const KEY = "08011220" + "11".repeat(32);

/** Independent base32 decoder (RFC 4648 lower case, no padding) to check the encoder by round trip. */
function base32Decode(s: string): Buffer {
  const alphabet = "abcdefghijklmnopqrstuvwxyz234567";
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const ch of s) {
    value = (value << 5) | alphabet.indexOf(ch);
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

describe("decodeContenthash", () => {
  it.each([
    // ENSIP-7 / EIP-1577 examples.
    [
      "ipfs-ns dag-pb → CIDv0",
      "0xe3010170122029f2d17be6139079dc48696d1f582a8530eb9805b561eda517e22a892c7e3f1f",
      { protocol: "IPFS", value: "QmRAQB6YaCyidP37UdDnjFY5vQuiBrcqdyoW1CuDgwxkD4" },
    ],
    [
      "swarm-ns → manifest hash",
      "0xe40101fa011b20d1de9994b4d039f6548d191eb26786769f580809256b4685ef316805265ea162",
      { protocol: "SWARM", value: "d1de9994b4d039f6548d191eb26786769f580809256b4685ef316805265ea162" },
    ],
    [
      "ipfs-ns with a bare CIDv0 multihash",
      "0xe3011220" + "29f2d17be6139079dc48696d1f582a8530eb9805b561eda517e22a892c7e3f1f",
      { protocol: "IPFS", value: "QmRAQB6YaCyidP37UdDnjFY5vQuiBrcqdyoW1CuDgwxkD4" },
    ],
    [
      "ipns-ns DNSLink name (identity)",
      "0xe5010155000b" + Buffer.from("app.ens.eth").toString("hex"),
      { protocol: "IPNS", value: "app.ens.eth" },
    ],
    [
      "onion3",
      "0xbd03" + Buffer.from("a".repeat(56)).toString("hex"),
      { protocol: "ONION", value: "a".repeat(56) },
    ],
    [
      "onion",
      "0xbc03" + Buffer.from("zqktlwi4fecvo6ri").toString("hex"),
      { protocol: "ONION", value: "zqktlwi4fecvo6ri" },
    ],
    [
      "arweave-ns",
      "0x90b2ca05" + "ff".repeat(32),
      { protocol: "ARWEAVE", value: Buffer.alloc(32, 0xff).toString("base64url") },
    ],
  ])("decodes %s", (_, hex, expected) => {
    expect(decodeContenthash(hexToBytes(hex as `0x${string}`))).toEqual(expected);
  });

  it("renders an IPNS libp2p key as CIDv1 base36 (k…)", () => {
    const cid = `01720024${KEY}`;
    const decoded = decodeContenthash(hexToBytes(`0xe501${cid}`));
    expect(decoded?.protocol).toBe("IPNS");
    // Independent check: base36 of the CID bytes as one big number (its first byte is not zero).
    expect(decoded?.value).toBe(`k${BigInt(`0x${cid}`).toString(36)}`);
  });

  it("renders a non-dag-pb IPFS CID as CIDv1 base32 (b…)", () => {
    const cid = `0171122029f2d17be6139079dc48696d1f582a8530eb9805b561eda517e22a892c7e3f1f`;
    const decoded = decodeContenthash(hexToBytes(`0xe301${cid}`));
    expect(decoded?.value.startsWith("bafy")).toBe(true);
    expect(base32Decode(decoded!.value.slice(1)).toString("hex")).toBe(cid);
  });

  it.each([
    ["an unknown codec", "0x0101020304"],
    ["a protocol with no payload", "0xe301"],
    ["a truncated CID", "0xe30101701220aabb"],
    [
      "a CID with trailing bytes",
      "0xe3010170122029f2d17be6139079dc48696d1f582a8530eb9805b561eda517e22a892c7e3f1f00",
    ],
    [
      "a CID of another version",
      "0xe3010270122029f2d17be6139079dc48696d1f582a8530eb9805b561eda517e22a892c7e3f1f",
    ],
    ["an onion address of the wrong length", "0xbd03" + Buffer.from("abc").toString("hex")],
    ["a varint that never ends", "0xffffffffffffff"],
    ["nothing", "0x"],
  ])("returns null for %s", (_, hex) => {
    expect(decodeContenthash(hexToBytes(hex as `0x${string}`))).toBeNull();
  });
});
