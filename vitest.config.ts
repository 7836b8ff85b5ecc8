import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts", "packages/*/test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    retry: 0,
    pool: "forks",
    // Every `omniname start` a test spawns runs the dns role too: a port of the system's choice,
    // so that test files running side by side do not race for DNS_PORT's default (8053).
    env: { DNS_PORT: "0" },
  },
});
