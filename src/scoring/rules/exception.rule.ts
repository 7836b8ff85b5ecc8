import type { CompiledProjectRules, ProjectException } from "../project-rules.js";

/**
 * The project's exceptions: a domain or a TLD and the namespace that always wins for it. The
 * matching domain is ranked first (the first ordering key) and its score raised to 100. A domain
 * exception is more specific than a TLD exception and replaces it for that name.
 */
export const EXCEPTION_RULE = { name: "exception", weight: "ordering key; score raised to 100" } as const;

export function exceptionFor(
  d: { name: string; tld: string },
  rules: Pick<CompiledProjectRules, "domainExceptions" | "tldExceptions">,
): ProjectException | null {
  if (rules.domainExceptions.size > 0) {
    const e = rules.domainExceptions.get(d.name);
    if (e) return e;
  }
  if (rules.tldExceptions.size > 0) return rules.tldExceptions.get(d.tld) ?? null;
  return null;
}

export function matchesException(d: { provider: string; network: string }, e: ProjectException): boolean {
  return e.provider === d.provider && (e.network === undefined || e.network === d.network);
}
