import { describe, expect, it } from "vitest";
import { loadConfig } from "./load-config.js";
import { redactConfig, redactUrl } from "./redact.js";

describe("loadConfig", () => {
  it("applies the defaults", () => {
    const c = loadConfig({});
    expect([c.port, c.host, c.dataDir, c.logLevel, c.databaseUrl]).toEqual([
      8080,
      "127.0.0.1",
      "./data",
      "info",
      undefined,
    ]);
  });

  it("reads and coerces environment variables", () => {
    const c = loadConfig({
      PORT: "9000",
      HOST: "0.0.0.0",
      DATABASE_URL: "postgres://u@h/db",
      LOG_LEVEL: "debug",
    });
    expect([c.port, c.host, c.databaseUrl, c.logLevel]).toEqual([
      9000,
      "0.0.0.0",
      "postgres://u@h/db",
      "debug",
    ]);
  });

  it.each([
    [{ PORT: "eighty" }, "PORT"],
    [{ PORT: "70000" }, "PORT"],
    [{ LOG_LEVEL: "loud" }, "LOG_LEVEL"],
    [{ DATABASE_URL: "mysql://x" }, "DATABASE_URL"],
    [{ OMNINAME_DEMO_API_KEY: "short" }, "OMNINAME_DEMO_API_KEY"],
  ])("stops on a bad value and names the variable: %j", (env, name) => {
    expect(() => loadConfig(env)).toThrow(new RegExp(`Invalid configuration ${name}`));
  });

  it("refuses an unreadable config file, naming it", () => {
    expect(() => loadConfig({ OMNINAME_CONFIG: "/nonexistent/omniname.json" })).toThrow(/OMNINAME_CONFIG/);
  });
});

describe("redaction", () => {
  it.each([
    ["https://user:pass@rpc.example.com/", "https://***:***@rpc.example.com/"],
    ["https://token@rpc.example.com/", "https://***@rpc.example.com/"],
    ["https://mainnet.infura.io/v3/0123456789abcdef0123456789abcdef", "https://mainnet.infura.io/v3/***"],
    ["https://rpc.example.com/?apikey=secret", "https://rpc.example.com/?apikey=***"],
    ["http://127.0.0.1:8545", "http://127.0.0.1:8545/"],
    ["not a url", "***"],
  ])("hides the credentials of %s", (url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });

  it("hides secrets and credentials in URLs when config is logged", () => {
    const out = redactConfig({
      port: 1,
      databaseUrl: "postgres://app:hunter2@db/omniname",
      apiKeyPepper: "pepper-pepper-pepper",
      demoApiKey: "on_12345678_abcdefabcdefabcdefabcdefabcdefab",
    });
    expect(JSON.stringify(out)).not.toMatch(/hunter2|pepper-pepper|abcdefabcdef/);
    expect(out.port).toBe(1);
  });
});
