import { type Kysely, type Selectable, sql, type Transaction } from "kysely";
import type { Network } from "../domain/networks.js";
import type { Provider } from "../domain/providers.js";
import type {
  Domain,
  DomainFilter,
  DomainRecord,
  DomainWithRecords,
  DomainWrite,
  ReverseRecord,
} from "../domain/types.js";
import { MIGRATIONS } from "./migrations.js";
import type { Database, DomainsTable, RecordsTable } from "./schema.js";
import type { ApiKey, Checkpoint, Dialect, JournalEntry, Project, RecentBlock, Store } from "./store.js";

type DomainRow = { [K in keyof DomainsTable]: K extends "id" ? number : DomainsTable[K] };

export function toDomain(r: DomainRow): Domain {
  return {
    id: Number(r.id),
    provider: r.provider as Provider,
    network: r.network as Network,
    tokenId: r.token_id,
    name: r.name,
    sld: r.sld,
    tld: r.tld,
    owner: r.owner,
    contractAddress: r.contract_address,
    resolver: r.resolver,
    registeredAt: r.registered_at === null ? null : Number(r.registered_at),
    registeredBlock: r.registered_block === null ? null : Number(r.registered_block),
    expiresAt: r.expires_at === null ? null : Number(r.expires_at),
    lastUpdateBlock: Number(r.last_update_block),
    lastUpdateAt: Number(r.last_update_at),
    baseScore: Number(r.base_score),
    spam: Boolean(r.spam),
    csamOk: Boolean(r.csam_ok),
    kyc: Boolean(r.kyc),
    tags: JSON.parse(r.tags) as string[],
  };
}

export function toRecord(
  r: Pick<RecordsTable, "key" | "value" | "native_key" | "native_value">,
): DomainRecord {
  return { key: r.key, value: r.value, nativeKey: r.native_key, nativeValue: r.native_value };
}

/** The row of a domain write (also the SQLite bulk path's, sqlite/sqlite-bulk-writes.ts). */
export function domainColumns(d: DomainWrite): Omit<DomainsTable, "id"> {
  return {
    provider: d.provider,
    network: d.network,
    token_id: d.tokenId,
    name: safeText(d.name),
    sld: safeText(d.sld),
    tld: safeText(d.tld),
    owner: d.owner,
    contract_address: d.contractAddress,
    resolver: d.resolver,
    registered_at: d.registeredAt,
    registered_block: d.registeredBlock,
    expires_at: d.expiresAt,
    last_update_block: d.lastUpdateBlock,
    last_update_at: d.lastUpdateAt,
    base_score: d.baseScore,
    spam: d.spam ? 1 : 0,
    csam_ok: d.csamOk ? 1 : 0,
    kyc: d.kyc ? 1 : 0,
    tags: JSON.stringify(d.tags),
  };
}

function toCheckpoint(r: Database["checkpoints"]): Checkpoint {
  return {
    sourceId: r.source_id,
    chainId: Number(r.chain_id),
    blockNumber: Number(r.block_number),
    blockHash: r.block_hash,
    updatedAt: Number(r.updated_at),
    state: r.state,
    error: r.error,
  };
}

export function toJournal(r: Selectable<Omit<Database["journal"], "id">>): JournalEntry {
  return {
    sourceId: r.source_id,
    chainId: Number(r.chain_id),
    blockNumber: Number(r.block_number),
    blockHash: r.block_hash,
    logIndex: Number(r.log_index),
    txHash: r.tx_hash,
    contract: r.contract,
    tokenId: r.token_id,
    event: r.event,
    blockTime: r.block_time === null || r.block_time === undefined ? null : Number(r.block_time),
  };
}

export function toProject(r: {
  id: number;
  name: string;
  description: string;
  plan: string;
  created_at: number;
  settings: string;
}): Project {
  return {
    id: Number(r.id),
    name: r.name,
    description: r.description,
    plan: r.plan,
    createdAt: Number(r.created_at),
    settings: JSON.parse(r.settings) as Record<string, unknown>,
  };
}

function toApiKey(r: {
  id: number;
  project_id: number;
  name: string;
  prefix: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}): ApiKey {
  return {
    id: Number(r.id),
    projectId: Number(r.project_id),
    name: r.name,
    prefix: r.prefix,
    createdAt: Number(r.created_at),
    lastUsedAt: r.last_used_at === null ? null : Number(r.last_used_at),
    revokedAt: r.revoked_at === null ? null : Number(r.revoked_at),
  };
}

