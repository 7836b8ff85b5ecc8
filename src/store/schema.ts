import type { ColumnType, Generated } from "kysely";
import type { AccountsDatabase } from "./accounts.schema.js";

/**
 * Table types of the store. Booleans are integers (0/1) and times are epoch-millisecond integers
 * on both backends, so one query layer serves SQLite and PostgreSQL unchanged.
 */
export interface DomainsTable {
  id: Generated<number>;
  provider: string;
  network: string;
  token_id: string;
  name: string;
  /** The name's labels reversed (`wallet.b.a`): names below a name are one range (DNS). */
  rname: string;
  sld: string;
  tld: string;
  owner: string;
  contract_address: string;
  resolver: string | null;
  registered_at: number | null;
  registered_block: number | null;
  expires_at: number | null;
  last_update_block: number;
  last_update_at: number;
  base_score: number;
  spam: number;
  csam_ok: number;
  kyc: number;
  /** JSON array of strings. */
  tags: string;
}

export interface RecordsTable {
  domain_id: number;
  key: string;
  value: string;
  native_key: string;
  native_value: string;
}

export interface ReverseRecordsTable {
  network: string;
  provider: string;
  address: string;
  domain_id: number;
}

export interface CheckpointsTable {
  source_id: string;
  chain_id: number;
  block_number: number;
  block_hash: string;
  updated_at: number;
  state: string;
  error: string | null;
}

/** The raw event journal: every applied log, unique on its source, block, log index and token (migration 0029). */
export interface JournalTable {
  id: Generated<number>;
  source_id: string;
  chain_id: number;
  block_number: number;
  block_hash: string;
  log_index: number;
  tx_hash: string;
  contract: string;
  token_id: string | null;
  /** JSON of the decoded DomainEvent. */
  event: string;
  /** Epoch seconds of the block (migration 0002); null when unknown. */
  block_time: ColumnType<number | null, number | null | undefined, number | null>;
}

/** Hashes of a source's recent (unfinalized) blocks, for reorg detection (migration 0002). */
export interface CrawlerBlocksTable {
  source_id: string;
  block_number: number;
  block_hash: string;
  parent_hash: string;
}

export interface ProjectsTable {
  id: Generated<number>;
  name: string;
  description: string;
  plan: string;
  created_at: number;
  /** JSON of the project's resolution settings and collision rules (scoring/project-rules.ts). */
  settings: string;
}

export interface ApiKeysTable {
  id: Generated<number>;
  project_id: number;
  name: string;
  /** The readable, non-secret start of the key (`on_live_ab12cd34`). */
  prefix: string;
  /** HMAC-SHA-256 of the whole key under the server's pepper, hex. */
  hash: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
  /** JSON `{ endpoints?, networks?, providers? }` (migration 0019); null or a missing list: all. */
  scopes: string | null;
  /** After it the key is refused with API_KEY_EXPIRED; null: never. */
  expires_at: number | null;
  /** The key that replaced this one in a rotation (this one then expires at the overlap's end). */
  rotated_to: number | null;
}

/** Who writes a crawled source, until when (migration 0006, crawler/source-lease.ts). */
export interface SourceLeasesTable {
  source_id: string;
  holder: string;
  expires_at: number;
  acquired_at: number;
  /** The chain head the writer last saw (migration 0007); null before its first report. */
  head: number | null;
  /** When (epoch ms) the writer's checkpoint last reached the head it saw. */
  synced_at: number | null;
  /** When (epoch ms) the writer last reported head and synced_at. */
  reported_at: number | null;
}

/** Per (TLD, namespace, network): domains and first registration, kept by triggers (migration 0010). */
export interface TldRegistrationsTable {
  tld: string;
  provider: string;
  network: string;
  domains: number | string;
  first_registered_at: number | string | null;
}

/** The change log (migration 0013, change-log.port.ts): one row per change of the map; `id` is the cursor. */
export interface ChangeEventsTable {
  id: Generated<number>;
  type: string;
  created_at: number;
  source_id: string;
  network: string;
  provider: string;
  token_id: string;
  name: string;
  tld: string;
  block_number: number;
  block_hash: string;
  tx_hash: string | null;
  block_time: number | null;
  retracts: number | null;
  project_id: number | null;
  /** JSON of the event's ChangePayload. */
  payload: string;
}

/** Small counters of the change log (migration 0013): `pruned_through`, the highest id pruned. */
export interface ChangeLogStateTable {
  key: string;
  value: number;
}

/** The winner.changed jobs of settings changes (migration 0022, settings-winner-jobs.port.ts). */
export interface SettingsWinnerJobsTable {
  id: Generated<number>;
  project_id: number;
  /** JSON of the settings before and after the change. */
  settings_before: string;
  settings_after: string;
  /** Epoch ms the names are ranked at (the save's time). */
  rank_at: number;
  phase: number;
  cursor_name: string | null;
  /** Pages done: the version the conditional advance compares. */
  pages: number;
  created_at: number;
  finished_at: number | null;
  /** Pages that threw since the last one committed (migration 0026). */
  attempts: Generated<number>;
  /** Epoch ms before which a failed page is not tried again. */
  retry_at: number | null;
  last_error: string | null;
  /** Set with finished_at when the job gave up after its last attempt. */
  failed_at: number | null;
}

export interface Database {
  domains: DomainsTable;
  tld_registrations: TldRegistrationsTable;
  records: RecordsTable;
  reverse_records: ReverseRecordsTable;
  checkpoints: CheckpointsTable;
  journal: JournalTable;
  crawler_blocks: CrawlerBlocksTable;
  source_leases: SourceLeasesTable;
  projects: ProjectsTable;
  api_keys: ApiKeysTable;
  change_events: ChangeEventsTable;
  change_log_state: ChangeLogStateTable;
  settings_winner_jobs: SettingsWinnerJobsTable;
  accounts: AccountsDatabase["accounts"];
  sessions: AccountsDatabase["sessions"];
  account_tokens: AccountsDatabase["account_tokens"];
  memberships: AccountsDatabase["memberships"];
  project_access: AccountsDatabase["project_access"];
  usage_counters: AccountsDatabase["usage_counters"];
  account_totp: AccountsDatabase["account_totp"];
  account_recovery_codes: AccountsDatabase["account_recovery_codes"];
  project_two_factor: AccountsDatabase["project_two_factor"];
  usage_alerts: AccountsDatabase["usage_alerts"];
}
