import { describe, expect, it } from "vitest";
import { isPgUnavailable } from "./pg-unavailable.js";

describe("isPgUnavailable", () => {
  it.each([
    [{ code: "ECONNREFUSED" }, true],
    [new AggregateError([Object.assign(new Error("x"), { code: "ECONNREFUSED" })]), true],
    [{ code: "57P01", message: "terminating connection due to administrator command" }, true],
    [{ code: "08006" }, true],
    [new Error("wrapped", { cause: new Error("Connection terminated unexpectedly") }), true],
    [{ code: "23505", message: "duplicate key" }, false],
    [{ code: "40001", message: "could not serialize access" }, false],
    [{ code: "SQLITE_BUSY" }, false],
    [new TypeError("Cannot read properties of undefined"), false],
    [null, false],
  ])("%#", (e, expected) => {
    expect(isPgUnavailable(e)).toBe(expected);
  });
});
