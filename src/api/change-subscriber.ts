import type { AccessRulesCache } from "../accounts/access-rules.js";
import type { ApiKeyVerifier } from "../accounts/api-keys.js";
import type { ChangeFeed } from "../store/change-feed.port.js";

/**
 * Applies the change channel's topics to this process's account caches: a key revoked, a project's
 * settings, allowlists or plan changed on another process (docs/operations.md, "Change channel").
 * The domain map's caches are the store's own (postgres-store.ts). Returns the unsubscribe.
 */
export function subscribeAccountCaches(
  feed: ChangeFeed,
  caches: {
    verifier: Pick<ApiKeyVerifier, "invalidateKey" | "invalidateProject" | "clear">;
    access: Pick<AccessRulesCache, "invalidate" | "clear">;
  },
): () => void {
  return feed.on((topic) => {
    if (topic === "*") {
      caches.verifier.clear();
      caches.access.clear();
      return;
    }
    const [kind, raw] = topic.split(":");
    const id = Number(raw);
    if (!Number.isSafeInteger(id)) return;
    if (kind === "key") caches.verifier.invalidateKey(id);
    else if (kind === "project") {
      caches.verifier.invalidateProject(id);
      caches.access.invalidate(id);
    }
  });
}
