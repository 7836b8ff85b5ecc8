import { createRequire } from "node:module";
import { isIP } from "node:net";

/** Counters of one batched socket since it opened (dropped: answers the kernel refused, e.g. ENOBUFS). */
export interface UdpBatchStats {
  received: number;
  sent: number;
  dropped: number;
  errors: number;
  /** recvmmsg calls that returned datagrams: received / batches is the mean batch. */
  batches: number;
}

/** The addon's functions (native/udp-batch/udp_batch.c). */
export interface UdpBatchBinding {
  SLOT: number;
  ADDR: number;
  open(
    host: string,
    port: number,
    batch: number,
    rx: Buffer,
    addrs: Buffer,
    lens: Buffer,
    tx: Buffer,
    txLens: Buffer,
    recvBufferSize: number,
    onBatch: (n: number) => void,
  ): object;
  port(handle: object): number;
  send(handle: object, data: Buffer, addr: Buffer): boolean;
  /** A UDP socket bound for processes started after (they inherit it); nothing reads it here. */
  bind(host: string, port: number, recvBufferSize: number): number;
  closeFd(fd: number): void;
  close(handle: object): void;
  stats(handle: object): Partial<UdpBatchStats>;
}

/** Where the addon is built (scripts/build.mjs): the same path from src/dns/ and from dist/dns/. */
const ADDON_PATH = "../../native/udp-batch/build/Release/udp_batch.node";

let loaded: { binding: UdpBatchBinding } | { binding: null; reason: string } | undefined;

/** The batched UDP addon, or why it cannot be used here (not Linux, not built); loaded once. */
export function loadUdpBatch(): { binding: UdpBatchBinding } | { binding: null; reason: string } {
  if (loaded !== undefined) return loaded;
  if (process.platform !== "linux") {
    loaded = { binding: null, reason: `not Linux (${process.platform})` };
    return loaded;
  }
  try {
    loaded = { binding: createRequire(import.meta.url)(ADDON_PATH) as UdpBatchBinding };
  } catch (e) {
    loaded = {
      binding: null,
      reason: `addon not loadable (npm run build): ${(e as Error).message.split("\n")[0]}`,
    };
  }
  return loaded;
}

/**
 * The addon when a server may and can use it (DNS_UDP_BATCH not false, the host an IP literal,
 * the addon loaded here), else null and why not: the one decision of the server and of the dns
 * role's primary (`shareUdpSocket`).
 */
export function usableUdpBatch(
  udpBatch: boolean | undefined,
  host: string,
): { binding: UdpBatchBinding; reason: null } | { binding: null; reason: string } {
  if (udpBatch === false) return { binding: null, reason: "DNS_UDP_BATCH=false" };
  if (isIP(host) === 0) return { binding: null, reason: "DNS_HOST is not an IP address" };
  const loaded = loadUdpBatch();
  return loaded.binding === null ? loaded : { binding: loaded.binding, reason: null };
}

export interface UdpBatchOptions {
  host: string;
  port: number;
  /** Datagrams read by one recvmmsg and answered by one sendmmsg. */
  batch?: number;
  recvBufferSize: number;
  /** A cached answer, computed at once; null: not at hand. */
  answerNow(query: Buffer): Buffer | null;
  /** Any other answer (the query is the handler's own copy); null: no answer. */
  answerLater(query: Buffer): Promise<Buffer | null>;
  /** A socket error (errno as a negative number) or a failed answer: logged, never thrown. */
  onError(error: Error): void;
  /**
   * A bound socket this process inherited (its descriptor number): read it instead of binding one
   * (the dns role's workers all read the socket their primary bound, `shareUdpSocket`).
   */
  fd?: number;
}

export interface UdpBatchSocket {
  port: number;
  stats(): UdpBatchStats;
  /** Stops reading at once; an answer computed after it is dropped. */
  close(): Promise<void>;
}

const DEFAULT_BATCH = 64;

