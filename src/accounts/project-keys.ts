import { isDeepStrictEqual } from "node:util";
import { AppError } from "../domain/errors.js";
import type { ApiKey, KeyScopes } from "../store/accounts.port.js";
import { writeAndPublish } from "../store/write-and-publish.js";
import { scopesColumn } from "../store/kysely/rows.js";
import type { Store } from "../store/store.js";
import { type ApiKeyVerifier, createApiKey } from "./api-keys.js";
import { type AuditChange, recordAudit } from "./audit-log.js";
import { type KeyLimitsInput, parseExpiry, parseKeyScopes, parseOverlapEnd } from "./key-scopes.js";
import type { Plan } from "./plans.js";
import { type ProjectRow, ProjectsRepo } from "./projects.repo.js";
import { dayOf, loadKeyRequests, type UsageRecorder } from "./usage.js";

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function keyStatus(k: ApiKey, now: number) {
  if (k.revokedAt !== null) return "revoked" as const;
  if (k.expiresAt !== null && now >= k.expiresAt) return "expired" as const;
  return "active" as const;
}

/** A key as the console shows it: never the secret or its hash. */
export function keyView(k: ApiKey, now: number, requestsThisMonth = 0) {
  return {
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    createdAt: iso(k.createdAt),
    lastUsedAt: iso(k.lastUsedAt),
    status: keyStatus(k, now),
    revokedAt: iso(k.revokedAt),
    /** null: no limit of that kind. */
    endpoints: k.scopes.endpoints ?? null,
    networks: k.scopes.networks ?? null,
    providers: k.scopes.providers ?? null,
    expiresAt: iso(k.expiresAt),
    /** The key that replaced this one; it then works until `expiresAt` (the overlap's end). */
    rotatedTo: k.rotatedTo,
    requestsThisMonth,
  };
}

/** What the audit log records of a key: its identity and limits, never its secret. */
function auditValue(k: Pick<ApiKey, "id" | "name" | "prefix" | "scopes" | "expiresAt">, extra = {}) {
  return {
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    endpoints: k.scopes.endpoints ?? null,
    networks: k.scopes.networks ?? null,
    providers: k.scopes.providers ?? null,
    expiresAt: iso(k.expiresAt),
    ...extra,
  };
}

function parseKeyName(input: string): string {
  const clean = input.trim().normalize("NFC");
  if (clean.length > 100 || /\p{Cc}/u.test(clean))
    throw new AppError("INVALID_PARAMETER", 'The field "name" has at most 100 printable characters.', {
      details: { field: "name" },
    });
  return clean;
}

interface ProjectKeysDeps {
  store: Pick<Store, "accounts" | "projects" | "transaction">;
  clock: () => number;
  pepper: string;
  usage: UsageRecorder;
  mustFind: (projectId: number) => Promise<ProjectRow>;
  planOf: (p: ProjectRow) => Plan;
  keyCache: () => Pick<ApiKeyVerifier, "invalidateKey"> | null;
}

/**
 * A project's API keys: create (with scopes and an expiry), change their limits, rotate, revoke.
 * Every change is written with its audit entry in one transaction that also publishes `key:<id>`
 * on the change channel, so every API process drops the key from its cache when it commits.
 */
export class ProjectKeys {
  private readonly repo: ProjectsRepo;

  constructor(private readonly d: ProjectKeysDeps) {
    this.repo = new ProjectsRepo(d.store.accounts);
  }

  private async keyWrite<T>(ids: number[], change: AuditChange, write: (tx: Store) => Promise<T>) {
    const r = await writeAndPublish(
      this.d.store,
      ids.map((id) => `key:${id}`),
      async (tx) => {
        const out = await write(tx);
        await recordAudit(tx.accounts, change, this.d.clock());
        return out;
      },
    );
    for (const id of ids) this.d.keyCache()?.invalidateKey(id);
    return r;
  }

  private async mustFindLive(projectId: number, keyId: number): Promise<ApiKey> {
    const key = (await this.d.store.projects.listApiKeys(projectId)).find(
      (k) => k.id === keyId && k.revokedAt === null,
    );
    if (!key) throw new AppError("NOT_FOUND", "No such live key.");
    return key;
  }

  private async checkRoom(projectId: number): Promise<void> {
    const max = this.d.planOf(await this.d.mustFind(projectId)).maxKeys;
    if ((await this.repo.liveKeyIds(projectId, this.d.clock())).length >= max)
      throw new AppError("PLAN_LIMIT_REACHED", `The plan allows ${max} live keys; revoke one first.`);
  }

  /** Every key with its requests this month (counts flushed first): live ones first, then revoked. */
  async list(projectId: number) {
    await this.d.usage.flush().catch(() => {});
    const now = this.d.clock();
    const [keys, requests] = await Promise.all([
      this.d.store.projects.listApiKeys(projectId),
      loadKeyRequests(this.d.store.accounts, projectId, dayOf(now).slice(0, 7)),
    ]);
    const live = keys.filter((k) => k.revokedAt === null);
    const revoked = keys
      .filter((k) => k.revokedAt !== null)
      .sort((a, b) => Number(b.revokedAt) - Number(a.revokedAt));
    return [...live, ...revoked].map((k) => keyView(k, now, requests.get(k.id) ?? 0));
  }

