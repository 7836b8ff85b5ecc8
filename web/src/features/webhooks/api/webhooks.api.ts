import { useQuery } from "@tanstack/react-query";
import type { AttemptRow } from "../../../../../src/accounts/webhook-queue.repo";
import type { Webhook } from "../../../../../src/accounts/webhooks.repo";
import { CHANGE_TYPES } from "../../../../../src/domain/change-events";
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
  else if (!/^https?:\/\//i.test(d.url.trim())) errors.url = "The URL must start with https://.";
  if (d.eventTypes.length === 0) errors.eventTypes = "Choose at least one event type.";
  return errors;
}

/** The server's refusal placed on the field it names (`The field "url" is refused: …`). */
export function fieldErrorsOf(e: unknown): FieldErrors | null {
  if (!(e instanceof ApiError) || (e.code !== "INVALID_PARAMETER" && e.code !== "PARAMETER_TOO_LONG"))
    return null;
  const m = e.serverMessage;
  if (/"url"/.test(m)) return { url: m };
  if (/"eventTypes"/.test(m)) return { eventTypes: m };
  if (/filter|parameter "/i.test(m) || e.code === "PARAMETER_TOO_LONG") return { filters: m };
  if (/"description"/.test(m)) return { description: m };
  return null;
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
