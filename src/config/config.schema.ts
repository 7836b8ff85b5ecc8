import { type Static, Type } from "@sinclair/typebox";
import { CRAWLER_SETTINGS } from "./crawler.schema.js";
import { TRANSPORT_SETTINGS } from "./transports.schema.js";
import { WEBHOOK_SETTINGS } from "./webhooks.schema.js";
import { ENS_OFFCHAIN_SETTINGS } from "./ens-offchain.schema.js";

/**
 * The single source of truth for configuration: every setting, its environment variable, its
 * default and its validation. `load-config.ts` reads the environment (and an optional JSON file
 * named by OMNINAME_CONFIG) once at start-up.
 *
 * Each entry: [config key, environment variable]. Keys are camelCase, variables UPPER_SNAKE.
 * `expected` says in words what a valid value is: the start-up error shows it instead of the
 * validator's own text (a regular expression means nothing to an operator).
 */
/** The roles `omniname start` can run (OMNINAME_ROLES). */
export const ROLES = ["all", "api", "crawler", "dns"] as const;

export const ConfigSchema = Type.Object({
  port: Type.Integer({
    minimum: 0,
    maximum: 65535,
    default: 8080,
    env: "PORT",
    description: "HTTP port of the API",
  }),
  host: Type.String({
    minLength: 1,
    default: "127.0.0.1",
    env: "HOST",
    description: "Address the API binds to",
  }),
  dataDir: Type.String({
    minLength: 1,
    default: "./data",
    env: "DATA_DIR",
    description: "SQLite file, devnet state, outbox",
  }),
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
  demoAccount: Type.Boolean({
    default: true,
    env: "DEMO_ACCOUNT",
    description:
      "With the embedded defaults (no DATABASE_URL, no RPC_URL_*): a demo console account demo@omniname.local and a one-time sign-in link in the start banner; false: none",
  }),
  apiKeyPepper: Type.Optional(
    Type.String({
      minLength: 16,
      env: "API_KEY_PEPPER",
      description: "Secret for the keyed hash of API keys; absent: generated once into DATA_DIR/pepper",
      secret: true,
    }),
  ),
  roles: Type.String({
    pattern: `^ *(${ROLES.join("|")}) *(, *(${ROLES.join("|")}) *)*$`,
    default: "all",
    env: "OMNINAME_ROLES",
    description: `Comma-separated roles this process runs: ${ROLES.join(", ")}`,
    expected: `a comma-separated list of ${ROLES.join(", ")}`,
  }),
  // --- crawler (docs/crawler.md) ---
  ...CRAWLER_SETTINGS,
  // --- scoring and abuse signals (docs/scoring.md) ---
  geoCountryHeader: Type.String({
    default: "",
    env: "GEO_COUNTRY_HEADER",
    description:
      "Trusted request header with the caller's ISO country code (e.g. CF-IPCountry); empty: no geography",
  }),
  geoBlockedWordsFile: Type.Optional(
    Type.String({
      minLength: 1,
      env: "GEO_BLOCKED_WORDS_FILE",
      description: 'JSON { "CC": ["word", …] }: names containing a word are not served to callers from CC',
    }),
  ),
  csamTermsFile: Type.Optional(
    Type.String({
      minLength: 1,
      env: "CSAM_TERMS_FILE",
      description: "CSAM screening terms, one a line: a name containing one is never served",
    }),
  ),
  spamBlocklistFile: Type.Optional(
    Type.String({
      minLength: 1,
      env: "SPAM_BLOCKLIST_FILE",
      description: "Names (alice.wallet) and TLDs (*.tld), one a line, flagged as spam",
    }),
  ),
  icannTldsFile: Type.Optional(
    Type.String({
      minLength: 1,
      env: "ICANN_TLDS_FILE",
      description:
        "IANA TLD list (tlds-alpha-by-domain.txt); absent: DATA_DIR/iana-tlds.txt if refreshed, else the shipped list",
    }),
  ),
  // --- accounts, console, limits (docs/console-api.md, docs/operations.md) ---
  publicUrl: Type.Optional(
    Type.String({
      // Scheme, host and optional port; one trailing slash is tolerated and dropped (load-config).
      pattern: "^[hH][tT][tT][pP][sS]?://[^/?#@\\s]+/?$",
      env: "PUBLIC_URL",
      description:
        "Origin the console is served from: links in e-mails, the CSRF Origin check, Secure cookies on https. Absent: http://HOST:PORT as bound (0.0.0.0 → 127.0.0.1, :: → localhost)",
      expected:
        "an http:// or https:// origin such as https://omniname.example.com or http://127.0.0.1:8080 (no path, query or fragment)",
    }),
  ),
  smtpUrl: Type.Optional(
    Type.String({
      pattern: "^smtps?://",
      env: "SMTP_URL",
      description: "smtp(s)://user:pass@host:port for outgoing mail; absent: mails go to DATA_DIR/outbox/",
      secret: true,
    }),
  ),
  mailFrom: Type.String({
    minLength: 3,
    default: "omniname <no-reply@omniname.invalid>",
    env: "MAIL_FROM",
    description: "Sender of account e-mails",
  }),
  trustedProxy: Type.String({
    default: "",
    env: "TRUSTED_PROXY",
    description:
      "Comma-separated IPs/CIDRs of reverse proxies whose X-Forwarded-For is believed; empty: the socket address",
  }),
  redisUrl: Type.Optional(
    Type.String({
      pattern: "^rediss?://",
      env: "REDIS_URL",
      description: "Redis for rate limits and quotas shared by several API processes; absent: in process",
      secret: true,
    }),
  ),
  redisKeyPrefix: Type.String({
    pattern: "^[A-Za-z0-9_.-]{1,64}$",
    default: "omniname",
    env: "REDIS_KEY_PREFIX",
    description:
      "Prefix of the limit counters' keys in Redis (several deployments or test runs on one Redis)",
  }),
  plans: Type.Record(
    Type.String({ pattern: "^[a-z][a-z0-9_-]{0,31}$" }),
    Type.Object({
      rps: Type.Integer({ minimum: 1, description: "requests per second per API key" }),
      rateWindowS: Type.Optional(
        Type.Integer({ minimum: 1, maximum: 3600, description: "window of the rate, seconds (default 1)" }),
      ),
      monthlyQuota: Type.Integer({
        minimum: 1,
        description: "requests per calendar month (UTC) per project",
      }),
      maxProjects: Type.Integer({ minimum: 1, description: "projects an account may own" }),
      maxKeys: Type.Integer({ minimum: 1, description: "live API keys per project" }),
      maxMembers: Type.Integer({ minimum: 1, description: "members and pending invitations per project" }),
    }),
    {
      default: {
        free: { rps: 10, monthlyQuota: 100_000, maxProjects: 3, maxKeys: 5, maxMembers: 5 },
        pro: { rps: 100, monthlyQuota: 5_000_000, maxProjects: 20, maxKeys: 50, maxMembers: 25 },
        enterprise: {
          rps: 1_000,
          monthlyQuota: 100_000_000,
          maxProjects: 100,
          maxKeys: 500,
          maxMembers: 200,
        },
        // The built-in demo project's plan: local evaluation, loops and benchmarks against the demo key.
        demo: { rps: 100_000, monthlyQuota: 1_000_000_000, maxProjects: 1, maxKeys: 10, maxMembers: 10 },
        internal: {
          rps: 1_000_000,
          monthlyQuota: 1_000_000_000_000,
          maxProjects: 1_000,
          maxKeys: 1_000,
          maxMembers: 1_000,
        },
      },
      env: "PLANS",
      description: "Plans as JSON: { name: { rps, monthlyQuota, maxProjects, maxKeys, maxMembers } }",
    },
  ),
  defaultPlan: Type.String({
    default: "free",
    env: "DEFAULT_PLAN",
    description: "Plan of new projects (a key of PLANS)",
  }),
  sessionTtlHours: Type.Integer({
    minimum: 1,
    maximum: 24 * 90,
    default: 24 * 7,
    env: "SESSION_TTL_HOURS",
    description: "Absolute lifetime of a console session",
  }),
  sessionIdleHours: Type.Integer({
    minimum: 1,
    maximum: 24 * 90,
    default: 24,
    env: "SESSION_IDLE_HOURS",
    description: "A console session unused this long expires",
  }),
  auditRetentionDays: Type.Integer({
    minimum: 1,
    maximum: 36_500,
    default: 365,
    env: "AUDIT_RETENTION_DAYS",
    description:
      "How long the audit log keeps an entry (changes made through the console and the CLI); older entries are deleted every hour",
  }),
  inviteTtlHours: Type.Integer({
    minimum: 1,
    maximum: 24 * 90,
    default: 24 * 7,
    env: "INVITE_TTL_HOURS",
    description: "Lifetime of an invitation link",
  }),
  usageFlushMs: Type.Integer({
    minimum: 100,
    maximum: 3_600_000,
    default: 10_000,
    env: "USAGE_FLUSH_MS",
    description: "How often usage counters kept in memory are written to the store, in one batch",
  }),
  usageAlerts: Type.Boolean({
    default: true,
    env: "USAGE_ALERTS",
    description:
      "E-mail a project's owners and admins at 80 % and 100 % of the monthly quota and when a key keeps hitting its rate limit (at most once a day each); false: no alerts",
  }),
  alertRateRefusals: Type.Integer({
    minimum: 1,
    maximum: 1_000_000,
    default: 100,
    env: "ALERT_RATE_REFUSALS",
    description:
      'A key "keeps hitting" its rate limit when refused this many times within ALERT_RATE_WINDOW_S',
  }),
  alertRateWindowS: Type.Integer({
    minimum: 1,
    maximum: 86_400,
    default: 600,
    env: "ALERT_RATE_WINDOW_S",
    description: "The window, in seconds, over which a key's rate-limit refusals are counted for an alert",
  }),
  // --- Change feed (docs/api.md, "Change feed") ---
  changesRetentionDays: Type.Number({
    minimum: 0.001,
    maximum: 365,
    default: 7,
    env: "CHANGES_RETENTION_DAYS",
    description: "How long the change log keeps events: a feed cursor older than this has expired",
  }),
  changesHeartbeatMs: Type.Integer({
    minimum: 50,
    maximum: 300_000,
    default: 15_000,
    env: "CHANGES_HEARTBEAT_MS",
    description: "Interval of the change feed's heartbeat comments on an idle stream",
  }),
  changesMaxClients: Type.Integer({
    minimum: 1,
    maximum: 100_000,
    default: 2_000,
    env: "CHANGES_MAX_CLIENTS",
    description: "Concurrent change feed streams per API process; one more is refused (503)",
  }),
  changesStallMs: Type.Integer({
    minimum: 100,
    maximum: 600_000,
    default: 30_000,
    env: "CHANGES_STALL_MS",
    description: "A feed client that reads nothing this long while events wait is disconnected",
  }),
  // --- Webhooks (docs/console-api.md, "Webhooks") ---
  ...WEBHOOK_SETTINGS,
  // --- ENS names not on chain (docs/ens-offchain.md) ---
  ...ENS_OFFCHAIN_SETTINGS,
  // --- DNS (docs/dns.md) ---
  dnsHost: Type.String({
    minLength: 1,
    default: "127.0.0.1",
    env: "DNS_HOST",
    description: "Address the DNS role binds to (UDP and TCP)",
  }),
  dnsPort: Type.Integer({
    minimum: 0,
    maximum: 65535,
    default: 8053,
    env: "DNS_PORT",
    description:
      "Port of the DNS role, UDP and TCP (unprivileged by default, not 5353: mDNS; 53 in production)",
  }),
  dnsNameServers: Type.String({
    pattern: "^ *[A-Za-z0-9.-]+ *(, *[A-Za-z0-9.-]+ *)*$",
    default: "ns1.omniname.test,ns2.omniname.test",
    env: "DNS_NAME_SERVERS",
    description: "Comma-separated host names of the zones' NS records; the first is the SOA MNAME",
    expected: "a comma-separated list of host names",
  }),
  dnsHostmaster: Type.String({
    pattern: "^[A-Za-z0-9.-]+$",
    default: "hostmaster.omniname.test",
    env: "DNS_HOSTMASTER",
    description: "SOA RNAME (the zone contact's mailbox, with its @ written as a dot)",
  }),
  dnsTcpIdleMs: Type.Integer({
    minimum: 100,
    maximum: 600_000,
    default: 10_000,
    env: "DNS_TCP_IDLE_MS",
    description: "A DNS TCP connection idle this long is closed (RFC 7766)",
  }),
  dnsTcpMaxClients: Type.Integer({
    minimum: 1,
    maximum: 100_000,
    default: 256,
    env: "DNS_TCP_MAX_CLIENTS",
    description: "Concurrent DNS TCP connections; one more is closed at once",
  }),
  dnsTsigKeys: Type.Optional(
    Type.String({
      pattern:
        "^ *[A-Za-z0-9_.-]+:hmac-sha256:[A-Za-z0-9+/]+={0,2} *(, *[A-Za-z0-9_.-]+:hmac-sha256:[A-Za-z0-9+/]+={0,2} *)*$",
      maxLength: 4096,
      env: "DNS_TSIG_KEYS",
      description:
        "TSIG keys allowed to transfer the zones (AXFR, IXFR), `name:hmac-sha256:base64secret`, comma-separated; absent: transfers refused",
      expected: "a comma-separated list of name:hmac-sha256:base64secret",
      secret: true,
    }),
  ),
  dnsNotify: Type.String({
    pattern:
      "^( *([A-Za-z0-9.-]+|\\[[0-9A-Fa-f:.]+\\]):[0-9]{1,5} *(, *([A-Za-z0-9.-]+|\\[[0-9A-Fa-f:.]+\\]):[0-9]{1,5} *)*)?$",
    default: "",
    env: "DNS_NOTIFY",
    description:
      "Secondaries sent a NOTIFY when a zone's serial changes, `host:port`, comma-separated (signed with the first DNS_TSIG_KEYS key)",
    expected: "a comma-separated list of host:port",
  }),
  // --- TLS and the dns role's processes (docs/dns.md, docs/operations.md) ---
  ...TRANSPORT_SETTINGS,
});

/** The parsed configuration: `publicUrl` is always set (derived from HOST and PORT when absent). */
export type Config = Omit<Static<typeof ConfigSchema>, "publicUrl"> & { publicUrl: string };
