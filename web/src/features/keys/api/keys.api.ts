import { fieldName } from "../../../api";

/** Names a key's scope may list (src/accounts/key-scope-names.ts): the API's endpoint names. */
export { KEY_ENDPOINTS, MAX_ROTATION_OVERLAP_MS } from "@omniname/wire/key-scopes";

/** The limits as the form holds them: ticked names (none ticked: no limit) and a local time. */
export interface LimitsDraft {
  endpoints: string[];
  networks: string[];
  providers: string[];
  /** `YYYY-MM-DDTHH:MM` of an `<input type="datetime-local">`, in the browser's time zone; "" for none. */
  expires: string;
}

export const NO_LIMITS: LimitsDraft = { endpoints: [], networks: [], providers: [], expires: "" };

/** A datetime-local value as an ISO time (the browser's zone), or null when empty. */
export function toIso(local: string): string | null {
  if (local === "") return null;
  const ms = new Date(local).getTime();
  // An unparseable value is sent as typed, for the server to name the field.
  return Number.isFinite(ms) ? new Date(ms).toISOString() : local;
}

/** An ISO time as a datetime-local value in the browser's zone. */
export function toLocal(iso: string | null, offsetMs = 0): string {
  if (iso === null) return "";
  const d = new Date(new Date(iso).getTime() + offsetMs);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** The request body of a draft: an empty list is "no limit" (null). */
export function limitsBody(d: LimitsDraft) {
  const list = (l: string[]) => (l.length === 0 ? null : l);
  return {
    endpoints: list(d.endpoints),
    networks: list(d.networks),
    providers: list(d.providers),
    expiresAt: toIso(d.expires),
  };
}

/** The field a server's field error names (`The field "expiresAt" …`), if any. */
export const fieldOf = fieldName;

/** A key's limits in a few words, for the table. */
export function limitsSummary(k: {
  endpoints: string[] | null;
  networks: string[] | null;
  providers: string[] | null;
}) {
  const parts = [k.endpoints?.join(", "), k.networks?.join(", "), k.providers?.join(", ")].filter(Boolean);
  return parts.length === 0 ? "None" : parts.join(" · ");
}
