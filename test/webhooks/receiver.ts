import { createServer, type IncomingMessage, type Server } from "node:http";
import { Webhook } from "standardwebhooks";

export interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
  /** The body verified with the secret given (null: no secret was known for the path). */
  verified: boolean | null;
  json: { type: string; timestamp: string; data: Record<string, unknown> };
  /** Epoch ms of arrival. */
  at: number;
}

/**
 * A webhook receiver on 127.0.0.1 (an ephemeral port) that verifies every signature with the
 * `standardwebhooks` package. `behave` answers per path and per count of earlier requests.
 */
export async function startReceiver(
  behave: (
    path: string,
    seen: number,
  ) => { status: number; headers?: Record<string, string>; hang?: boolean; delayMs?: number },
) {
  const received: Received[] = [];
  const secrets = new Map<string, string>();
  const server: Server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const path = req.url ?? "/";
      const body = Buffer.concat(chunks).toString("utf8");
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      const secret = secrets.get(path);
      let verified: boolean | null = null;
      if (secret)
        try {
          new Webhook(secret).verify(body, headers);
          verified = true;
        } catch {
          verified = false;
        }
      const seen = received.filter((r) => r.path === path).length;
      received.push({ path, headers, body, verified, json: JSON.parse(body), at: Date.now() });
      const b = behave(path, seen);
      if (b.hang) return;
      const answer = () =>
        res.writeHead(b.status, b.headers).end(`answer ${b.status} ${"z".repeat(100_000)}`);
      if (b.delayMs) setTimeout(answer, b.delayMs);
      else answer();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  return {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    received,
    secrets,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export async function until<T>(
  what: string,
  f: () => T | undefined | false | Promise<T | undefined | false>,
  ms = 15_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
