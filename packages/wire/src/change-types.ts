/**
 * The change feed's event types (docs/api.md, "Change feed"). `domain.*` describe a change of the
 * map, `winner.changed` a change of which domain a colliding name resolves to under a project's
 * settings, `change.retracted` an earlier event a reorg undid.
 */
export const CHANGE_TYPES = [
  "domain.created",
  "domain.updated",
  "domain.removed",
  "winner.changed",
  "change.retracted",
] as const;
export type ChangeType = (typeof CHANGE_TYPES)[number];

export function isChangeType(s: string): s is ChangeType {
  return (CHANGE_TYPES as readonly string[]).includes(s);
}
