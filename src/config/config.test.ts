import { describe, expect, it } from "vitest";
import { loadConfig } from "./load-config.js";
import { redactConfig, redactUrl } from "./redact.js";

describe("loadConfig", () => {
  it("prefixes Redis keys with omniname unless REDIS_KEY_PREFIX says otherwise", () => {
    expect(loadConfig({}).redisKeyPrefix).toBe("omniname");
    expect(loadConfig({ REDIS_KEY_PREFIX: "staging-2" }).redisKeyPrefix).toBe("staging-2");
  });

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
    [{ REDIS_KEY_PREFIX: "two words" }, "REDIS_KEY_PREFIX"],
    [{ REDIS_KEY_PREFIX: "a:b" }, "REDIS_KEY_PREFIX"],
    [{ TLS_CERT_FILE: "/etc/omniname/cert.pem" }, "TLS_KEY_FILE"],
    [{ TLS_KEY_FILE: "/etc/omniname/key.pem" }, "TLS_CERT_FILE"],
    [{ DNS_TLS_PORT: "70000" }, "DNS_TLS_PORT"],
    [{ DNS_WORKERS: "-1" }, "DNS_WORKERS"],
    [{ DNS_WORKERS: "many" }, "DNS_WORKERS"],
    [{ TLS_HANDSHAKE_TIMEOUT_MS: "0" }, "TLS_HANDSHAKE_TIMEOUT_MS"],
  ])("stops on a bad value and names the variable: %j", (env, name) => {
    expect(() => loadConfig(env)).toThrow(new RegExp(`Invalid configuration ${name}`));
  });

  it.each([
    [{}, "http://127.0.0.1:8080"],
    [{ PORT: "18080" }, "http://127.0.0.1:18080"],
    [{ HOST: "0.0.0.0", PORT: "18080" }, "http://127.0.0.1:18080"],
    [{ HOST: "::", PORT: "18080" }, "http://localhost:18080"],
    [{ HOST: "::1", PORT: "18080" }, "http://[::1]:18080"],
    [{ HOST: "omniname.internal", PORT: "80" }, "http://omniname.internal"],
    [{ PORT: "18080", PUBLIC_URL: "https://console.example.com" }, "https://console.example.com"],
    // The server speaks TLS itself: https.
    [{ PORT: "8443", TLS_CERT_FILE: "c.pem", TLS_KEY_FILE: "k.pem" }, "https://127.0.0.1:8443"],
  ])("derives PUBLIC_URL from HOST and PORT unless it is set: %j", (env, url) => {
    expect(loadConfig(env).publicUrl).toBe(url);
  });

  it.each([
    ["http://127.0.0.1:18282/", "http://127.0.0.1:18282"],
    ["http://127.0.0.1:18282", "http://127.0.0.1:18282"],
    ["HTTPS://Console.Example.COM:443/", "https://console.example.com"],
    ["http://[::1]:8080/", "http://[::1]:8080"],
  ])("accepts and normalises PUBLIC_URL=%s", (raw, url) => {
    expect(loadConfig({ PUBLIC_URL: raw }).publicUrl).toBe(url);
  });

  it.each([
    "ftp://console.example.com",
    "console.example.com",
    "http://console.example.com/console",
    "http://console.example.com//",
    "http://console.example.com/?next=1",
    "http://console.example.com?next=1",
    "http://console.example.com#top",
    "http://user:pass@console.example.com",
    "http://console.example.com:99999",
  ])("refuses PUBLIC_URL=%s with a message that says what a valid value is", (raw) => {
    expect(() => loadConfig({ PUBLIC_URL: raw })).toThrow(
      "Invalid configuration PUBLIC_URL: must be an http:// or https:// origin such as https://omniname.example.com or http://127.0.0.1:8080 (no path, query or fragment)",
    );
  });

  it.each(["all", "api", "crawler", "dns", "api,crawler", " api , crawler ", "all,api", "api,dns"])(
    "accepts OMNINAME_ROLES=%j",
    (roles) => {
      expect(loadConfig({ OMNINAME_ROLES: roles }).roles).toBe(roles);
    },
  );

  it.each(["dnss", "crawlr", "api,dns,", "api,,crawler", "api;crawler", "API", "*"])(
    "refuses OMNINAME_ROLES=%j, naming the variable and the valid roles",
    (roles) => {
      expect(() => loadConfig({ OMNINAME_ROLES: roles })).toThrow(
        `Invalid configuration OMNINAME_ROLES: must be a comma-separated list of all, api, crawler, dns; got ${JSON.stringify(roles)}`,
      );
    },
  );

  it("never echoes a secret's value in the error", () => {
    expect(() => loadConfig({ DATABASE_URL: "mysql://app:hunter2@db/x" })).toThrow(/DATABASE_URL/);
    expect(() => loadConfig({ DATABASE_URL: "mysql://app:hunter2@db/x" })).not.toThrow(/hunter2/);
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
    // Nothing to hide: the value is logged as written (the console's origin has no trailing slash).
    ["http://127.0.0.1:8545", "http://127.0.0.1:8545"],
    ["http://127.0.0.1:8080/", "http://127.0.0.1:8080/"],
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
