import { type Static, Type } from "@sinclair/typebox";

/**
 * The single source of truth for configuration: every setting, its environment variable, its
 * default and its validation. `load-config.ts` reads the environment (and an optional JSON file
 * named by OMNINAME_CONFIG) once at start-up.
 *
 * Each entry: [config key, environment variable]. Keys are camelCase, variables UPPER_SNAKE.
 */
export const ConfigSchema = Type.Object({
  port: Type.Integer({ minimum: 0, maximum: 65535, default: 8080, env: "PORT", description: "HTTP port of the API" }),
  host: Type.String({ minLength: 1, default: "127.0.0.1", env: "HOST", description: "Address the API binds to" }),
  dataDir: Type.String({ minLength: 1, default: "./data", env: "DATA_DIR", description: "SQLite file, devnet state, outbox" }),
  databaseUrl: Type.Optional(
    Type.String({
      pattern: "^(postgres(ql)?://|sqlite:|file:)",
      env: "DATABASE_URL",
      description: "Absent: SQLite in DATA_DIR. postgres://… : PostgreSQL",
      secret: true,
    }),
  ),
  logLevel: Type.Union(
    [
      Type.Literal("fatal"),
      Type.Literal("error"),
      Type.Literal("warn"),
      Type.Literal("info"),
      Type.Literal("debug"),
      Type.Literal("trace"),
      Type.Literal("silent"),
    ],
    { default: "info", env: "LOG_LEVEL", description: "pino log level" },
  ),
  demoApiKey: Type.Optional(
    Type.String({
      minLength: 16,
      maxLength: 256,
      env: "OMNINAME_DEMO_API_KEY",
      description: "When set, the API key of the built-in demo project",
      secret: true,
    }),
  ),
  apiKeyPepper: Type.Optional(
    Type.String({
      minLength: 16,
      env: "API_KEY_PEPPER",
      description: "Secret for the keyed hash of API keys; absent: generated once into DATA_DIR/pepper",
      secret: true,
    }),
  ),
  roles: Type.String({
    default: "all",
    env: "OMNINAME_ROLES",
    description: "Comma-separated roles this process runs: all, api, crawler, dns",
  }),
});

export type Config = Static<typeof ConfigSchema>;
