import { parseEmail } from "../accounts/accounts.service.js";
import { CLI_ACTOR, recordAudit } from "../accounts/audit-log.js";
import { createConsoleServices } from "../accounts/console-services.js";
import { findPlan, planView } from "../accounts/plans.js";
import { ProjectsRepo } from "../accounts/projects.repo.js";
import type { AppContext } from "../app-context.js";
import { loadConfig } from "../config/load-config.js";
import { createContext } from "../context.js";
import { isAppError } from "../domain/errors.js";
import { writeAndPublish } from "../store/write-and-publish.js";
import { type Command, parseArgs } from "./command.js";

const USAGE = `usage:
  omniname admin invite EMAIL          invite someone to register (single-use link, e-mailed and printed)
  omniname admin plan PROJECT [PLAN]   show or set a project's plan (PROJECT: id or name)
  omniname admin plans                 list the plans of the configuration
`;

type Out = { out: (s: string) => void; err: (s: string) => void };

/** The admin subcommands over an existing context (tests call this directly). */
export async function runAdmin(ctx: AppContext, argv: string[], io: Out): Promise<number> {
  const { positional } = parseArgs(argv);
  const [action, ...args] = positional;
  try {
    if (action === "invite" && args.length === 1) {
      const email = parseEmail(args[0]);
      const services = createConsoleServices(ctx);
      try {
        if ((await services.accounts.repo.findAccountByEmail(email)) !== null) {
          io.err(`${email} already has an account.\n`);
          return 1;
        }
        // wait: the operator learns here if the mail could not be sent.
        const { link, invitation } = await services.accounts.invite(email, { wait: true });
        io.out(
          `invitation for ${email}, valid until ${new Date(invitation.expiresAt).toISOString()}:\n${link}\n`,
        );
        return 0;
      } finally {
        await services.close();
      }
    }
    if (action === "plan" && (args.length === 1 || args.length === 2)) {
      const project = /^\d+$/.test(args[0])
        ? await ctx.store.projects.findProjectById(Number(args[0]))
        : await ctx.store.projects.findProjectByName(args[0]);
      if (project === null) {
        io.err(`no project ${JSON.stringify(args[0])}\n`);
        return 1;
      }
      if (args.length === 1) {
        io.out(`${project.id} ${project.name}: ${project.plan}\n`);
        return 0;
      }
      const plan = findPlan(ctx.config, args[1]);
      if (plan === null) {
        io.err(
          `unknown plan ${JSON.stringify(args[1])}; plans: ${Object.keys(ctx.config.plans).join(", ")}\n`,
        );
        return 1;
      }
      // The NOTIFY is sent with the commit: API processes apply the plan within milliseconds.
      await writeAndPublish(ctx.store, [`project:${project.id}`], async (tx) => {
        await new ProjectsRepo(tx.accounts).setPlan(project.id, plan.name);
        const change = {
          projectId: project.id,
          kind: "project.plan",
          before: { plan: project.plan },
          after: { plan: plan.name },
        } as const;
        await recordAudit(tx.accounts, change, Date.now(), CLI_ACTOR);
      });
      io.out(
        `${project.id} ${project.name}: ${project.plan} -> ${plan.name} (API processes apply it within seconds)\n`,
      );
      return 0;
    }
    if (action === "plans" && args.length === 0) {
      for (const name of Object.keys(ctx.config.plans)) {
        const p = planView(findPlan(ctx.config, name)!);
        const mark = name === ctx.config.defaultPlan ? " (default)" : "";
        io.out(
          `${name}${mark}: ${p.requestsPerSecond} req/s per key (window ${p.rateWindowSeconds} s), ${p.monthlyQuota} requests/month, ` +
            `${p.maxProjects} projects, ${p.maxKeys} keys, ${p.maxMembers} members\n`,
        );
      }
      return 0;
    }
    io.err(USAGE);
    return 2;
  } catch (e) {
    if (isAppError(e)) {
      io.err(`${e.code}: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
}

export const adminCommand: Command = {
  name: "admin",
  summary: "admin invite EMAIL | admin plan PROJECT [PLAN] | admin plans: operator tasks",
  usage: USAGE,
  async run(argv) {
    const ctx = await createContext(loadConfig());
    try {
      return await runAdmin(ctx, argv, {
        out: (s) => process.stdout.write(s),
        err: (s) => process.stderr.write(s),
      });
    } finally {
      await ctx.store.close();
    }
  },
};
