import { describe, expect, it } from "vitest";
import { isSqliteUnavailable } from "./sqlite-unavailable.js";

describe("isSqliteUnavailable", () => {
  it.each([
    [{ code: "SQLITE_BUSY" }, true],
    [{ code: "SQLITE_IOERR_WRITE" }, true],
    [new TypeError("The database connection is not open"), true],
    [
      new Error("wrapped", {
        cause: Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" }),
      }),
      true,
    ],
    [{ code: "SQLITE_CONSTRAINT_UNIQUE", message: "UNIQUE constraint failed" }, false],
    [{ code: "ECONNREFUSED" }, false],
    [new TypeError("Cannot read properties of undefined"), false],
    [null, false],
  ])("%#", (e, expected) => {
    expect(isSqliteUnavailable(e)).toBe(expected);
  });
});
