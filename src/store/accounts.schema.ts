import type { Generated } from "kysely";

/**
 * Tables of the console: accounts, sessions, one-time tokens, project membership, per-project
 * access rules and usage counters (migration 0003-accounts). Times are epoch milliseconds.
 */
export interface AccountsTable {
  id: Generated<number>;
  /** Lower case; unique. */
  email: string;
  full_name: string;
  /** `scrypt$N$r$p$salt$hash` (password.ts). */
  password_hash: string;
  email_verified_at: number | null;
  terms_accepted_at: number;
  created_at: number;
  password_changed_at: number;
}

export interface SessionsTable {
  /** SHA-256 of the cookie's token, hex: a database leak does not hand out live sessions. */
  id: string;
  account_id: number;
  created_at: number;
  expires_at: number;
  last_seen_at: number;
}

/** Invitations, e-mail verification and password reset links: single-use, expiring, stored hashed. */
export interface AccountTokensTable {
  id: Generated<number>;
  kind: string;
  token_hash: string;
  /** Lower case. The address the link was sent to. */
  email: string;
  account_id: number | null;
  /** Team invitations: the project and role granted on registration. */
  project_id: number | null;
  role: string | null;
  created_by: number | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

export interface MembershipsTable {
  project_id: number;
  account_id: number;
  role: string;
  created_at: number;
}

export interface ProjectAccessTable {
  project_id: number;
  /** JSON array of IPs and CIDR ranges; empty: any address. */
  allowed_ips: string;
  /** JSON array of origins (`https://app.example.com`, `https://*.example.com`); empty: any origin. */
  allowed_origins: string;
  updated_at: number;
}

/**
 * Additive counters per project, UTC day and endpoint. `metric` is `requests`, `status:<code>` for
 * responses of 400 and above, or `lat:<bucket upper bound in ms>` for the latency histogram. One
 * narrow table of additive upserts keeps concurrent flushes from several processes correct.
 */
export interface UsageCountersTable {
  project_id: number;
  day: string;
  endpoint: string;
  metric: string;
  count: number;
}

/** An account's TOTP secret (migration 0016-two-factor). */
export interface AccountTotpTable {
  account_id: number;
  /** AES-256-GCM under a key derived from the server's pepper (two-factor.ts): never the secret itself. */
  secret_enc: string;
  created_at: number;
  /** Null while enrolment waits for its first code; two-factor sign-in is on once set. */
  confirmed_at: number | null;
  /** The last TOTP time step accepted: a code of this step or an earlier one is refused (replay). */
  last_step: number;
}

/** Single-use recovery codes, as HMAC-SHA-256 under the pepper (two-factor.ts). */
export interface AccountRecoveryCodesTable {
  id: Generated<number>;
  account_id: number;
  code_hash: string;
  created_at: number;
  used_at: number | null;
}

/** A row: the project requires two-factor sign-in of its members. */
export interface ProjectTwoFactorTable {
  project_id: number;
  required_at: number;
  required_by: number | null;
}

/**
 * Usage alerts sent (migration 0015): unique on (project, kind, subject, day), inserted before the
 * mail goes out so that one process only sends it. `subject` is the API key's id for the rate
 * kind, "" for the quota kinds; `details` is JSON (quota used and limit, or the key and its refusals).
 */
export interface UsageAlertsTable {
  id: Generated<number>;
  project_id: number;
  kind: string;
  subject: string;
  day: string;
  created_at: number;
  details: string;
  recipients: number;
}

/** Requests of an API key per UTC month (`YYYY-MM`), added by the usage flush (migration 0019). */
export interface ApiKeyUsageTable {
  key_id: number;
  month: string;
  project_id: number;
  requests: number;
}

/** The audit log (migration 0018): before/after are JSON with secrets left out, null when absent. */
export interface AuditLogTable {
  id: Generated<number>;
  project_id: number;
  at: number;
  kind: string;
  /** "account" (console) or "cli". */
  actor_type: string;
  actor_account_id: number | null;
  actor_email: string | null;
  ip: string | null;
  subject: string;
  before_value: string | null;
  after_value: string | null;
}

/** A project's webhook (migration 0017); `event_types` and `filters` are JSON. */
export interface WebhooksTable {
  id: Generated<number>;
  project_id: number;
  url: string;
  description: string;
  event_types: string;
  filters: string;
  enabled: number;
  secret_enc: string;
  /** The last change log id fanned out to this webhook's queue. */
  cursor: number;
  created_at: number;
  updated_at: number;
  failing_since: number | null;
  disabled_at: number | null;
  disabled_reason: string | null;
}

/** The delivery queue: `status` pending, delivered or failed; a live lease names its deliverer. */
export interface WebhookMessagesTable {
  id: Generated<number>;
  webhook_id: number;
  event_id: number | null;
  msg_id: string;
  event_type: string;
  name: string;
  payload: string;
  created_at: number;
  status: string;
  attempts: number;
  next_attempt_at: number;
  lease_owner: string | null;
  lease_until: number | null;
  delivered_at: number | null;
}

/** The delivery log: one row per attempt. */
export interface WebhookAttemptsTable {
  id: Generated<number>;
  webhook_id: number;
  message_id: number;
  msg_id: string;
  event_type: string;
  attempt: number;
  at: number;
  status_code: number | null;
  outcome: string;
  latency_ms: number;
  response_start: string;
  error: string | null;
}

export interface AccountsDatabase {
  accounts: AccountsTable;
  sessions: SessionsTable;
  account_tokens: AccountTokensTable;
  memberships: MembershipsTable;
  project_access: ProjectAccessTable;
  usage_counters: UsageCountersTable;
  account_totp: AccountTotpTable;
  account_recovery_codes: AccountRecoveryCodesTable;
  project_two_factor: ProjectTwoFactorTable;
  usage_alerts: UsageAlertsTable;
  audit_log: AuditLogTable;
  api_key_usage: ApiKeyUsageTable;
  webhooks: WebhooksTable;
  webhook_messages: WebhookMessagesTable;
  webhook_attempts: WebhookAttemptsTable;
}