/** Groups record rows under their domains, keeping the domains' order and the records' key order. */
export function attachRecords(domains: Domain[], rows: Array<RecordsTable>): DomainWithRecords[] {
  const byId = new Map<number, DomainRecord[]>();
  for (const d of domains) byId.set(d.id, []);
  for (const r of rows) byId.get(Number(r.domain_id))?.push(toRecord(r));
  return domains.map((d) => ({ ...d, records: byId.get(d.id) ?? [] }));
}

const MAX_IN = 500;

/**
 * PostgreSQL text cannot hold NUL, and chain data is attacker-controlled: a NUL in a name or
 * record is stored as U+FFFD on both backends, so they stay identical.
 */
export function safeText(s: string): string {
  return s.includes("\u0000") ? s.replaceAll("\u0000", "\ufffd") : s;
}

/**
 * The Kysely implementation of the store port, shared by both backends. Backends differ only in
 * how the Kysely instance is built and, for SQLite, in a prepared-statement fast path for reads
 * (sqlite/sqlite-store.ts).
 */
export class KyselyStore implements Store {
  constructor(
    readonly dialect: Dialect,
    readonly db: Kysely<Database>,
    private readonly onClose: () => Promise<void> = async () => {},
  ) {}

  async migrate(): Promise<void> {
    const db = this.db as unknown as Kysely<{ omniname_migrations: { name: string; applied_at: number } }>;
    await sql`create table if not exists omniname_migrations (name text primary key, applied_at bigint not null)`.execute(
      db,
    );
    const done = new Set(
      (await db.selectFrom("omniname_migrations").select("name").execute()).map((r) => r.name),
    );
    for (const m of MIGRATIONS) {
      if (done.has(m.name)) continue;
      await db.transaction().execute(async (trx) => {
        // Two processes migrating at once: the unique name makes the loser's insert fail and roll back.
        await trx
          .insertInto("omniname_migrations")
          .values({ name: m.name, applied_at: Date.now() })
          .execute();
        await m.up(trx as unknown as Kysely<unknown>, this.dialect);
      });
    }
  }