/**
 * A UDP socket of its own (SO_REUSEPORT: each process of the dns role binds one, the kernel
 * spreads the clients over them) read in batches: on each readiness up to `batch` datagrams in one
 * recvmmsg, one call into this function for all of them, the answers at hand sent with one
 * sendmmsg; the others are sent one by one when computed. Buffers are shared with the addon and
 * reused: no object per datagram but the query's view.
 *
 * @example const s = openUdpBatch(binding, { host: "127.0.0.1", port: 53, recvBufferSize: 4 << 20, answerNow, answerLater, onError });
 */
export function openUdpBatch(binding: UdpBatchBinding, opts: UdpBatchOptions): UdpBatchSocket {
  const batch = opts.batch ?? DEFAULT_BATCH;
  const { SLOT, ADDR } = binding;
  const rx = Buffer.allocUnsafeSlow(batch * SLOT);
  const tx = Buffer.allocUnsafeSlow(batch * SLOT);
  const addrs = Buffer.allocUnsafeSlow(batch * ADDR);
  const lensBuf = Buffer.alloc(batch * 4);
  const txLensBuf = Buffer.alloc(batch * 4);
  const lens = new Int32Array(lensBuf.buffer, lensBuf.byteOffset, batch);
  const txLens = new Int32Array(txLensBuf.buffer, txLensBuf.byteOffset, batch);
  let closed = false;
  const failed = (e: unknown) => opts.onError(e instanceof Error ? e : new Error(String(e)));

  const onBatch = (n: number) => {
    if (n < 0) {
      failed(new Error(`udp socket error (errno ${-n})`));
      return;
    }
    for (let i = 0; i < n; i++) {
      const off = i * SLOT;
      const query = rx.subarray(off, off + lens[i]);
      try {
        const hit = opts.answerNow(query);
        if (hit !== null) {
          if (hit.length <= SLOT) txLens[i] = hit.copy(tx, off);
          continue;
        }
        // The slots are reused by the next batch: the query and its sender are copied out.
        const addr = Buffer.from(addrs.subarray(i * ADDR, (i + 1) * ADDR));
        opts.answerLater(Buffer.from(query)).then((answer) => {
          if (answer !== null && !closed) binding.send(handle, answer, addr);
        }, failed);
      } catch (e) {
        failed(e);
      }
    }
  };
  const handle = binding.open(
    opts.fd === undefined ? opts.host : `fd:${opts.fd}`,
    opts.port,
    batch,
    rx,
    addrs,
    lensBuf,
    tx,
    txLensBuf,
    opts.recvBufferSize,
    onBatch,
  );
  const port = binding.port(handle);
  const zero: UdpBatchStats = { received: 0, sent: 0, dropped: 0, errors: 0, batches: 0 };
  let last = zero;
  return {
    port,
    stats: () => (closed ? last : { ...zero, ...binding.stats(handle) }),
    close() {
      if (!closed) {
        last = { ...zero, ...binding.stats(handle) };
        closed = true;
        binding.close(handle);
      }
      // The addon closes the descriptor on the loop's next turn.
      return new Promise((resolve) => setImmediate(resolve));
    },
  };
}

/**
 * The dns role's primary binds the UDP socket once and its workers inherit it (their `fd`): every
 * worker reads the same socket, and a datagram waits for whichever worker is free first, as with
 * NSD's server processes. (A socket per worker, SO_REUSEPORT, left a datagram queued on a worker
 * that was not running while another sat idle.) Null when the addon cannot be used here.
 */
export function shareUdpSocket(
  udpBatch: boolean | undefined,
  host: string,
  port: number,
  recvBufferSize: number,
): { fd: number; close(): void } | null {
  const { binding } = usableUdpBatch(udpBatch, host);
  if (binding === null) return null;
  let fd: number;
  try {
    fd = binding.bind(host, port, recvBufferSize);
  } catch (e) {
    // As node:dgram says it: which address could not be bound, and why.
    throw new Error(`DNS UDP ${isIP(host) === 6 ? `[${host}]` : host}:${port}: ${(e as Error).message}`, {
      cause: e,
    });
  }
  let open = true;
  return {
    fd,
    close() {
      if (open) binding.closeFd(fd);
      open = false;
    },
  };
}
