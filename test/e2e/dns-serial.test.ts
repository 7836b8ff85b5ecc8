import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUdpDnsClient } from "../../src/dns/dns-client.testing.js";
import { buildTestQuery, decodeTestAnswer, setTestProgress } from "../../src/dns/dns.testing.js";
import { createStore } from "../../src/store/create-store.js";
import type { Store } from "../../src/store/store.js";
import { freePort } from "../helpers/free-port.js";
import { createTestDatabase } from "../helpers/pg.js";
import { spawnWithOutput } from "../helpers/processes.js";
import { testDomain, tokenIdOf } from "../helpers/store-world.js";
import { knotServerSections } from "../dns/knot.testing.js";

const MAIN = new URL("../../src/main.ts", import.meta.url).pathname;
const run = promisify(execFile);
const SECRET = "c2VyaWFsLXNlY3JldC1zZXJpYWwtc2VjcmV0LTEyMzQ=";
const KEY = `hmac-sha256:serial-e2e:${SECRET}`;
/** How long Knot refreshes by its timers alone: every 2 s (its floor), so ~45 refreshes. */
const QUIET_MS = 90_000;

const BACKENDS = [
  { name: "sqlite", open: async () => ({ url: undefined as string | undefined, drop: async () => {} }) },
  { name: "postgres", open: createTestDatabase },
];

async function until(
  what: string,
  probe: () => Promise<boolean> | boolean,
  timeoutMs: number,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The serial of the first SOA line of kdig's output (an SOA answer, or a transfer's first record). */
async function kdigSerial(args: string[]): Promise<number> {
  const { stdout } = await run("kdig", ["+time=3", "+retry=0", ...args]);
  const m = /\sIN\s+SOA\s+\S+\s+\S+\s+(\d+)\s/.exec(stdout);
  if (!m) throw new Error(`no SOA in kdig's answer: ${stdout.slice(0, 400)}`);
  return Number(m[1]);
}

