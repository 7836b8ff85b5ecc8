import type { FastifyBaseLogger } from "fastify";

type Bindings = Record<string, unknown>;
type Level = "info" | "error" | "debug" | "fatal" | "warn" | "trace" | "silent";

/**
 * A request's logger, made when the request first logs. Fastify gives every request a child
 * logger bound to its id; with redaction on (every logger here has it), pino runs the redaction
 * over the bindings each time it makes one, about a twentieth of a resolve's CPU, for a logger that
 * most requests never use (request logging is off: only errors and warnings log).
 *
 * One object per request, its methods on the prototype: under load a request's objects can outlive
 * a young-generation collection (the request is still in flight), so every object allocated per
 * request is one that may be promoted and collected only by a full GC. (The closures this used to
 * make per request were the largest share of what the API promoted, measured with the heap
 * sampler's objects-collected-by-major-GC mode.)
 */
class LazyRequestLogger {
  private real: FastifyBaseLogger | null = null;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly opts: object,
  ) {}

  private get(): FastifyBaseLogger {
    this.real ??= this.parent.child(this.bindings, this.opts);
    return this.real;
  }

  private at(level: Level, args: unknown[]): void {
    // A call below the level makes no child: a refused request logs at debug, and with redaction
    // on, making the child cost more than the rest of answering a 4xx.
    if (this.real === null && !this.enabled(level)) return;
    (this.get()[level] as (...a: unknown[]) => void)(...args);
  }

  /** Whether the child would log at `level` (its own level if the route sets one, else the parent's). */
  private enabled(level: Level): boolean {
    const parent = this.parent as FastifyBaseLogger & {
      isLevelEnabled?: (l: string) => boolean;
      levels?: { values: Record<string, number> };
    };
    const own = (this.opts as { level?: string }).level;
    const values = parent.levels?.values;
    if (own !== undefined && values?.[own] !== undefined && values[level] !== undefined)
      return values[level] >= values[own];
    if (own === undefined && typeof parent.isLevelEnabled === "function") return parent.isLevelEnabled(level);
    return true;
  }

  get level(): string {
    return this.real?.level ?? this.parent.level;
  }

  set level(value: string) {
    this.get().level = value;
  }

  info(...args: unknown[]): void {
    this.at("info", args);
  }
  error(...args: unknown[]): void {
    this.at("error", args);
  }
  debug(...args: unknown[]): void {
    this.at("debug", args);
  }
  fatal(...args: unknown[]): void {
    this.at("fatal", args);
  }
  warn(...args: unknown[]): void {
    this.at("warn", args);
  }
  trace(...args: unknown[]): void {
    this.at("trace", args);
  }
  silent(...args: unknown[]): void {
    this.at("silent", args);
  }
  child(bindings: Bindings, opts?: object): FastifyBaseLogger {
    return this.get().child(bindings, opts);
  }
}

/**
 * @example
 * Fastify({ loggerInstance, childLoggerFactory: (logger, bindings, opts) => lazyRequestLogger(logger, bindings, opts) })
 */
export function lazyRequestLogger(
  parent: FastifyBaseLogger,
  bindings: Bindings,
  opts: object,
): FastifyBaseLogger {
  return new LazyRequestLogger(parent, bindings, opts) as unknown as FastifyBaseLogger;
}
