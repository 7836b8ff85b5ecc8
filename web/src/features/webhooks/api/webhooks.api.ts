import { useQuery } from "@tanstack/react-query";
import type { AttemptRow, Webhook } from "@omniname/wire/webhooks";
import { CHANGE_TYPES } from "@omniname/wire/change-types";
import { ApiError, get } from "../../../api";

/** The event types a webhook may take (docs/api.md, "Change feed"); none checked is refused here. */
export const EVENT_TYPES = CHANGE_TYPES;

/** The filters a webhook takes, each a list (docs/console-api.md, "Webhooks"). */
export const FILTERS = ["domains", "tlds", "addresses", "networks", "providers"] as const;
export type FilterName = (typeof FILTERS)[number];

/** A webhook as the console API answers it (times in epoch ms; never its secret). */
export type { Webhook };
/** One attempt of the delivery log. */
export type Attempt = Omit<AttemptRow, "webhookId" | "messageId">;
/** The answer of "send a test event". */
export type TestResult = Pick<
  AttemptRow,
  "outcome" | "statusCode" | "latencyMs" | "responseStart" | "error" | "msgId"
>;

/** The form's state: filters as the text a person types (comma or line separated). */
export interface WebhookDraft {
  url: string;
  description: string;
  eventTypes: string[];
  filters: Record<FilterName, string>;
}

export const EMPTY_DRAFT: WebhookDraft = {
  url: "",
  description: "",
  eventTypes: [...EVENT_TYPES],
  filters: { domains: "", tlds: "", addresses: "", networks: "", providers: "" },
};

export function draftOf(w: Webhook): WebhookDraft {
  // A webhook stored with no types gets every type: the form shows them all checked.
  const types: string[] = w.eventTypes.length === 0 ? [...EVENT_TYPES] : w.eventTypes;
  const filters = { ...EMPTY_DRAFT.filters };
  for (const k of FILTERS) filters[k] = (w.filters[k] ?? []).join(", ");
  return { url: w.url, description: w.description, eventTypes: types, filters };
}

/** The body of POST or PATCH: filters split on commas and new lines, empty ones left out. */
export function bodyOf(d: WebhookDraft) {
  const filters: Partial<Record<FilterName, string[]>> = {};
  for (const k of FILTERS) {
    const values = d.filters[k]
      .split(/[\n,]/)
      .map((v) => v.trim())
      .filter(Boolean);
    if (values.length > 0) filters[k] = values;
  }
  return { url: d.url.trim(), description: d.description.trim(), eventTypes: d.eventTypes, filters };
}

export type FieldErrors = Partial<Record<"url" | "eventTypes" | "filters" | "description", string>>;

/** What the browser can tell before asking: a URL, at least one event type. */
export function checkDraft(d: WebhookDraft): FieldErrors {
  const errors: FieldErrors = {};
  if (d.url.trim() === "") errors.url = "Enter the URL deliveries are sent to.";
  else if (!/^https?:\/\//i.test(d.url.trim()))
    errors.url =
      "Enter a full address that starts with https://, such as https://example.com/hooks/omniname.";
  if (d.eventTypes.length === 0) errors.eventTypes = "Choose at least one event type.";
  return errors;
}

/** The server's refusal placed on the field it names (`The field "url" is refused: …`). */
export function fieldErrorsOf(e: unknown): FieldErrors | null {
  if (!(e instanceof ApiError) || (e.code !== "INVALID_PARAMETER" && e.code !== "PARAMETER_TOO_LONG"))
    return null;
  // Placed by the server's wording; shown in the console's (messages.ts, through e.message).
  const m = e.serverMessage;
  if (/"url"/.test(m)) return { url: e.message };
  if (/"eventTypes"/.test(m)) return { eventTypes: e.message };
  if (/filter|parameter "/i.test(m) || e.code === "PARAMETER_TOO_LONG") return { filters: e.message };
  if (/"description"/.test(m)) return { description: e.message };
  return null;
}

/** Which URLs this server accepts (GET …/webhooks/address-policy): the URL field's hint says it. */
export function useAddressPolicy(projectId: number) {
  return useQuery({
    queryKey: ["webhook-address-policy", projectId],
    queryFn: () => get<{ allowLoopback: boolean }>(`/projects/${projectId}/webhooks/address-policy`),
    staleTime: Number.POSITIVE_INFINITY,
  });
}

/** The URL field's hint: what this server accepts, as its address policy says. */
export function urlHint(policy: { allowLoopback: boolean } | undefined): string {
  if (policy === undefined) return "The address deliveries are sent to.";
  return policy.allowLoopback
    ? "https:// to a public address, or http:// or https:// to this machine (127.0.0.1, allowed on this server for trying webhooks out). Private and link-local addresses are refused."
    : "https:// only, to a public address: private, loopback and link-local addresses are refused.";
}

export const hooksKey = (projectId: number) => ["webhooks", projectId] as const;

export function useWebhooks(projectId: number, enabled: boolean) {
  return useQuery({
    enabled,
    queryKey: hooksKey(projectId),
    queryFn: () => get<Webhook[]>(`/projects/${projectId}/webhooks`),
  });
}

/** The delivery log of one webhook, newest first, refreshed every 2 s while shown. */
export function useDeliveries(projectId: number, webhookId: number | null) {
  return useQuery({
    enabled: webhookId !== null,
    queryKey: ["webhook-deliveries", projectId, webhookId],
    queryFn: () => get<Attempt[]>(`/projects/${projectId}/webhooks/${webhookId}/deliveries?limit=50`),
    refetchInterval: 2_000,
  });
}

export const isoOf = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
