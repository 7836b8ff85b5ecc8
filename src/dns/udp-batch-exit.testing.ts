// Run by udp-batch.test.ts as a process of its own: a server whose answers take 300 ms gets 50
// queries, is closed while they are being computed, and must then let the process exit by itself
// (a handle left open, a crash on an answer sent to a closed socket: the test sees it).
import { createSocket } from "node:dgram";
import { createDnsServer } from "./dns-server.js";
import { buildTestQuery } from "./dns.testing.js";
import { createStaticZoneLookup } from "./static-zone-lookup.js";
import type { ZoneLookup } from "./zone.js";

const zones = createStaticZoneLookup(
  { wallet: { "alice.wallet": { "record.A.0": "10.0.0.1" } } },
  { nameServers: ["ns1.omniname.test"], hostmaster: "hostmaster.omniname.test", serial: 1 },
);
let started = 0;
const slow: ZoneLookup = {
  findZone: (name) => zones.findZone(name),
  async findNode(name, zone, meta) {
    started++;
    await new Promise((r) => setTimeout(r, 300));
    return zones.findNode(name, zone, meta);
  },
};
const server = await createDnsServer({
  lookup: slow,
  host: "127.0.0.1",
  port: 0,
  tcpIdleMs: 1000,
  tcpMaxClients: 1,
});
const client = createSocket("udp4");
await new Promise<void>((r) => client.bind(0, "127.0.0.1", () => r()));
for (let i = 0; i < 50; i++)
  client.send(buildTestQuery(`n${i}.wallet`, "A", { id: i }), server.port, "127.0.0.1");
const deadline = Date.now() + 5000;
while (started < 50 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
await server.close();
client.close();
process.stdout.write(`closed with ${started} in flight, path ${server.udpPath}\n`);
