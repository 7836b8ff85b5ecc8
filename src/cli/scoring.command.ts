import { readFileSync } from "node:fs";
import { CLI_ACTOR, recordAudit } from "../accounts/audit-log.js";
import { join } from "node:path";
import type { Config } from "../config/config.schema.js";
import { loadConfig } from "../config/load-config.js";
import { createContext } from "../context.js";
import { AppError } from "../domain/errors.js";
import { REFRESHED_TLDS_FILE, icannTldsPath, loadIcannTlds, refreshIanaTlds } from "../scoring/iana-tlds.js";
import { importKycList } from "../jobs/kyc-import.job.js";
import { rescoreAll } from "../jobs/rescore.job.js";
import { parseKycFile } from "../scoring/kyc-list.js";
import { parseProjectRules } from "../scoring/project-rules.js";
import { loadScoringLists } from "../scoring/scoring-lists.js";
import type { Project } from "../store/accounts.port.js";
import { writeAndPublish } from "../store/write-and-publish.js";
import type { Store } from "../store/store.js";
import { type Command, parseArgs } from "./command.js";

function out(line: string): void {
  process.stdout.write(`${line}\n`);
}

function usage(text: string): number {
  process.stderr.write(`usage: ${text}\n`);
  return 2;
}

/** Runs `fn` with a store built from the configuration (or the one a test passes), closing what it opened. */
async function withStore<T>(
  deps: ScoringCommandDeps,
  fn: (store: Store, config: Config) => Promise<T>,
): Promise<T> {
  const config = deps.config ?? loadConfig();
  if (deps.store) return fn(deps.store, config);
  const ctx = await createContext(config);
  try {
    return await fn(ctx.store, config);
  } finally {
    await ctx.store.close();
  }
}

/** Tests inject a config and a store; the CLI builds both from the environment. */
interface ScoringCommandDeps {
  config?: Config;
  store?: Store;
}

export function createKycCommand(deps: ScoringCommandDeps = {}): Command {
  return {
    name: "kyc",
    walksMap: true,
    summary:
      "kyc import FILE [--replace]: add owner addresses to the KYC list (CSV or one a line) and rescore their domains",
    async run(argv) {
      const { positional, options } = parseArgs(argv, ["replace"]);
      const [action, file] = positional;
      if (action !== "import" || !file) return usage("omniname kyc import FILE [--replace]");
      const addresses = parseKycFile(readFileSync(file, "utf8"), file);
      return withStore(deps, async (store, config) => {
        const result = await importKycList(store, config, addresses, {
          replace: options.replace === true,
          source: file,
        });
        const stats = result.rescored;
        out(
          `kyc: ${result.added.length} added, ${result.removed.length} removed, ${result.total} on the list; ` +
            `${stats.updated} of ${stats.scanned} affected domains rescored`,
        );
        return 0;
      });
    },
  };
}

export function createTldsCommand(deps: ScoringCommandDeps = {}): Command {
  return {
    name: "tlds",
    walksMap: true,
    summary:
      "tlds refresh FILE [--out PATH] [--no-rescore]: install an IANA TLD list (tlds-alpha-by-domain.txt)",
    async run(argv) {
      const { positional, options } = parseArgs(argv, ["no-rescore"]);
      const [action, file] = positional;
      if (action !== "refresh" || !file)
        return usage("omniname tlds refresh FILE [--out PATH] [--no-rescore]");
      const config = deps.config ?? loadConfig();
      const dest = typeof options.out === "string" ? options.out : join(config.dataDir, REFRESHED_TLDS_FILE);
      const result = refreshIanaTlds(file, dest, loadIcannTlds(config));
      out(
        `tlds: ${result.count} TLDs installed at ${result.path} (+${result.added.length} -${result.removed.length})`,
      );
      if (result.added.length > 0)
        out(`  added: ${result.added.slice(0, 20).join(" ")}${result.added.length > 20 ? " …" : ""}`);
      if (result.removed.length > 0)
        out(`  removed: ${result.removed.slice(0, 20).join(" ")}${result.removed.length > 20 ? " …" : ""}`);
      if (icannTldsPath(config) !== dest)
        out(`  note: the list in force is ${icannTldsPath(config)} (ICANN_TLDS_FILE)`);
      if (options["no-rescore"] === true) return 0;
      return withStore({ ...deps, config }, async (store) => {
        const stats = await rescoreAll(
          store,
          await loadScoringLists(config, await store.scoring.findKycOwners()),
        );
        out(`rescored: ${stats.updated} of ${stats.scanned} domains changed`);
        return 0;
      });
    },
  };
}

