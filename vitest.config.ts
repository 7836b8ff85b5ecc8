import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  // The shared tables (packages/wire) from their source: tests need no build of the package.
  resolve: {
    alias: [
      {
        find: /^@omniname\/wire\/(.*)$/,
        replacement: fileURLToPath(new URL("./packages/wire/src/$1.ts", import.meta.url)),
      },
    ],
  },
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts", "packages/*/test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    retry: 0,
    pool: "forks",
    // Two test files at a time even on two cores (Vitest's default there is one: cores - 1): most
    // files wait on what they start (anvil chains, servers, kill -9 and restarts), not on the CPU,
    // and files share nothing (their own databases, data directories, ports). The timings:
    // README.md, "Development".
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // Every `omniname start` a test spawns runs the dns role too: a port of the system's choice,
    // so that test files running side by side do not race for DNS_PORT's default (8053).
    env: { DNS_PORT: "0" },
  },
});
