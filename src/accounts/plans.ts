import type { Config } from "../config/config.schema.js";
import { AppError } from "../domain/errors.js";

export interface Plan {
  name: string;
  /** Requests per second per API key. */
  rps: number;
  /**
   * Seconds over which the rate is counted: a key may send rps × window requests per window
   * (1 by default: a plain per-second limit).
   */
  rateWindowS: number;
  monthlyQuota: number;
  maxProjects: number;
  maxKeys: number;
  maxMembers: number;
}

type PlanConfig = Pick<Config, "plans" | "defaultPlan">;

export function findPlan(config: PlanConfig, name: string): Plan | null {
  if (!Object.hasOwn(config.plans, name)) return null;
  const p = config.plans[name] as Config["plans"][string] & { rateWindowS?: number };
  return { name, ...p, rateWindowS: p.rateWindowS ?? 1 };
}

/**
 * The plan a project runs on. A project whose plan was removed from the configuration falls back
 * to the default plan rather than going unlimited.
 */
export function planOf(config: PlanConfig, name: string): Plan {
  return findPlan(config, name) ?? getPlan(config, config.defaultPlan);
}

/** The plan of the built-in demo project: "demo" when PLANS has it, else the default plan. */
const DEMO_PLAN = "demo";

export function demoPlanOf(config: PlanConfig): Plan {
  return findPlan(config, DEMO_PLAN) ?? getPlan(config, config.defaultPlan);
}

export function getPlan(config: PlanConfig, name: string): Plan {
  const p = findPlan(config, name);
  if (p === null)
    throw new AppError(
      "CONFIG_INVALID",
      `Unknown plan "${name}" (PLANS has: ${Object.keys(config.plans).join(", ")})`,
    );
  return p;
}

/** Plan limits as the console shows them. */
export function planView(p: Plan) {
  return {
    name: p.name,
    requestsPerSecond: p.rps,
    rateWindowSeconds: p.rateWindowS,
    monthlyQuota: p.monthlyQuota,
    maxProjects: p.maxProjects,
    maxKeys: p.maxKeys,
    maxMembers: p.maxMembers,
  };
}
