import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { AppError } from "../domain/errors.js";
import { findFreePortRange, randomPortBase } from "./anvil.js";
import { isPortTaken, onFreePorts } from "./chain-start.js";

function listen(port: number): Promise<Server> {
  const server = createServer();
  return new Promise((resolve, reject) => {
    server.once("error", (e) =>
      reject(new AppError("INTERNAL_ERROR", `cannot listen on ${port}: ${e.message}`)),
    );
    server.listen({ port, host: "127.0.0.1", exclusive: true }, () => resolve(server));
  });
}

describe("onFreePorts", () => {
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
  });

  it("binds past a port another process took between the probe and the bind", async () => {
    const squatter = await listen(0);
    servers.push(squatter);
    const taken = (squatter.address() as AddressInfo).port;
    const tried: number[] = [];
    const mine = await onFreePorts(taken, 1, (port) => {
      tried.push(port);
      return listen(port);
    });
    servers.push(mine);
    const got = (mine.address() as AddressInfo).port;
    expect(tried[0]).toBe(taken);
    expect(got).toBeGreaterThan(taken);
    expect(tried.at(-1)).toBe(got);
  });

  it("gives concurrent probes from one start port ranges that do not overlap (no lockstep)", async () => {
    const start = randomPortBase();
    const bases = await Promise.all([1, 2, 3].map(() => findFreePortRange(6, start)));
    const ports = bases.flatMap((b) => [0, 1, 2, 3, 4, 5].map((i) => b + i));
    expect(new Set(ports).size).toBe(18);
  });

  it("throws any other failure at once, and gives up after its attempts", async () => {
    let calls = 0;
    await expect(
      onFreePorts(40_000, 1, async () => {
        calls++;
        throw new Error("chain answers the wrong id");
      }),
    ).rejects.toThrow(/wrong id/);
    expect(calls).toBe(1);

    calls = 0;
    await expect(
      onFreePorts(
        40_000,
        1,
        async () => {
          calls++;
          throw new AppError("INTERNAL_ERROR", "anvil did not start", {
            cause: new Error("Address already in use (os error 98)"),
          });
        },
        3,
      ),
    ).rejects.toThrow(/did not start/);
    expect(calls).toBe(3);
  });

  it("recognizes a taken port by code, by message (anvil's stderr) and through causes", () => {
    expect(isPortTaken(Object.assign(new Error("listen"), { code: "EADDRINUSE" }))).toBe(true);
    expect(
      isPortTaken(new Error("anvil on port 8550 did not start: Error: Address already in use (os error 98)")),
    ).toBe(true);
    expect(
      isPortTaken(new Error("outer", { cause: new Error("listen EADDRINUSE: address already in use") })),
    ).toBe(true);
    expect(isPortTaken(new Error("connection refused"))).toBe(false);
    expect(isPortTaken(null)).toBe(false);
  });
});
