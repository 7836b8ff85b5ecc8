import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Hex } from "viem";
import { AppError } from "../domain/errors.js";
import {
  GatewayRequestError,
  answerGatewayCall,
  decodeGatewayCall,
  dnsDecodeName,
} from "./ens-gateway-answer.js";

/**
 * The devnet's CCIP-Read gateway (EIP-3668) for its OffchainResolver: an HTTP server on
 * 127.0.0.1 that answers `GET /{sender}/{data}.json` and `POST` `{ sender, data }` with
 * `{ "data": "0x…" }` (ens-gateway-answer.ts), started and stopped by `startDevnet`.
 *
 * Test hooks (`GATEWAY_FAULTS`): a test makes it misbehave for every name or for one name,
 * through `setFault`, the `OMNINAME_DEVNET_GATEWAY_FAULT` variable at start-up, or
 * `POST /__devnet/fault` `{ "fault": "hang", "name": "alice.wild.eth" }` (a devnet on loopback
 * only: a process started by `npm start` is reached that way). `{ "fault": "none" }` without a
 * name clears every fault.
 *
 * @example
 * const gw = await startEnsGateway({ port: 0, recordsOf: (n) => table.get(n) ?? null });
 * gw.url // "http://127.0.0.1:41234/{sender}/{data}.json"
 * gw.setFault("status500"); … gw.setFault("none"); await gw.stop();
 */
export const GATEWAY_FAULTS = {
  /** Answers normally. */
  none: "none",
  /** Never answers (the socket stays open until the gateway stops). */
  hang: "hang",
  /** HTTP 500 with a JSON message. */
  status500: "status500",
  /** HTTP 200 with a 10 MiB body (a JSON string that never ends in time for a capped reader). */
  huge: "huge",
  /** HTTP 302 to `/redirected/…` on the same gateway, which answers normally: following it "works". */
  redirect: "redirect",
  /** HTTP 200 with a body that is not JSON. */
  malformed: "malformed",
  /** A well-formed answer signed by another key: the resolver's callback reverts. */
  badSignature: "badSignature",
  /** A well-formed answer whose signature expired an hour ago: the callback reverts. */
  expired: "expired",
} as const;
export type GatewayFault = keyof typeof GATEWAY_FAULTS;

export interface EnsGatewayOptions {
  /** 0 = any free port. */
  port: number;
  recordsOf(name: string): ReadonlyMap<string, string> | null;
  signerKey: Hex;
  /** Seconds the answers stay valid after `now()`. Default 300. */
  ttl?: number;
  /**
   * The chain's time in seconds: answers expire relative to it, so that a chain moved forward
   * (evm_increaseTime) still accepts them. Default: the wall clock.
   */
  now?: () => Promise<number>;
  /** A fault from the start (e.g. OMNINAME_DEVNET_GATEWAY_FAULT). */
  fault?: GatewayFault;
}

export interface EnsGateway {
  /** The EIP-3668 URL template the resolver is given. */
  readonly url: string;
  readonly port: number;
  /** Requests answered or refused so far (a test sees whether the gateway was asked at all). */
  readonly requests: number;
  /** Sets the fault of every name (no `name`) or of one name; "none" clears it. */
  setFault(fault: GatewayFault, name?: string): void;
  stop(): Promise<void>;
}

const HUGE_BYTES = 10 * 1024 * 1024;
const MAX_POST_BYTES = 64 * 1024;
const OTHER_KEY: Hex = "0x0000000000000000000000000000000000000000000000000000000000000001";

export function isGatewayFault(value: string): value is GatewayFault {
  return Object.hasOwn(GATEWAY_FAULTS, value);
}

/** The gateway's URL template on `port`. */
export function ensGatewayUrl(port: number): string {
  return `http://127.0.0.1:${port}/{sender}/{data}.json`;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json", "access-control-allow-origin": "*" });
  res.end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_POST_BYTES) throw new GatewayRequestError("request body too large", 413);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** sender and data of a GET `/{sender}/{data}.json` (optionally under `/redirected`) or a POST body. */