// Two DNS worker processes (DNS_WORKERS=2) of one `omniname start`, the index moving under them
// (checkpoints advanced every 100 ms, a reorg now and then, a name added every second): every
// answer of any kind, from whichever worker takes it, is the same serial or a later one than all
// those before (docs/dns.md, "One serial for every process"). Then Knot as their secondary with
// no NOTIFY, refreshing by its timers: it never finds the primary "outdated".
describe.each(BACKENDS)("the SOA serial over two DNS workers never goes back ($name)", (backend) => {
  const dataDir = mkdtempSync(join(tmpdir(), "omniname-dns-serial-"));
  let db: Awaited<ReturnType<(typeof BACKENDS)[number]["open"]>>;
  let child: ChildProcess;
  let knot: ChildProcess | null = null;
  let store: Store;
  let port = 0;
  let knotStarted = 0;
  let knotPort = 0;
  let moving = true;
  let mover: Promise<void> = Promise.resolve();
  const knotDir = join(dataDir, "knot");

  /** The index moves: progress +1 every 100 ms, 7 back every 40th step, a new name every 10th. */
  async function move(): Promise<void> {
    let block = 1_000;
    for (let step = 1; moving; step++) {
      block = step % 40 === 0 ? block - 7 : block + 1;
      await setTestProgress(store, block);
      if (step % 10 === 0) {
        const name = `m${step}`;
        const id = await store.domainMap.upsertDomain(
          testDomain({ tokenId: tokenIdOf(700_000 + step), name: `${name}.x`, sld: name, tld: "x" }),
        );
        const a = `10.7.${(step >> 8) & 255}.${step & 255}`;
        await store.domainMap.replaceRecords(id, [
          { key: "record.A.0", value: a, nativeKey: "a", nativeValue: a },
        ]);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  beforeAll(async () => {
    db = await backend.open();
    const started = spawnWithOutput(["--import", "tsx", MAIN, "start", "--fixtures"], {
      env: {
        ...process.env,
        DATABASE_URL: db.url ?? "",
        DATA_DIR: dataDir,
        OMNINAME_ROLES: "dns",
        DNS_WORKERS: "2",
        DNS_PORT: "0",
        DNS_TSIG_KEYS: `serial-e2e:hmac-sha256:${SECRET}`,
        // No NOTIFY: Knot must find every change by its own refreshes.
        DNS_NOTIFY: "",
        LOG_LEVEL: "warn",
      },
    });
    child = started.child;
    const output = started.output;
    const exited = new Promise<never>((_, reject) =>
      child.once("exit", (code) => reject(new Error(`exited ${code}: ${output()}`))),
    );
    await Promise.race([exited, until("the banner", () => /DNS processes:\s+2/.test(output()), 150_000)]);
    port = Number(/DNS \(UDP\+TCP\):\s+127\.0\.0\.1:(\d+)/.exec(output())?.[1]);
    store = await createStore({ databaseUrl: db.url, dataDir });
    mover = move();

    mkdirSync(knotDir);
    knotPort = await freePort();
    const knotConf = [
      ...knotServerSections(knotDir, knotPort),
      "key:",
      "  - id: serial-e2e",
      "    algorithm: hmac-sha256",
      `    secret: ${SECRET}`,
      "remote:",
      "  - id: omniname",
      `    address: 127.0.0.1@${port}`,
      "    key: serial-e2e",
      "template:",
      "  - id: default",
      `    storage: "${knotDir}"`,
      "    master: omniname",
      // The SOA's refresh (3600 s) brought down to Knot's floor: an hour of refreshes every 2 s.
      "    refresh-min-interval: 2",
      "    refresh-max-interval: 2",
      "    retry-max-interval: 2",
      "zone:",
      "  - domain: x",
      "  - domain: wallet",
    ].join("\n");
    writeFileSync(join(knotDir, "knot.conf"), `${knotConf}\n`);
    knot = spawn("knotd", ["-c", join(knotDir, "knot.conf")], { stdio: "ignore" });
    knotStarted = Date.now();
  }, 180_000);

  afterAll(async () => {
    moving = false;
    await mover.catch(() => {});
    for (const p of [knot, child])
      if (p && p.exitCode === null && p.signalCode === null) {
        const gone = new Promise((r) => p.once("exit", r));
        p.kill("SIGTERM");
        await gone;
      }
    await store?.close();
    await db?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  it("600 answers in turn over UDP, TCP, AXFR and IXFR, from both workers: never a lower serial", async () => {
    const at = ["@127.0.0.1", "-p", String(port)];
    const udpSerial = async () => {
      // A fresh socket each time: the shared socket's datagrams go to whichever worker is free.
      const c = createUdpDnsClient("127.0.0.1", port);
      try {
        const a = decodeTestAnswer(
          await c.ask(buildTestQuery("x", "SOA", { id: 1 + (Date.now() % 60_000) })),
        );
        return Number(a.answer[0]?.split(" ")[6]);
      } finally {
        c.close();
      }
    };
    const seen: Array<{ kind: string; serial: number }> = [];
    const ask: Record<string, () => Promise<number>> = {
      udp: udpSerial,
      tcp: () => kdigSerial([...at, "+tcp", "x", "SOA"]),
      axfr: () => kdigSerial(["-y", KEY, ...at, "x", "AXFR"]),
      ixfr: () => kdigSerial(["-y", KEY, ...at, "x", `IXFR=${seen.at(-1)?.serial ?? 0}`]),
    };
    const kinds = ["udp", "tcp", "udp", "axfr", "udp", "tcp", "udp", "ixfr"];
    for (let i = 0; i < 600; i++) {
      const kind = kinds[i % kinds.length];
      seen.push({ kind, serial: await ask[kind]() });
    }
    const drops = seen.filter((s, i) => i > 0 && s.serial < seen[i - 1].serial);
    const distinct = new Set(seen.map((s) => s.serial)).size;
    console.log(
      `${backend.name}: ${seen.length} answers, serials ${seen[0].serial} → ${seen.at(-1)!.serial}, ${distinct} distinct, ${drops.length} lower than the one before`,
    );
    expect(drops).toEqual([]);
    // The index did move under the queries: the serial followed it, through the reorgs.
    expect(distinct).toBeGreaterThanOrEqual(3);
    expect(seen.at(-1)!.serial).toBeGreaterThan(seen[0].serial);
    expect(seen.every((s) => Number.isInteger(s.serial))).toBe(true);
  }, 300_000);

  it(
    "Knot, refreshing by its timers for a quiet stretch (no NOTIFY), never finds omniname outdated",
    async () => {
      const knotLog = join(knotDir, "knot.log");
      const logText = () => {
        try {
          return readFileSync(knotLog, "utf8");
        } catch {
          return "";
        }
      };
      await new Promise((r) => setTimeout(r, Math.max(0, knotStarted + QUIET_MS - Date.now())));
      // Knot caught up by its refreshes alone: it holds the serial omniname answers once the index rests.
      moving = false;
      await mover;
      // The last switch may still be pending when the index rests: compare with omniname's serial
      // of each moment.
      let ours = 0;
      let theirs = 0;
      await until(
        "Knot holding omniname's serial of x",
        async () => {
          ours = await kdigSerial(["@127.0.0.1", "-p", String(port), "x", "SOA"]);
          theirs = await kdigSerial(["@127.0.0.1", "-p", String(knotPort), "x", "SOA"]).catch(() => 0);
          return ours === theirs;
        },
        30_000,
      ).catch((e: Error) => {
        throw new Error(`${e.message} (${ours}, Knot ${theirs}); Knot's log ends:\n${logText().slice(-600)}`);
      });
      const text = logText();
      const lines = text.split("\n").filter((l) => l.includes("[x.]"));
      // "remote serial N, zone is up-to-date" or "… zone is outdated" (Knot behind: it transfers);
      // "remote serial N, remote is outdated" is the primary going back.
      const refreshes = lines.filter((l) => /refresh, remote .*remote serial \d+/.test(l)).length;
      const transfers = lines.filter((l) => /[IA]XFR, incoming, remote .*finished/.test(l)).length;
      const outdated = lines.filter((l) => /remote is outdated/.test(l));
      console.log(
        `${backend.name}: Knot over ${QUIET_MS / 1000} s without NOTIFY: ${refreshes} refreshes of x, ${transfers} transfers, ${outdated.length} "remote is outdated"`,
      );
      expect(refreshes).toBeGreaterThan(20);
      expect(transfers).toBeGreaterThan(5);
      expect(outdated).toEqual([]);
    },
    QUIET_MS + 120_000,
  );
});
