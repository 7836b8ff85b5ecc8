import type { CompiledProjectRules } from "../project-rules.js";

/** The project's enabled/disabled networks and providers: a disabled one is never served. */
export function isAllowedByProject(
  d: { network: string; provider: string },
  rules: Pick<CompiledProjectRules, "allowedNetworks" | "allowedProviders">,
): boolean {
  if (rules.allowedNetworks !== null && !rules.allowedNetworks.has(d.network)) return false;
  if (rules.allowedProviders !== null && !rules.allowedProviders.has(d.provider)) return false;
  return true;
}
