import { EventEmitter } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import dnsPacket from "dns-packet";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRng } from "../../src/devnet/fixture-values.js";
import { readTsig, signRequest } from "../../src/dns/tsig.js";
import { createXfrService, type XfrService } from "../../src/dns/xfr-server.js";
import { walkMessage } from "../../src/dns/xfr-wire.js";
import { XfrZones } from "../../src/dns/xfr-zones.js";
import { createScoringRanker } from "../../src/resolution/rank.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/store.js";
import { testDomain, tokenIdOf } from "../helpers/store-world.js";

const KEY = { name: "fuzz-key", secret: Buffer.alloc(32, 0x5a) };

/** A socket that takes every frame written to it. */
function sink(): { socket: Socket; frames: Buffer[] } {
  const frames: Buffer[] = [];
  const s = Object.assign(new EventEmitter(), {
    destroyed: false,
    write(b: Buffer) {
      frames.push(b);
      return true;
    },
    destroy() {
      s.destroyed = true;
      s.emit("close");
    },
  });
  return { socket: s as unknown as Socket, frames };
}

function seeds(now: number): Buffer[] {
  const q = (type: string, authority: dnsPacket.Answer[] = []) =>
    dnsPacket.encode({
      type: "query",
      id: 7,
      questions: [{ name: "wallet", type: type as never }],
      authorities: authority,
    });
  const soa = {
    name: "wallet",
    type: "SOA",
    data: { mname: "a", rname: "b", serial: 1, refresh: 1, retry: 1, expire: 1, minimum: 1 },
  } as dnsPacket.Answer;
  return [q("AXFR"), q("IXFR", [soa]), q("SOA")].map((p) => signRequest(p, KEY, now).packet);
}

/** A signed request mutated the ways attackers and bugs do. */
function hostile(rand: () => number, base: Buffer[]): Buffer {
  const int = (n: number) => Math.floor(rand() * n);
  const b = Buffer.from(base[int(base.length)]);
  switch (int(6)) {
    case 0:
      for (let i = 0, n = 1 + int(6); i < n; i++) b[int(b.length)] ^= 1 << int(8);
      return b;
    case 1:
      return b.subarray(0, int(b.length));
    case 2:
      b.writeUInt16BE(int(65536), 4 + 2 * int(4));
      return b;
    case 3: {
      // A compression pointer to itself in the TSIG's owner or algorithm name.
      const at = b.length - 2 - int(40);
      if (at > 12) b.writeUInt16BE(0xc000 | at, at);
      return b;
    }
    case 4:
      return Buffer.concat([b, Buffer.alloc(int(64), int(256))]);
    default: {
      // A MAC size or other length that overruns the RDATA.
      const tsig = readTsig(b);
      if (tsig.kind === "tsig") b.writeUInt16BE(int(65536), b.length - 2 - int(4) * 2);
      return b;
    }
  }
}

describe("zone transfers under hostile requests", () => {
  let dir: string;
  let store: Store;
  let service: XfrService;
  /** The service's warnings: a refusal is expected, a failure (an exception) is not. */
  const failures: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "omniname-xfr-fuzz-"));
    store = await createStore({ databaseUrl: undefined, dataDir: dir });
    const id = await store.domainMap.upsertDomain(
      testDomain({ tokenId: tokenIdOf(1), name: "a.wallet", sld: "a", tld: "wallet" }),
    );
    await store.domainMap.replaceRecords(id, [
      { key: "record.A.0", value: "10.0.0.1", nativeKey: "a", nativeValue: "a" },
    ]);
    const zones = new XfrZones({
      store,
      ranker: createScoringRanker(),
      apex: { nameServers: ["ns1.omniname.test"], hostmaster: "h.omniname.test" },
      clock: Date.now,
    });
    service = createXfrService({
      zones,
      keys: [KEY],
      clock: Date.now,
      logger: pino({ level: "warn" }, { write: (l: string) => void failures.push(l) }),
    });
  });
  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("3,000 mutated signed AXFR, IXFR and SOA requests: well-formed answers or a closed connection, never a throw", async () => {
    const rand = createRng(23);
    const base = seeds(Date.now());
    let answered = 0;
    let closed = 0;
    for (let i = 0; i < 3000; i++) {
      const pkt = hostile(rand, base);
      if (service.claims(pkt)) {
        const { socket, frames } = sink();
        await service.serve(pkt, socket);
        if (socket.destroyed) closed++;
        for (const f of frames) {
          expect(f.readUInt16BE(0)).toBe(f.length - 2);
          const msg = f.subarray(2);
          expect(walkMessage(msg), msg.toString("hex")).not.toBeNull();
          expect(msg[2] & 0x80).toBe(0x80);
          answered++;
        }
      } else {
        const answer = await (service.answerSigned(pkt, async (m) => m) ?? Promise.resolve(null));
        if (answer !== null) {
          expect(walkMessage(answer), answer.toString("hex")).not.toBeNull();
          answered++;
        }
      }
    }
    expect(answered).toBeGreaterThan(1000);
    expect(failures.filter((l) => l.includes("zone transfer failed"))).toEqual([]);
    expect(closed).toBeLessThan(3000);
  }, 120_000);
});