async function findProject(store: Store, ref: string): Promise<Project> {
  const p = /^\d+$/.test(ref)
    ? await store.projects.findProjectById(Number(ref))
    : await store.projects.findProjectByName(ref);
  if (!p) throw new AppError("NOT_FOUND", `no project ${JSON.stringify(ref)}`);
  return p;
}

const PROJECT_USAGE =
  "omniname project rules show PROJECT | project rules set PROJECT JSON | project rules set PROJECT --file FILE | project rules clear PROJECT";

/** `project rules …`: show or replace a project's resolution settings and collision rules (docs/scoring.md). */
export function createProjectRulesCommand(deps: ScoringCommandDeps = {}): Command {
  return {
    name: "project",
    summary:
      "project rules show|set|clear PROJECT [JSON | --file FILE]: a project's resolution settings and collision rules",
    async run(argv) {
      const { positional, options } = parseArgs(argv);
      const [sub, action, ref, json] = positional;
      if (sub !== "rules" || !ref || !["show", "set", "clear"].includes(action)) return usage(PROJECT_USAGE);
      let next: Record<string, unknown> | null = null;
      if (action === "set") {
        const text = typeof options.file === "string" ? readFileSync(options.file, "utf8") : json;
        if (!text) return usage(PROJECT_USAGE);
        let input: unknown;
        try {
          input = JSON.parse(text);
        } catch (e) {
          process.stderr.write(`project rules: not JSON: ${(e as Error).message}\n`);
          return 1;
        }
        const parsed = parseProjectRules(input);
        if (!parsed.ok) {
          process.stderr.write(`project rules: ${parsed.error}\n`);
          return 1;
        }
        next = parsed.value;
      } else if (action === "clear") next = {};
      return withStore(deps, async (store) => {
        const project = await findProject(store, ref);
        if (next !== null) {
          const settings = next;
          const now = Date.now();
          await writeAndPublish(store, [`project:${project.id}`], async (tx) => {
            await tx.projects.updateProjectSettings(project.id, settings);
            // The winner.changed events: appended by whichever API process runs the job.
            await tx.winnerJobs.appendSettingsWinnerJob({
              projectId: project.id,
              settingsBefore: project.settings,
              settingsAfter: settings,
              rankAt: now,
              createdAt: now,
            });
            const change = {
              projectId: project.id,
              kind: "settings.update",
              before: project.settings,
              after: settings,
            } as const;
            await recordAudit(tx.accounts, change, Date.now(), CLI_ACTOR);
          });
        }
        out(JSON.stringify(next ?? project.settings, null, 2));
        return 0;
      });
    },
  };
}

/** `scoring rescore`: recompute every stored base score and abuse signal. */
export function createScoringCommand(deps: ScoringCommandDeps = {}): Command {
  return {
    name: "scoring",
    walksMap: true,
    summary:
      "scoring rescore: recompute every domain's base score and abuse signals (origins, lookalikes, lists)",
    async run(argv) {
      const { positional } = parseArgs(argv);
      if (positional[0] !== "rescore") return usage("omniname scoring rescore");
      return withStore(deps, async (store, config) => {
        const started = Date.now();
        const stats = await rescoreAll(
          store,
          await loadScoringLists(config, await store.scoring.findKycOwners()),
        );
        out(
          `rescored: ${stats.updated} of ${stats.scanned} domains changed in ${Date.now() - started} ms ` +
            `(${stats.index.tldOrigins.size} TLDs, ${stats.collisions} collisions, ${stats.index.imitated.size} lookalikes)`,
        );
        return 0;
      });
    },
  };
}

export const kycCommand = createKycCommand();
export const tldsCommand = createTldsCommand();
export const projectRulesCommand = createProjectRulesCommand();
export const scoringCommand = createScoringCommand();