  /** Creates a key; the secret is in this answer and never again. */
  async create(projectId: number, input: { name: string } & KeyLimitsInput) {
    const now = this.d.clock();
    const name = parseKeyName(input.name);
    const scopes = parseKeyScopes(input);
    const expiresAt = parseExpiry(input.expiresAt, now);
    await this.checkRoom(projectId);
    const { key, apiKey } = await this.d.store.transaction(async (tx) => {
      const created = await createApiKey(tx, this.d.pepper, projectId, name, { scopes, expiresAt });
      await recordAudit(
        tx.accounts,
        {
          projectId,
          kind: "key.create",
          subject: String(created.apiKey.id),
          after: auditValue(created.apiKey),
        },
        now,
      );
      return created;
    });
    return { ...keyView(apiKey, now), key };
  }

  /** Changes a live key's name, scopes or expiry; every API process applies it when it commits. */
  async update(projectId: number, keyId: number, input: { name?: string } & KeyLimitsInput) {
    const now = this.d.clock();
    const old = await this.mustFindLive(projectId, keyId);
    const name = input.name === undefined ? old.name : parseKeyName(input.name);
    // A field left out keeps its value; null lifts the limit.
    const scopes: KeyScopes = { ...old.scopes };
    const parsed = parseKeyScopes(input);
    for (const f of ["endpoints", "networks", "providers"] as const)
      if (input[f] !== undefined) scopes[f] = parsed[f];
    let expiresAt = old.expiresAt;
    if (input.expiresAt !== undefined) {
      if (old.rotatedTo !== null)
        throw new AppError("CONFLICT", "This key was rotated: its overlap's end is its expiry.");
      expiresAt = parseExpiry(input.expiresAt, now);
    }
    const next = { ...old, name, scopes, expiresAt };
    // A save that changes nothing writes nothing and records nothing (the log lists changes only).
    if (isDeepStrictEqual(auditValue(next), auditValue(old))) return keyView(old, now);
    await this.keyWrite(
      [keyId],
      {
        projectId,
        kind: "key.update",
        subject: String(keyId),
        before: auditValue(old),
        after: auditValue(next),
      },
      (tx) =>
        tx.accounts
          .updateTable("api_keys")
          .set({ name, scopes: scopesColumn(scopes), expires_at: expiresAt })
          .where("id", "=", keyId)
          .execute(),
    );
    return keyView(next, now);
  }

  /**
   * Rotation: a new key with the same name and scopes (its secret in this answer only), and the old
   * key working until `overlapUntil` (at most 30 days ahead), then refused as API_KEY_EXPIRED.
   */
  async rotate(projectId: number, keyId: number, input: { overlapUntil?: unknown; expiresAt?: unknown }) {
    const now = this.d.clock();
    const old = await this.mustFindLive(projectId, keyId);
    if (old.rotatedTo !== null)
      throw new AppError("CONFLICT", `This key was already rotated (to key ${old.rotatedTo}).`);
    const overlapEnd = parseOverlapEnd(input.overlapUntil, now);
    const expiresAt = parseExpiry(input.expiresAt, now);
    // The old key stops counting against the plan's keys once rotated: rotation works at the limit.
    if (old.expiresAt !== null && old.expiresAt <= now)
      throw new AppError("CONFLICT", "This key has expired; create a new key instead.");
    const oldEnd = old.expiresAt === null ? overlapEnd : Math.min(old.expiresAt, overlapEnd);
    const created = await this.keyWrite(
      [keyId],
      {
        projectId,
        kind: "key.rotate",
        subject: String(keyId),
        before: auditValue(old),
        after: auditValue({ ...old, expiresAt: oldEnd }),
      },
      async (tx) => {
        const c = await createApiKey(tx, this.d.pepper, projectId, old.name, {
          scopes: old.scopes,
          expiresAt,
        });
        await tx.accounts
          .updateTable("api_keys")
          .set({ rotated_to: c.apiKey.id, expires_at: oldEnd })
          .where("id", "=", keyId)
          .execute();
        await recordAudit(
          tx.accounts,
          {
            projectId,
            kind: "key.create",
            subject: String(c.apiKey.id),
            after: auditValue(c.apiKey, { rotatedFrom: keyId }),
          },
          now,
        );
        return c;
      },
    );
    return {
      ...keyView(created.apiKey, now),
      key: created.key,
      previous: keyView({ ...old, expiresAt: oldEnd, rotatedTo: created.apiKey.id }, now),
    };
  }

  /** Revokes a key; this process refuses it from the next request, others when the change channel tells them. */
  async revoke(projectId: number, keyId: number): Promise<void> {
    const key = await this.mustFindLive(projectId, keyId);
    await this.keyWrite(
      [keyId],
      {
        projectId,
        kind: "key.revoke",
        subject: String(keyId),
        before: { id: key.id, name: key.name, prefix: key.prefix, status: "active" },
        after: { id: key.id, name: key.name, prefix: key.prefix, status: "revoked" },
      },
      (tx) => tx.projects.revokeApiKey(keyId, this.d.clock()),
    );
  }
}
