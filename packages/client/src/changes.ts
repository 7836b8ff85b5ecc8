import { createParser } from "eventsource-parser";
import { OmninameError } from "./errors.js";
import type { operations } from "./schema.js";

/** The feed's filters (comma-separated values, as the query parameters) and where to resume. */
export type ChangesOptions = NonNullable<operations["changes"]["parameters"]["query"]> & {
  /** Ends the iteration (the stream is closed). */
  signal?: AbortSignal;
  /** Reconnect with the last id when the stream ends or drops (default true). */
  reconnect?: boolean;
};

/**
 * One event of the change feed: `id` is the cursor (pass it as `after` to resume), `type` one of
 * domain.created, domain.updated, domain.removed, winner.changed, change.retracted, and `data` the event's JSON
 * (docs/api.md of omniname, "Change feed").
 */
export interface ChangeFeedEvent {
  id: string;
  type: string;
  data: { id: number; type: string; domain: string; network: string; provider: string; [k: string]: unknown };
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });

/**
 * The change feed (`GET /svc/api/v1/changes`, Server-Sent Events) as an async iterator, parsed
 * with eventsource-parser. It resumes from the last id it saw (`Last-Event-ID`) when the stream
 * drops, after 1 s, 2 s … up to 30 s; a `feed.error` event (an expired or future cursor, a revoked
 * key) or an error answer is thrown as an OmninameError.
 */
export async function* changeFeed(
  baseUrl: string,
  apiKey: string,
  fetchImpl: typeof fetch,
  opts: ChangesOptions = {},
): AsyncGenerator<ChangeFeedEvent> {
  const { signal, reconnect = true, after, ...filters } = opts;
  let lastId: string | undefined = after;
  let delay = 1000;
  while (!signal?.aborted) {
    const url = new URL(`${baseUrl}/svc/api/v1/changes`);
    for (const [k, v] of Object.entries(filters)) if (v !== undefined && v !== "") url.searchParams.set(k, v);
    const headers: Record<string, string> = { "api-key": apiKey, accept: "text/event-stream" };
    if (lastId !== undefined) headers["last-event-id"] = lastId;
    let res: Response;
    try {
      res = await fetchImpl(url, { headers, signal });
    } catch (cause) {
      if (signal?.aborted) return;
      if (!reconnect) throw new OmninameError("NETWORK_ERROR", String(cause), 0, { cause });
      await sleep(delay, signal);
      delay = Math.min(30_000, delay * 2);
      continue;
    }
    if (!res.ok || !res.body) {
      const text = await res.text().catch(() => "");
      let code: OmninameError["code"] = "UNEXPECTED_RESPONSE";
      let message = `HTTP ${res.status}: ${text.slice(0, 200)}`;
      try {
        const body = JSON.parse(text) as { error?: { code?: string; message?: string } };
        if (body.error?.code) {
          code = body.error.code as OmninameError["code"];
          message = body.error.message ?? code;
        }
      } catch {
        // not JSON: the message above
      }
      throw new OmninameError(code, message, res.status);
    }
    delay = 1000;
    const queue: ChangeFeedEvent[] = [];
    let failure: OmninameError | null = null;
    const parser = createParser({
      onEvent(e) {
        if (e.id !== undefined) lastId = e.id;
        if (e.event === "feed.error") {
          const body = JSON.parse(e.data) as { code: string; message: string };
          failure = new OmninameError(body.code as OmninameError["code"], body.message, 200);
          return;
        }
        if (e.data === "") return;
        queue.push({
          id: e.id ?? "",
          type: e.event ?? "message",
          data: JSON.parse(e.data) as ChangeFeedEvent["data"],
        });
      },
    });
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        parser.feed(decoder.decode(chunk, { stream: true }));
        while (queue.length > 0) yield queue.shift() as ChangeFeedEvent;
        if (failure) throw failure;
      }
    } catch (e) {
      if (e instanceof OmninameError) throw e;
      if (signal?.aborted) return;
      if (!reconnect) throw new OmninameError("NETWORK_ERROR", String(e), 0, { cause: e });
    }
    if (!reconnect) return;
    await sleep(delay, signal);
  }
}
