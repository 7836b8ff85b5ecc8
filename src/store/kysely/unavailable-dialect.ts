import type {
  CompiledQuery,
  DatabaseConnection,
  Dialect,
  Driver,
  QueryCompiler,
  QueryResult,
  TransactionSettings,
} from "kysely";
import { AppError, isAppError } from "../../domain/errors.js";

/** A backend's reading of its driver's errors: true when the database cannot be reached now. */
export type UnavailableTest = (e: unknown) => boolean;

/** `e` as the store throws it: STORE_UNAVAILABLE (the original as its cause) when `isUnavailable` says so. */
export function storeError(e: unknown, isUnavailable: UnavailableTest): unknown {
  // Already the store's (or the caller's own) answer: a STORE_UNAVAILABLE is not wrapped twice.
  if (isAppError(e) || !isUnavailable(e)) return e;
  return new AppError("STORE_UNAVAILABLE", undefined, { cause: e, retryable: true });
}

/**
 * `fn` with its failures read by the backend, for the paths that use the driver's own handle
 * rather than Kysely's (a COPY, a dedicated connection): they leave the store as the dialect's do.
 */
export async function withStoreErrors<T>(isUnavailable: UnavailableTest, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw storeError(e, isUnavailable);
  }
}

/** The pages of a scan on the driver's own handle, its failures read by the backend (as above). */
export async function* pagesWithStoreErrors<T>(
  isUnavailable: UnavailableTest,
  pages: AsyncIterable<T> | Iterable<T>,
): AsyncGenerator<T> {
  try {
    yield* pages;
  } catch (e) {
    throw storeError(e, isUnavailable);
  }
}

/** The driver error under a STORE_UNAVAILABLE the store threw (or `e` itself): its `code` for retries. */
export function driverError(e: unknown): { code?: unknown; message?: unknown } {
  const err = e as { code?: unknown; cause?: unknown } | null;
  if (err?.code === "STORE_UNAVAILABLE" && err.cause) return err.cause as { code?: unknown };
  return (err ?? {}) as { code?: unknown };
}

/** A connection whose failures are read by the backend (`storeError`). */
class MappedConnection implements DatabaseConnection {
  constructor(
    readonly inner: DatabaseConnection,
    private readonly isUnavailable: UnavailableTest,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    try {
      return await this.inner.executeQuery<R>(query);
    } catch (e) {
      throw storeError(e, this.isUnavailable);
    }
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    try {
      yield* this.inner.streamQuery<R>(query, chunkSize);
    } catch (e) {
      throw storeError(e, this.isUnavailable);
    }
  }
}

/** The driver with every failure (connecting, a query, a transaction's begin or end) read by the backend. */
class MappedDriver implements Driver {
  constructor(
    private readonly inner: Driver,
    private readonly isUnavailable: UnavailableTest,
  ) {
    // Kysely asks whether the driver has savepoints: as the wrapped one.
    const self = this as Driver;
    if (!inner.savepoint) self.savepoint = undefined;
    if (!inner.rollbackToSavepoint) self.rollbackToSavepoint = undefined;
    if (!inner.releaseSavepoint) self.releaseSavepoint = undefined;
  }

  private async run<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      throw storeError(e, this.isUnavailable);
    }
  }

  init(): Promise<void> {
    return this.run(() => this.inner.init());
  }
  async acquireConnection(): Promise<DatabaseConnection> {
    return new MappedConnection(await this.run(() => this.inner.acquireConnection()), this.isUnavailable);
  }
  beginTransaction(c: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.run(() => this.inner.beginTransaction(unwrap(c), settings));
  }
  commitTransaction(c: DatabaseConnection): Promise<void> {
    return this.run(() => this.inner.commitTransaction(unwrap(c)));
  }
  rollbackTransaction(c: DatabaseConnection): Promise<void> {
    return this.run(() => this.inner.rollbackTransaction(unwrap(c)));
  }
  savepoint(c: DatabaseConnection, name: string, compile: QueryCompiler["compileQuery"]): Promise<void> {
    return this.run(() => this.inner.savepoint!(unwrap(c), name, compile));
  }
  rollbackToSavepoint(
    c: DatabaseConnection,
    name: string,
    compile: QueryCompiler["compileQuery"],
  ): Promise<void> {
    return this.run(() => this.inner.rollbackToSavepoint!(unwrap(c), name, compile));
  }
  releaseSavepoint(
    c: DatabaseConnection,
    name: string,
    compile: QueryCompiler["compileQuery"],
  ): Promise<void> {
    return this.run(() => this.inner.releaseSavepoint!(unwrap(c), name, compile));
  }
  releaseConnection(c: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection(unwrap(c));
  }
  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

function unwrap(c: DatabaseConnection): DatabaseConnection {
  return c instanceof MappedConnection ? c.inner : c;
}

/** A dialect whose driver the store closes itself (`close`): see unavailableDialect. */
export interface ClosableDialect extends Dialect {
  /**
   * Closes the driver's connections (a pool ended, a file closed) without marking the Kysely
   * instance destroyed: a query after it fails in the driver, as a database gone away does, and
   * leaves the store as STORE_UNAVAILABLE (a request still in flight as the process stops).
   */
  close(): Promise<void>;
}

/**
 * `dialect` with its driver's failures read by the backend that owns it: an error that means the
 * database cannot be reached now (`isUnavailable`, the backend's own knowledge of its driver)
 * leaves the store as AppError STORE_UNAVAILABLE (503 at the edges, the original as its cause);
 * every other error leaves unchanged. Every Kysely path of the store goes through it: the parts,
 * the accounts' tables, transactions and migrations.
 */
export function unavailableDialect(dialect: Dialect, isUnavailable: UnavailableTest): ClosableDialect {
  const drivers: Driver[] = [];
  return {
    close: async () => {
      for (const d of drivers.splice(0)) await d.destroy();
    },
    createDriver: () => {
      const driver = dialect.createDriver();
      drivers.push(driver);
      return new MappedDriver(driver, isUnavailable);
    },
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createAdapter: () => dialect.createAdapter(),
    createIntrospector: (db) => dialect.createIntrospector(db),
  };
}
