import { createApiKey } from "../accounts/api-keys.js";
import { CLI_ACTOR, recordAudit } from "../accounts/audit-log.js";
import { loadConfig } from "../config/load-config.js";
import { createContext } from "../context.js";
import { AppError, isAppError } from "../domain/errors.js";
import { parseExpiry, parseKeyScopes } from "../accounts/key-scopes.js";
import { writeAndPublish } from "../store/write-and-publish.js";
import { type Command, parseArgs } from "./command.js";

const USAGE = `usage:
  omniname keys create --project NAME [--name LABEL] [--create-project]
      [--endpoints resolve,deep-resolve,…] [--networks POLYGON,…] [--providers NAMESPACE_A,…]
      [--expires 2030-01-31T00:00:00Z]
  omniname keys list --project NAME
  omniname keys revoke --project NAME --id ID
`;

const OPTION_OF: Record<string, string> = {
  endpoints: "--endpoints",
  networks: "--networks",
  providers: "--providers",
  expiresAt: "--expires",
};

/**
 * The limits of `keys create`: comma-separated --endpoints, --networks, --providers and an ISO
 * --expires, validated as the console validates them (accounts/key-scopes.ts); an error names the
 * option. Throws AppError INVALID_PARAMETER (main prints it, exit 1).
 */
export function keyLimitsOf(options: Record<string, string | true>, now: number) {
  const list = (name: string) => {
    const v = options[name];
    if (v === undefined) return undefined;
    if (v === true) return [];
    return v.split(",").map((s) => s.trim());
  };
  const expires = options.expires;
  try {
    return {
      scopes: parseKeyScopes({
        endpoints: list("endpoints"),
        networks: list("networks"),
        providers: list("providers"),
      }),
      expiresAt: parseExpiry(expires === true ? "" : expires, now),
    };
  } catch (e) {
    const field = isAppError(e) ? e.details?.field : undefined;
    if (!isAppError(e) || typeof field !== "string") throw e;
    throw new AppError(
      e.code,
      e.message.replace(`The field "${field}"`, `The option ${OPTION_OF[field] ?? field}`),
    );
  }
}

/** Operator commands for API keys. A new key is printed once; the store keeps only its keyed hash. */
export const keysCommand: Command = {
  name: "keys",
  summary: "keys create|list|revoke --project NAME: manage a project's API keys",
  usage: `usage:
  omniname keys create --project NAME [--name LABEL] [--create-project]
                       [--endpoints resolve,deep-resolve,…] [--networks POLYGON,…]
                       [--providers NAMESPACE_A,…] [--expires 2030-01-31T00:00:00Z]
      Creates a key and prints it once (the store keeps only its keyed hash). The limits are
      checked as the console checks them; a list left out allows everything of its kind.
  omniname keys list --project NAME
      The project's keys: id, prefix, name, limits, last use; never the key itself.
  omniname keys revoke --project NAME --id ID
      Revokes a key; every API process refuses it within seconds.
`,
  async run(argv) {
    const { positional, options } = parseArgs(argv, ["create-project"]);
    const action = positional[0];
    const projectName = typeof options.project === "string" ? options.project : "";
    if (!["create", "list", "revoke"].includes(action ?? "") || !projectName) {
      process.stderr.write(USAGE);
      return 2;
    }
    // Checked before the store is opened: a typo in an option changes nothing.
    const limits = keyLimitsOf(action === "create" ? options : {}, Date.now());
    const ctx = await createContext(loadConfig());
    try {
      let project = await ctx.store.projects.findProjectByName(projectName);
      if (!project && action === "create" && options["create-project"]) {
        project = await ctx.store.transaction(async (tx) => {
          const p = await tx.projects.createProject({ name: projectName });
          const after = { name: p.name, description: p.description, plan: p.plan };
          await recordAudit(
            tx.accounts,
            { projectId: p.id, kind: "project.create", after },
            Date.now(),
            CLI_ACTOR,
          );
          return p;
        });
      }
      if (!project) {
        process.stderr.write(
          `omniname: no project named "${projectName}" (add --create-project to create it)\n`,
        );
        return 1;
      }
      if (action === "create") {
        const label = typeof options.name === "string" ? options.name : "cli";
        const projectId = project.id;
        const { key, apiKey } = await ctx.store.transaction(async (tx) => {
          const created = await createApiKey(tx, ctx.pepper, projectId, label, limits);
          const { id, name, prefix } = created.apiKey;
          const { endpoints = null, networks = null, providers = null } = limits.scopes;
          const expiresAt = limits.expiresAt === null ? null : new Date(limits.expiresAt).toISOString();
          const change = {
            projectId,
            kind: "key.create",
            subject: String(id),
            after: { id, name, prefix, endpoints, networks, providers, expiresAt },
          } as const;
          await recordAudit(tx.accounts, change, Date.now(), CLI_ACTOR);
          return created;
        });
        process.stdout.write(`${key}\n`);
        process.stderr.write(
          `key ${apiKey.id} (${apiKey.prefix}) created for project "${project.name}"; it is shown only now\n`,
        );
        return 0;
      }
      if (action === "list") {
        const now = Date.now();
        for (const k of await ctx.store.projects.listApiKeys(project.id)) {
          const state = k.revokedAt
            ? `revoked ${new Date(k.revokedAt).toISOString()}`
            : k.expiresAt !== null && k.expiresAt <= now
              ? `expired ${new Date(k.expiresAt).toISOString()}`
              : k.expiresAt !== null
                ? `active until ${new Date(k.expiresAt).toISOString()}`
                : "active";
          process.stdout.write(
            `${k.id}\t${k.prefix}\t${k.name}\t${new Date(k.createdAt).toISOString()}\t${state}\n`,
          );
        }
        return 0;
      }
      const id = Number(options.id);
      const key = (await ctx.store.projects.listApiKeys(project.id)).find((k) => k.id === id);
      if (!key) {
        process.stderr.write(`omniname: project "${project.name}" has no key ${String(options.id)}\n`);
        return 1;
      }
      // Told to every API process on PostgreSQL with the commit (change channel).
      const projectId = project.id;
      await writeAndPublish(ctx.store, [`key:${key.id}`], async (tx) => {
        await tx.projects.revokeApiKey(key.id, Date.now());
        const { id, name, prefix } = key;
        const change = {
          projectId,
          kind: "key.revoke",
          subject: String(id),
          before: { id, name, prefix, status: "active" },
          after: { id, name, prefix, status: "revoked" },
        } as const;
        await recordAudit(tx.accounts, change, Date.now(), CLI_ACTOR);
      });
      process.stdout.write(`revoked ${key.prefix}\n`);
      return 0;
    } finally {
      await ctx.store.close();
    }
  },
};
