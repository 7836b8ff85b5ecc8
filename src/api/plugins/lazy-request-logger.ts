import type { FastifyBaseLogger } from "fastify";

type Bindings = Record<string, unknown>;
type LogFn = FastifyBaseLogger["info"];

/**
 * A request's logger, made when the request first logs. Fastify gives every request a child
 * logger bound to its id; with redaction on (every logger here has it), pino runs the redaction
 * over the bindings each time it makes one, about a twentieth of a resolve's CPU, for a logger that
 * most requests never use (request logging is off: only errors and warnings log).
 *
 * @example
 * Fastify({ loggerInstance, childLoggerFactory: (logger, bindings, opts) => lazyRequestLogger(logger, bindings, opts) })
 */
export function lazyRequestLogger(
  parent: FastifyBaseLogger,
  bindings: Bindings,
  opts: object,
): FastifyBaseLogger {
  let real: FastifyBaseLogger | null = null;
  const get = () => {
    real ??= parent.child(bindings, opts);
    return real;
  };
  const at =
    (level: "info" | "error" | "debug" | "fatal" | "warn" | "trace" | "silent"): LogFn =>
    (...args: unknown[]) =>
      (get()[level] as (...a: unknown[]) => void)(...args);
  return {
    get level() {
      return real?.level ?? parent.level;
    },
    set level(value: string) {
      get().level = value;
    },
    info: at("info"),
    error: at("error"),
    debug: at("debug"),
    fatal: at("fatal"),
    warn: at("warn"),
    trace: at("trace"),
    silent: at("silent"),
    child: (b, o) => get().child(b, o),
  };
}