  async ping(): Promise<boolean> {
    try {
      await sql`select 1`.execute(this.db);
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    await this.db.destroy();
    await this.onClose();
  }

  /** A store over the transaction; overridden by the SQLite backend to drop its read fast path. */
  protected withDb(db: Kysely<Database>): Store {
    return new KyselyStore(this.dialect, db);
  }

  async transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T> {
    if ((this.db as Transaction<Database>).isTransaction) return fn(this);
    return this.db.transaction().execute((trx) => fn(this.withDb(trx)));
  }

  async upsertDomain(domain: DomainWrite): Promise<number> {
    const cols = domainColumns(domain);
    const { provider, network, token_id, ...update } = cols;
    const row = await this.db
      .insertInto("domains")
      .values(cols)
      .onConflict((oc) => oc.columns(["network", "provider", "token_id"]).doUpdateSet(update))
      .returning("id")
      .executeTakeFirstOrThrow();
    return Number(row.id);
  }

  async findDomainById(id: number): Promise<Domain | null> {
    const r = await this.db.selectFrom("domains").selectAll().where("id", "=", id).executeTakeFirst();
    return r ? toDomain(r as DomainRow) : null;
  }

  async findDomainByToken(network: Network, provider: Provider, tokenId: string): Promise<Domain | null> {
    const r = await this.db
      .selectFrom("domains")
      .selectAll()
      .where("network", "=", network)
      .where("provider", "=", provider)
      .where("token_id", "=", tokenId)
      .executeTakeFirst();
    return r ? toDomain(r as DomainRow) : null;
  }

  async deleteDomain(id: number): Promise<void> {
    await this.db.deleteFrom("records").where("domain_id", "=", id).execute();
    await this.db.deleteFrom("reverse_records").where("domain_id", "=", id).execute();
    await this.db.deleteFrom("domains").where("id", "=", id).execute();
  }

  async updateDomainSignals(
    id: number,
    s: Pick<Domain, "baseScore" | "spam" | "csamOk" | "kyc" | "tags">,
  ): Promise<void> {
    await this.db
      .updateTable("domains")
      .set({
        base_score: s.baseScore,
        spam: s.spam ? 1 : 0,
        csam_ok: s.csamOk ? 1 : 0,
        kyc: s.kyc ? 1 : 0,
        tags: JSON.stringify(s.tags),
      })
      .where("id", "=", id)
      .execute();
  }

  async replaceRecords(domainId: number, records: DomainRecord[]): Promise<void> {
    await this.db.deleteFrom("records").where("domain_id", "=", domainId).execute();
    const unique = new Map(records.map((r) => [safeText(r.key), r]));
    const rows = [...unique.values()].map((r) => ({
      domain_id: domainId,
      key: safeText(r.key),
      value: safeText(r.value),
      native_key: safeText(r.nativeKey),
      native_value: safeText(r.nativeValue),
    }));
    for (let i = 0; i < rows.length; i += 100) {
      await this.db
        .insertInto("records")
        .values(rows.slice(i, i + 100))
        .execute();
    }
  }

  async setNativeRecord(
    domainId: number,
    nativeKey: string,
    nativeValue: string,
    mapped: Array<{ key: string; value: string }>,
  ): Promise<void> {
    await this.db
      .deleteFrom("records")
      .where("domain_id", "=", domainId)
      .where("native_key", "=", safeText(nativeKey))
      .execute();
    if (nativeValue === "" || mapped.length === 0) return;
    const rows = mapped.map((m) => ({
      domain_id: domainId,
      key: safeText(m.key),
      value: safeText(m.value),
      native_key: safeText(nativeKey),
      native_value: safeText(nativeValue),
    }));
    // Two native keys may map to the same canonical key (e.g. UNS ipfs.html.value and dweb.ipfs.hash):
    // the one set last wins, as it would on chain.
    await this.db
      .insertInto("records")
      .values(rows)
      .onConflict((oc) =>
        oc.columns(["domain_id", "key"]).doUpdateSet((eb) => ({
          value: eb.ref("excluded.value"),
          native_key: eb.ref("excluded.native_key"),
          native_value: eb.ref("excluded.native_value"),
        })),
      )
      .execute();
  }

  async findRecords(domainId: number): Promise<DomainRecord[]> {
    const rows = await this.db
      .selectFrom("records")
      .selectAll()
      .where("domain_id", "=", domainId)
      .orderBy("key")
      .execute();
    return rows.map(toRecord);
  }

  private async withRecords(domains: Domain[]): Promise<DomainWithRecords[]> {
    if (domains.length === 0) return [];
    const rows: RecordsTable[] = [];
    for (let i = 0; i < domains.length; i += MAX_IN) {
      const ids = domains.slice(i, i + MAX_IN).map((d) => d.id);
      rows.push(
        ...(await this.db
          .selectFrom("records")
          .selectAll()
          .where("domain_id", "in", ids)
          .orderBy("domain_id")
          .orderBy("key")
          .execute()),
      );
    }
    return attachRecords(domains, rows);
  }

  async findDomainsByName(names: string[], filter: DomainFilter): Promise<DomainWithRecords[]> {
    const clean = names.filter((n) => !n.includes("\u0000"));
    if (clean.length === 0) return [];
    let q = this.db.selectFrom("domains").selectAll().where("name", "in", clean);
    if (filter.network) q = q.where("network", "=", filter.network);
    if (filter.provider) q = q.where("provider", "=", filter.provider);
    const rows = await q.orderBy("id").execute();
    return this.withRecords(rows.map((r) => toDomain(r as DomainRow)));
  }

  async findDomainsByOwner(address: string, filter: DomainFilter): Promise<DomainWithRecords[]> {
    let q = this.db.selectFrom("domains").selectAll().where("owner", "=", address);
    if (filter.network) q = q.where("network", "=", filter.network);
    if (filter.provider) q = q.where("provider", "=", filter.provider);
    const rows = await q.orderBy("id").limit(10_000).execute();
    return this.withRecords(rows.map((r) => toDomain(r as DomainRow)));
  }

  async findDomainsByTld(tld: string, limit: number): Promise<Domain[]> {
    const rows = await this.db
      .selectFrom("domains")
      .selectAll()
      .where("tld", "=", tld)
      .orderBy("registered_at")
      .orderBy("id")
      .limit(limit)
      .execute();
    return rows.map((r) => toDomain(r as DomainRow));
  }

  async setReverse(r: ReverseRecord): Promise<void> {
    await this.db
      .insertInto("reverse_records")
      .values({ network: r.network, provider: r.provider, address: r.address, domain_id: r.domainId })
      .onConflict((oc) =>
        oc.columns(["address", "network", "provider"]).doUpdateSet({ domain_id: r.domainId }),
      )
      .execute();
  }

  async removeReverse(address: string, network: Network, provider: Provider): Promise<void> {
    await this.db
      .deleteFrom("reverse_records")
      .where("address", "=", address)
      .where("network", "=", network)
      .where("provider", "=", provider)
      .execute();
  }

  async findReverse(address: string, filter: DomainFilter): Promise<ReverseRecord[]> {
    let q = this.db.selectFrom("reverse_records").selectAll().where("address", "=", address);
    if (filter.network) q = q.where("network", "=", filter.network);
    if (filter.provider) q = q.where("provider", "=", filter.provider);
    const rows = await q.execute();
    return rows.map((r) => ({
      network: r.network as Network,
      provider: r.provider as Provider,
      address: r.address,
      domainId: Number(r.domain_id),
    }));
  }

  async countDomains(): Promise<number> {
    const r = await this.db
      .selectFrom("domains")
      .select((eb) => eb.fn.countAll().as("n"))
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  async *iterateDomains(pageSize = 1000): AsyncIterable<DomainWithRecords[]> {
    let after = 0;
    for (;;) {
      const rows = await this.db
        .selectFrom("domains")
        .selectAll()
        .where("id", ">", after)
        .orderBy("id")
        .limit(pageSize)
        .execute();
      if (rows.length === 0) return;
      const page = await this.withRecords(rows.map((r) => toDomain(r as DomainRow)));
      after = page[page.length - 1].id;
      yield page;
    }
  }

  async getCheckpoint(sourceId: string): Promise<Checkpoint | null> {
    const r = await this.db
      .selectFrom("checkpoints")
      .selectAll()
      .where("source_id", "=", sourceId)
      .executeTakeFirst();
    return r ? toCheckpoint(r) : null;
  }

  async listCheckpoints(): Promise<Checkpoint[]> {
    const rows = await this.db.selectFrom("checkpoints").selectAll().orderBy("source_id").execute();
    return rows.map(toCheckpoint);
  }

  async setCheckpoint(c: Checkpoint): Promise<void> {
    const values = {
      source_id: c.sourceId,
      chain_id: c.chainId,
      block_number: c.blockNumber,
      block_hash: c.blockHash,
      updated_at: c.updatedAt,
      state: c.state,
      error: c.error,
    };
    const { source_id, ...update } = values;
    await this.db
      .insertInto("checkpoints")
      .values(values)
      .onConflict((oc) => oc.column("source_id").doUpdateSet(update))
      .execute();
  }

  async deleteCheckpoint(sourceId: string): Promise<void> {
    await this.db.deleteFrom("checkpoints").where("source_id", "=", sourceId).execute();
  }

  async appendJournal(entries: JournalEntry[]): Promise<number> {
    let inserted = 0;
    for (let i = 0; i < entries.length; i += 200) {
      const rows = entries.slice(i, i + 200).map((e) => ({
        source_id: e.sourceId,
        chain_id: e.chainId,
        block_number: e.blockNumber,
        block_hash: e.blockHash,
        log_index: e.logIndex,
        tx_hash: e.txHash,
        contract: e.contract,
        token_id: e.tokenId,
        event: e.event,
        block_time: e.blockTime ?? null,
      }));
      const res = await this.db
        .insertInto("journal")
        .values(rows)
        .onConflict((oc) => oc.columns(["chain_id", "block_hash", "log_index", "token_id"]).doNothing())
        .executeTakeFirst();
      inserted += Number(res.numInsertedOrUpdatedRows ?? 0);
    }
    return inserted;
  }

  async findJournalByToken(sourceId: string, tokenId: string): Promise<JournalEntry[]> {
    const rows = await this.db
      .selectFrom("journal")
      .selectAll()
      .where("source_id", "=", sourceId)
      .where("token_id", "=", tokenId)
      .orderBy("block_number")
      .orderBy("log_index")
      .execute();
    return rows.map(toJournal);
  }

  async findJournalAfter(sourceId: string, blockNumber: number): Promise<JournalEntry[]> {
    const rows = await this.db
      .selectFrom("journal")
      .selectAll()
      .where("source_id", "=", sourceId)
      .where("block_number", ">", blockNumber)
      .orderBy("block_number")
      .orderBy("log_index")
      .execute();
    return rows.map(toJournal);
  }

  async deleteJournalAfter(sourceId: string, blockNumber: number): Promise<number> {
    const res = await this.db
      .deleteFrom("journal")
      .where("source_id", "=", sourceId)
      .where("block_number", ">", blockNumber)
      .executeTakeFirst();
    return Number(res.numDeletedRows);
  }

  async findJournalByTokens(sourceId: string, tokenIds: string[]): Promise<JournalEntry[]> {
    const out: JournalEntry[] = [];
    for (let i = 0; i < tokenIds.length; i += MAX_IN) {
      const rows = await this.db
        .selectFrom("journal")
        .selectAll()
        .where("source_id", "=", sourceId)
        .where("token_id", "in", tokenIds.slice(i, i + MAX_IN))
        .orderBy("token_id")
        .orderBy("block_number")
        .orderBy("log_index")
        .execute();
      for (const r of rows) out.push(toJournal(r));
    }
    return out;
  }

  async findJournalTokensAfter(sourceId: string, blockNumber: number): Promise<string[]> {
    const rows = await this.db
      .selectFrom("journal")
      .select("token_id")
      .distinct()
      .where("source_id", "=", sourceId)
      .where("block_number", ">", blockNumber)
      .where("token_id", "is not", null)
      .execute();
    return rows.map((r) => r.token_id as string);
  }

  async upsertDomains(domains: DomainWrite[]): Promise<number[]> {
    const ids = new Map<string, number>();
    const keyOf = (network: string, provider: string, tokenId: string) => `${network}|${provider}|${tokenId}`;
    // One statement may not touch a row twice (PostgreSQL): the last write of a token wins.
    const unique = new Map(domains.map((d) => [keyOf(d.network, d.provider, d.tokenId), d]));
    const all = [...unique.values()];
    for (let i = 0; i < all.length; i += 100) {
      const rows = await this.db
        .insertInto("domains")
        .values(all.slice(i, i + 100).map(domainColumns))
        .onConflict((oc) =>
          oc.columns(["network", "provider", "token_id"]).doUpdateSet((eb) => ({
            name: eb.ref("excluded.name"),
            sld: eb.ref("excluded.sld"),
            tld: eb.ref("excluded.tld"),
            owner: eb.ref("excluded.owner"),
            contract_address: eb.ref("excluded.contract_address"),
            resolver: eb.ref("excluded.resolver"),
            registered_at: eb.ref("excluded.registered_at"),
            registered_block: eb.ref("excluded.registered_block"),
            expires_at: eb.ref("excluded.expires_at"),
            last_update_block: eb.ref("excluded.last_update_block"),
            last_update_at: eb.ref("excluded.last_update_at"),
            base_score: eb.ref("excluded.base_score"),
            spam: eb.ref("excluded.spam"),
            csam_ok: eb.ref("excluded.csam_ok"),
            kyc: eb.ref("excluded.kyc"),
            tags: eb.ref("excluded.tags"),
          })),
        )
        .returning(["id", "network", "provider", "token_id"])
        .execute();
      for (const r of rows) ids.set(keyOf(r.network, r.provider, r.token_id), Number(r.id));
    }
    return domains.map((d) => ids.get(keyOf(d.network, d.provider, d.tokenId)) as number);
  }

  async findDomainIdsByTokens(
    network: Network,
    provider: Provider,
    tokenIds: string[],
  ): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (let i = 0; i < tokenIds.length; i += MAX_IN) {
      const rows = await this.db
        .selectFrom("domains")
        .select(["id", "token_id"])
        .where("network", "=", network)
        .where("provider", "=", provider)
        .where("token_id", "in", tokenIds.slice(i, i + MAX_IN))
        .execute();
      for (const r of rows) out.set(r.token_id, Number(r.id));
    }
    return out;
  }

  async replaceRecordsMany(items: Array<{ domainId: number; records: DomainRecord[] }>): Promise<void> {
    for (let i = 0; i < items.length; i += MAX_IN) {
      const ids = items.slice(i, i + MAX_IN).map((it) => it.domainId);
      await this.db.deleteFrom("records").where("domain_id", "in", ids).execute();
    }
    const rows: RecordsTable[] = [];
    const seen = new Set<number>();
    for (const it of items) {
      if (seen.has(it.domainId)) continue; // a domain listed twice keeps its first record set
      seen.add(it.domainId);
      const unique = new Map(it.records.map((r) => [r.key, r]));
      for (const r of unique.values())
        rows.push({
          domain_id: it.domainId,
          key: r.key,
          value: r.value,
          native_key: r.nativeKey,
          native_value: r.nativeValue,
        });
    }
    for (let i = 0; i < rows.length; i += 500)
      await this.db
        .insertInto("records")
        .values(rows.slice(i, i + 500))
        .execute();
  }

  async putRecentBlocks(sourceId: string, list: RecentBlock[]): Promise<void> {
    // One statement may not touch a row twice: the last entry of a block number wins.
    const blocks = [...new Map(list.map((b) => [b.blockNumber, b])).values()];
    for (let i = 0; i < blocks.length; i += 500) {
      await this.db
        .insertInto("crawler_blocks")
        .values(
          blocks.slice(i, i + 500).map((b) => ({
            source_id: sourceId,
            block_number: b.blockNumber,
            block_hash: b.blockHash,
            parent_hash: b.parentHash,
          })),
        )
        .onConflict((oc) =>
          oc.columns(["source_id", "block_number"]).doUpdateSet((eb) => ({
            block_hash: eb.ref("excluded.block_hash"),
            parent_hash: eb.ref("excluded.parent_hash"),
          })),
        )
        .execute();
    }
  }

  async findRecentBlocks(sourceId: string, fromBlock: number): Promise<RecentBlock[]> {
    const rows = await this.db
      .selectFrom("crawler_blocks")
      .selectAll()
      .where("source_id", "=", sourceId)
      .where("block_number", ">=", fromBlock)
      .orderBy("block_number")
      .execute();
    return rows.map((r) => ({
      blockNumber: Number(r.block_number),
      blockHash: r.block_hash,
      parentHash: r.parent_hash,
    }));
  }

  async deleteRecentBlocks(sourceId: string, range: { above?: number; below?: number }): Promise<void> {
    if (range.above !== undefined)
      await this.db
        .deleteFrom("crawler_blocks")
        .where("source_id", "=", sourceId)
        .where("block_number", ">", range.above)
        .execute();
    if (range.below !== undefined)
      await this.db
        .deleteFrom("crawler_blocks")
        .where("source_id", "=", sourceId)
        .where("block_number", "<", range.below)
        .execute();
  }

  async createProject(input: { name: string; description?: string; plan?: string }): Promise<Project> {
    const row = await this.db
      .insertInto("projects")
      .values({
        name: input.name,
        description: input.description ?? "",
        plan: input.plan ?? "free",
        created_at: Date.now(),
        settings: "{}",
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toProject(row);
  }

  async findProjectById(id: number): Promise<Project | null> {
    const r = await this.db.selectFrom("projects").selectAll().where("id", "=", id).executeTakeFirst();
    return r ? toProject(r) : null;
  }

  async findProjectByName(name: string): Promise<Project | null> {
    const r = await this.db.selectFrom("projects").selectAll().where("name", "=", name).executeTakeFirst();
    return r ? toProject(r) : null;
  }

  async updateProjectSettings(id: number, settings: Record<string, unknown>): Promise<void> {
    await this.db
      .updateTable("projects")
      .set({ settings: JSON.stringify(settings) })
      .where("id", "=", id)
      .execute();
  }

  async insertApiKey(input: {
    projectId: number;
    name: string;
    prefix: string;
    hash: string;
  }): Promise<ApiKey> {
    const row = await this.db
      .insertInto("api_keys")
      .values({
        project_id: input.projectId,
        name: input.name,
        prefix: input.prefix,
        hash: input.hash,
        created_at: Date.now(),
        last_used_at: null,
        revoked_at: null,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toApiKey(row);
  }

  async findApiKeyByHash(hash: string): Promise<ApiKey | null> {
    const r = await this.db
      .selectFrom("api_keys")
      .selectAll()
      .where("hash", "=", hash)
      .where("revoked_at", "is", null)
      .executeTakeFirst();
    return r ? toApiKey(r) : null;
  }

  async listApiKeys(projectId: number): Promise<ApiKey[]> {
    const rows = await this.db
      .selectFrom("api_keys")
      .selectAll()
      .where("project_id", "=", projectId)
      .orderBy("id")
      .execute();
    return rows.map(toApiKey);
  }

  async revokeApiKey(id: number, at: number): Promise<void> {
    await this.db.updateTable("api_keys").set({ revoked_at: at }).where("id", "=", id).execute();
  }

  async touchApiKeys(lastUsed: Map<number, number>): Promise<void> {
    for (const [id, at] of lastUsed) {
      await this.db.updateTable("api_keys").set({ last_used_at: at }).where("id", "=", id).execute();
    }
  }
}
