/** A webhook as the console API answers it (times in epoch ms; never its secret). */
export interface Webhook {
  id: number;
  projectId: number;
  url: string;
  description: string;
  /** Event types delivered; empty: every type. */
  eventTypes: string[];
  /** The change feed's filters (docs/api.md), each a list of values; absent: no filter. */
  filters: Record<string, string[]>;
  enabled: boolean;
  createdAt: number;
  updatedAt: number;
  /** Since when every delivery has failed (null: the last one succeeded). */
  failingSince: number | null;
  disabledAt: number | null;
  disabledReason: string | null;
}

/** One attempt of a webhook's delivery log, as the console API answers it. */
export interface AttemptRow {
  id: number;
  webhookId: number;
  messageId: number;
  msgId: string;
  eventType: string;
  attempt: number;
  at: number;
  statusCode: number | null;
  /** delivered, failed (will retry), gave_up (retries exhausted), refused (address refused). */
  outcome: string;
  latencyMs: number;
  responseStart: string;
  error: string | null;
}
