import { Writable } from "node:stream";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { lazyRequestLogger } from "./lazy-request-logger.js";

function captured() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(JSON.parse(String(chunk)));
      cb();
    },
  });
  const logger = pino({ level: "info", redact: { paths: ["secret"], censor: "[redacted]" } }, sink);
  return { logger, lines };
}

describe("lazyRequestLogger", () => {
  it("makes the child only when the request logs, with its bindings and the parent's redaction", () => {
    const { logger, lines } = captured();
    let children = 0;
    const child = logger.child.bind(logger);
    logger.child = ((b: pino.Bindings, o?: pino.ChildLoggerOptions) => {
      children++;
      return child(b, o);
    }) as unknown as typeof logger.child;
    const log = lazyRequestLogger(logger, { reqId: "req-1" }, {});
    expect(children).toBe(0);
    expect(log.level).toBe("info");
    log.debug("below the level");
    log.trace("below the level too");
    // Below the level: no child is made for it.
    expect(children).toBe(0);
    log.warn({ secret: "hunter2" }, "something odd");
    log.error("failed");
    expect(children).toBe(1);
    expect(lines).toHaveLength(2);
    expect(lines).toMatchObject([
      { reqId: "req-1", secret: "[redacted]", msg: "something odd" },
      { reqId: "req-1", msg: "failed" },
    ]);
  });
});

describe("lazyRequestLogger with a route's own level", () => {
  it("logs at the route's level, below the parent's", () => {
    const { logger, lines } = captured();
    const log = lazyRequestLogger(logger, { reqId: "req-2" }, { level: "debug" });
    log.trace("below the route's level");
    log.debug("at the route's level");
    expect(lines).toMatchObject([{ reqId: "req-2", msg: "at the route's level" }]);
    expect(lines).toHaveLength(1);
  });
});
