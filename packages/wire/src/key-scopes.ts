/**
 * The endpoint names a key's scope may list: the names of the usage tables and of docs/api.md
 * (`batch-resolve` is `POST batch/resolve`, `changes` the change feed, `dns-query` the project's DoH).
 */
export const KEY_ENDPOINTS = [
  "resolve",
  "deep-resolve",
  "reverse-resolve",
  "batch-resolve",
  "batch-deep-resolve",
  "batch-reverse-resolve",
  "changes",
  "dns-query",
] as const;
export type KeyEndpoint = (typeof KEY_ENDPOINTS)[number];

/** A rotation keeps the old key working for at most this long. */
export const MAX_ROTATION_OVERLAP_MS = 30 * 86_400_000;
/** An expiry at most this far ahead (ten years): a later one is a typo, not a plan. */
export const MAX_EXPIRY_AHEAD_MS = 3650 * 86_400_000;