async function readRequest(req: IncomingMessage, path: string): Promise<{ sender: Hex; data: Hex }> {
  if (req.method === "POST") {
    let body: { sender?: unknown; data?: unknown };
    try {
      body = JSON.parse(await readBody(req));
    } catch (e) {
      if (e instanceof GatewayRequestError) throw e;
      throw new GatewayRequestError("the body is not JSON");
    }
    if (typeof body?.sender !== "string" || typeof body.data !== "string")
      throw new GatewayRequestError("the body needs sender and data");
    return { sender: body.sender as Hex, data: body.data as Hex };
  }
  const m = /^(?:\/redirected)?\/(0x[0-9a-fA-F]{40})\/(0x[0-9a-fA-F]*)(?:\.json)?$/.exec(path);
  if (!m) throw new GatewayRequestError("expected /{sender}/{data}.json", 404);
  return { sender: m[1] as Hex, data: m[2] as Hex };
}

/** The name a request is about, for per-name faults (null when the request does not decode). */
function nameOf(data: Hex): string | null {
  try {
    return decodeGatewayCall(data).name;
  } catch {
    try {
      return dnsDecodeName(data);
    } catch {
      return null;
    }
  }
}

export async function startEnsGateway(options: EnsGatewayOptions): Promise<EnsGateway> {
  const ttl = options.ttl ?? 300;
  const now = options.now ?? (async () => Math.floor(Date.now() / 1000));
  let globalFault: GatewayFault = options.fault ?? "none";
  const nameFaults = new Map<string, GatewayFault>();
  const sockets = new Set<Socket>();
  let requests = 0;

  const faultOf = (name: string | null): GatewayFault =>
    (name !== null ? nameFaults.get(name) : undefined) ?? globalFault;
  const setFault = (fault: GatewayFault, name?: string) => {
    if (name === undefined) {
      globalFault = fault;
      if (fault === "none") nameFaults.clear();
    } else if (fault === "none") nameFaults.delete(name);
    else nameFaults.set(name, fault);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
    if (path === "/__devnet/fault" && req.method === "POST") {
      const body = JSON.parse(await readBody(req)) as { fault?: string; name?: string };
      if (typeof body.fault !== "string" || !isGatewayFault(body.fault))
        return send(res, 400, { message: `fault must be one of ${Object.keys(GATEWAY_FAULTS).join(", ")}` });
      setFault(body.fault, body.name);
      return send(res, 200, { fault: body.fault, name: body.name ?? null });
    }
    if (path === "/__devnet/health") return send(res, 200, { ok: true });
    requests++;
    const { sender, data } = await readRequest(req, path);
    const fault = faultOf(nameOf(data));
    if (fault === "hang") return; // the socket is destroyed when the gateway stops
    if (fault === "status500") return send(res, 500, { message: "devnet gateway: injected failure" });
    if (fault === "malformed") {
      res.writeHead(200, { "content-type": "application/json" });
      return res.end("{ this is not json");
    }
    if (fault === "redirect" && !path.startsWith("/redirected/")) {
      res.writeHead(302, { location: `/redirected/${sender}/${data}.json` });
      return res.end();
    }
    if (fault === "huge") {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"data":"0x');
      const chunk = "00".repeat(32 * 1024);
      for (let sent = 0; sent < HUGE_BYTES; sent += chunk.length) {
        if (!res.write(chunk)) await new Promise((r) => res.once("drain", r));
        if (res.destroyed) return;
      }
      return res.end('"}');
    }
    const at = await now();
    const answer = await answerGatewayCall({
      sender,
      callData: data,
      recordsOf: options.recordsOf,
      signerKey: fault === "badSignature" ? OTHER_KEY : options.signerKey,
      expires: fault === "expired" ? at - 3_600 : at + ttl,
    });
    send(res, 200, { data: answer.data });
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (res.headersSent) return void res.destroy();
      if (e instanceof GatewayRequestError) send(res, e.status, { message: e.message });
      else send(res, 500, { message: "devnet gateway: internal error" });
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", (e) =>
      reject(
        new AppError("INTERNAL_ERROR", `the ENS gateway cannot listen on ${options.port}: ${e.message}`),
      ),
    );
    server.listen(options.port, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: ensGatewayUrl(port),
    port,
    get requests() {
      return requests;
    },
    setFault,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
