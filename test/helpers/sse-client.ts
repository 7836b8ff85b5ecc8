import { EventSource } from "eventsource";
import { CHANGE_TYPES } from "../../src/domain/change-events.js";

/** An event as a feed client received it: the SSE type, its id and the parsed data. */
export interface Received {
  type: string;
  id: string;
  // biome-ignore lint/suspicious/noExplicitAny: test assertions read the wire JSON freely
  data: any;
  at: number;
}

/**
 * A change feed client through the `eventsource` package (the real SSE client): every event type
 * and `feed.error` collected in order. `headers` go with each (re)connection.
 */
export function openFeed(url: string, headers: Record<string, string>) {
  const events: Received[] = [];
  const es = new EventSource(url, {
    fetch: (input, init) => fetch(input, { ...init, headers: { ...(init?.headers ?? {}), ...headers } }),
  });
  for (const type of [...CHANGE_TYPES, "feed.error"])
    es.addEventListener(type, (m) => {
      events.push({ type, id: m.lastEventId, data: JSON.parse(m.data), at: Date.now() });
    });
  const opened = new Promise<void>((resolve, reject) => {
    es.onopen = () => resolve();
    es.onerror = (e) => reject(new Error(`feed error: ${e.message ?? e.code ?? "unknown"}`));
  });
  return { es, events, opened, close: () => es.close() };
}
