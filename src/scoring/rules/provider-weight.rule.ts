import type { Provider } from "../../domain/providers.js";
import type { BaseRule } from "../scoring.types.js";

/**
 * Points per provider. Equal for the live providers: the service takes no side between
 * namespaces by default, collisions are decided by origin, age and the project's own rules. The
 * table exists so an operator decision is one line (a "coming soon" provider would earn 0).
 */
const PROVIDER_WEIGHTS: Readonly<Record<Provider, number>> = {
  NAMESPACE_A: 5,
  NAMESPACE_B: 5,
  NAMESPACE_C: 5,
  NAMESPACE_D: 5,
};

export const providerWeightRule: BaseRule = {
  name: "provider-weight",
  weight: "+5 (every live provider)",
  evaluate({ domain }) {
    const w = PROVIDER_WEIGHTS[domain.provider] ?? 0;
    return { effect: w, reason: `weight of provider ${domain.provider}` };
  },
};
