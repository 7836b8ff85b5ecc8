import type { Redis } from "ioredis";
import type { DomainRecord } from "../domain/types.js";
import type { AccountsDb } from "../store/accounts.port.js";

/** A live answer: the name's records as its resolver (and gateway) gave them. */
export interface LiveAnswer {
  records: DomainRecord[];
  resolver: string;
  /** The gateway URLs that answered (none: the resolver answered on chain). */
  gateways: string[];
  /** The block the calls were made at. */
  block: number;
  /** When it was fetched (epoch ms), and how long it is reused. */
  fetchedAt: number;
  ttlMs: number;
}

/**
 * Where live ENS answers are kept between requests (docs/ens-offchain.md, "Caching"), keyed by
 * name. Each answer is stored with the map's `stamp` of the name (its resolver and the block the
 * map last changed it at): an entry whose stamp is not the map's current one is a miss, so a
 * resolver change in the map drops the name's answer at once in every process that reads the map,
 * whatever the entry's time left. Absence is `null`; a backend that fails is a miss (the gateway
 * is asked), never an error of the request.
 *
 * @example
 * const cache = redisLiveCache(redis, "omniname");
 * await cache.set("offchain.eth", stamp, answer);
 * const again = await cache.get("offchain.eth", stamp); // null once the map's stamp moved
 */
export interface LiveAnswerCache {
  get(name: string, stamp: string): Promise<LiveAnswer | null>;
  /** Keeps the answer until `answer.fetchedAt + answer.ttlMs`. */
  set(name: string, stamp: string, answer: LiveAnswer): Promise<void>;
}

/** Entries the in-process cache keeps at most (emptied when full: a bound, not an LRU). */
const MAX_LOCAL = 100_000;

/** The in-process cache: the embedded (SQLite) setup's only one, and each process's first layer. */
export function memoryLiveCache(clock: () => number = Date.now): LiveAnswerCache & { clear(): void } {
  const entries = new Map<string, { stamp: string; answer: LiveAnswer }>();
  return {
    async get(name, stamp) {
      const e = entries.get(name);
      if (e === undefined) return null;
      if (e.stamp !== stamp || clock() >= e.answer.fetchedAt + e.answer.ttlMs) {
        entries.delete(name);
        return null;
      }
      return e.answer;
    },
    async set(name, stamp, answer) {
      if (entries.size >= MAX_LOCAL) entries.clear();
      entries.set(name, { stamp, answer });
    },
    clear: () => entries.clear(),
  };
}

/**
 * The cache shared by the API processes of one deployment on Redis (`REDIS_URL`): one key per
 * name, `<prefix>:ens-live:<name>`, holding `{stamp, answer}` with Redis's own expiry at the
 * answer's end. Each process keeps what it read in its own layer too (`layered`).
 */
export function redisLiveCache(
  redis: Pick<Redis, "get" | "set">,
  prefix: string,
  clock: () => number = Date.now,
): LiveAnswerCache {
  const keyOf = (name: string) => `${prefix}:ens-live:${name}`;
  return {
    async get(name, stamp) {
      let raw: string | null;
      try {
        raw = await redis.get(keyOf(name));
      } catch {
        return null;
      }
      if (raw === null) return null;
      try {
        const e = JSON.parse(raw) as { stamp: string; answer: LiveAnswer };
        if (e.stamp !== stamp || clock() >= e.answer.fetchedAt + e.answer.ttlMs) return null;
        return e.answer;
      } catch {
        return null;
      }
    },
    async set(name, stamp, answer) {
      const ms = answer.fetchedAt + answer.ttlMs - clock();
      if (ms <= 0) return;
      try {
        await redis.set(keyOf(name), JSON.stringify({ stamp, answer }), "PX", ms);
      } catch {
        // A Redis outage costs gateway round trips, never an answer.
      }
    },
  };
}

// A type, not an interface: Kysely's `withTables` wants an index signature.
type AnswersTable = {
  ens_live_answers: { name: string; stamp: string; answer: string; expires_at: number | string };
};

/** One set in this many also deletes the rows that ended (rows are one per name asked). */
const PRUNE_EVERY = 256;

/**
 * The cache shared by the API processes on PostgreSQL without Redis: the store's
 * `ens_live_answers` (migration 0031), one row per name, through the store's table handle (the
 * store port has no part for it; zone-serial-record.ts does the same for DNS's one row). A store
 * error is a miss, as Redis's is.
 */
export function storeLiveCache(accounts: AccountsDb, clock: () => number = Date.now): LiveAnswerCache {
  const db = () => accounts.withTables<AnswersTable>();
  let sets = 0;
  return {
    async get(name, stamp) {
      try {
        const row = await db()
          .selectFrom("ens_live_answers")
          .select(["stamp", "answer", "expires_at"])
          .where("name", "=", name)
          .executeTakeFirst();
        if (row === undefined || row.stamp !== stamp || clock() >= Number(row.expires_at)) return null;
        return JSON.parse(row.answer) as LiveAnswer;
      } catch {
        return null;
      }
    },
    async set(name, stamp, answer) {
      const expires = answer.fetchedAt + answer.ttlMs;
      if (expires <= clock()) return;
      const values = { stamp, answer: JSON.stringify(answer), expires_at: expires };
      try {
        await db()
          .insertInto("ens_live_answers")
          .values({ name, ...values })
          .onConflict((oc) => oc.column("name").doUpdateSet(values))
          .execute();
        if (++sets % PRUNE_EVERY === 0)
          await db().deleteFrom("ens_live_answers").where("expires_at", "<", clock()).execute();
      } catch {
        // A store error costs gateway round trips, never an answer.
      }
    },
  };
}

/** The process's own layer in front of a shared one: read locally first, write both. */
export function layeredLiveCache(local: LiveAnswerCache, shared: LiveAnswerCache): LiveAnswerCache {
  return {
    async get(name, stamp) {
      const mine = await local.get(name, stamp);
      if (mine !== null) return mine;
      const theirs = await shared.get(name, stamp);
      if (theirs !== null) await local.set(name, stamp, theirs);
      return theirs;
    },
    async set(name, stamp, answer) {
      await local.set(name, stamp, answer);
      await shared.set(name, stamp, answer);
    },
  };
}
