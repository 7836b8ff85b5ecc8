import { Type } from "@sinclair/typebox";

/**
 * TypeBox schemas of the console API's answers (the `data` of `{ result: true, data }`). The web
 * console imports their static types through `console.types.ts` (type-only: nothing here runs in
 * the browser), and `test/console/answers.test.ts` checks real answers against them, so a service
 * that changes its answer without changing its schema fails a test.
 *
 * This module imports only TypeBox: the web app's compiler reads it with its own settings.
 */

const IsoDate = Type.String({ format: "date-time" });
const NullableIso = Type.Union([IsoDate, Type.Null()]);
/** A key's scope of one kind; null: no limit. */
const NullableList = Type.Union([Type.Array(Type.String()), Type.Null()]);

export const RoleValue = Type.Union([
  Type.Literal("owner"),
  Type.Literal("admin"),
  Type.Literal("developer"),
  Type.Literal("viewer"),
]);
export const NetworkValue = Type.Union([
  Type.Literal("ETHEREUM"),
  Type.Literal("POLYGON"),
  Type.Literal("BSC"),
  Type.Literal("AURORA"),
  Type.Literal("SOLANA"),
]);
export const ProviderValue = Type.Union([
  Type.Literal("NAMESPACE_A"),
  Type.Literal("NAMESPACE_B"),
  Type.Literal("NAMESPACE_C"),
  Type.Literal("NAMESPACE_D"),
]);

export const ErrorAnswer = Type.Object({
  result: Type.Literal(false),
  error: Type.Object({
    code: Type.String({ description: "Stable code; docs/errors.md" }),
    message: Type.String({ description: "A sentence for a person" }),
  }),
});

/** An account as the console sees it (never the password hash). `createdAt` is epoch ms. */
export const AccountAnswer = Type.Object({
  id: Type.Number(),
  email: Type.String(),
  fullName: Type.String(),
  emailVerified: Type.Boolean(),
  hasPassword: Type.Boolean({
    description:
      "False while the account signs in only by a link (the demo account before it sets a password)",
  }),
  createdAt: Type.Number({ description: "Milliseconds since the epoch" }),
});

export const SessionAnswer = Type.Object({ account: AccountAnswer, csrfToken: Type.String() });
/** POST /auth/login when the account has two-factor sign-in: the second step names this token. */
export const TwoFactorChallengeAnswer = Type.Object({
  twoFactorRequired: Type.Literal(true),
  challengeToken: Type.String(),
});
export const LoginAnswer = Type.Union([SessionAnswer, TwoFactorChallengeAnswer]);
export const TwoFactorStatusAnswer = Type.Object({
  enabled: Type.Boolean(),
  pending: Type.Boolean({ description: "A secret waits for its first code" }),
  recoveryCodesLeft: Type.Number(),
});
export const TwoFactorSetupAnswer = Type.Object({
  secret: Type.String({ description: "Base32, for typing into the app; shown only until confirmed" }),
  otpauthUri: Type.String(),
  qrCode: Type.String({ description: "The URI as a QR code: a data: URI of an SVG image" }),
});
export const RecoveryCodesAnswer = Type.Object({ recoveryCodes: Type.Array(Type.String()) });
export const TwoFactorDisabledAnswer = Type.Object({ disabled: Type.Literal(true) });
export const TwoFactorRuleAnswer = Type.Object({ required: Type.Boolean() });
export const CsrfAnswer = Type.Object({ csrfToken: Type.String() });
/** GET /session: the account or null (signed out), and the token to write with. */
export const SessionProbeAnswer = Type.Object({
  account: Type.Union([AccountAnswer, Type.Null()]),
  csrfToken: Type.String(),
});
export const RegisterAnswer = Type.Object({ account: AccountAnswer, message: Type.String() });
export const VerifyAnswer = Type.Object({ account: AccountAnswer });
export const AcceptedAnswer = Type.Object({ accepted: Type.Literal(true), message: Type.String() });
export const SignedOutAnswer = Type.Object({ signedOut: Type.Literal(true) });
export const ResetAnswer = Type.Object({ reset: Type.Literal(true) });
export const PasswordChangedAnswer = Type.Object({ changed: Type.Literal(true), csrfToken: Type.String() });

export const InvitationInfoAnswer = Type.Object({
  email: Type.String(),
  project: Type.Union([Type.Object({ id: Type.Number(), name: Type.String() }), Type.Null()]),
  role: Type.Union([RoleValue, Type.Null()]),
  invitedBy: Type.Union([Type.Object({ fullName: Type.String(), email: Type.String() }), Type.Null()]),
});

export const PlanLimits = Type.Object({
  name: Type.String(),
  requestsPerSecond: Type.Number(),
  rateWindowSeconds: Type.Number(),
  monthlyQuota: Type.Number(),
  maxProjects: Type.Number(),
  maxKeys: Type.Number(),
  maxMembers: Type.Number(),
});

export const ProjectListItem = Type.Object({
  id: Type.Number(),
  name: Type.String(),
  description: Type.String(),
  createdAt: NullableIso,
  plan: Type.String(),
  role: RoleValue,
});
export const ProjectListAnswer = Type.Array(ProjectListItem);
/** GET /projects/allowance: projects owned, and the most the account may own (PLAN_LIMIT_REACHED past it). */
export const ProjectAllowanceAnswer = Type.Object({ owned: Type.Integer(), max: Type.Integer() });

export const ProjectDetailAnswer = Type.Composite([
  ProjectListItem,
  Type.Object({
    limits: PlanLimits,
    counts: Type.Object({ members: Type.Number(), keys: Type.Number() }),
    quota: Type.Object({ limit: Type.Number(), used: Type.Number() }),
  }),
]);
export const DeletedAnswer = Type.Object({ deleted: Type.Literal(true) });

export const UsageStats = Type.Object({
  requests: Type.Number(),
  names: Type.Number({
    description: "Names and addresses asked: one per single request, the inputs of each batch call",
  }),
  batches: Type.Number({ description: "Batch calls among the requests" }),
  errors: Type.Number(),
  byStatus: Type.Record(Type.String(), Type.Number(), { description: "HTTP status (400 and above) → count" }),
  latencyMs: Type.Union([
    Type.Object({ p50: Type.Number(), p95: Type.Number(), p99: Type.Number() }),
    Type.Null(),
  ]),
});

export const DashboardAnswer = Type.Object({
  project: Type.Object({ id: Type.Number(), name: Type.String(), createdAt: NullableIso }),
  plan: PlanLimits,
  quota: Type.Object({
    limit: Type.Number(),
    used: Type.Number(),
    remaining: Type.Number(),
    resetsAt: IsoDate,
  }),
  from: Type.String({ description: "First day, YYYY-MM-DD (UTC)" }),
  to: Type.String({ description: "Last day (today), YYYY-MM-DD (UTC)" }),
  totals: UsageStats,
  endpoints: Type.Array(Type.Composite([Type.Object({ endpoint: Type.String() }), UsageStats])),
  days: Type.Array(
    Type.Composite([
      Type.Object({ day: Type.String() }),
      UsageStats,
      Type.Object({ byEndpoint: Type.Record(Type.String(), UsageStats) }),
    ]),
  ),
});

const Toggle = <T extends typeof NetworkValue | typeof ProviderValue>(item: T) =>
  Type.Object({
    enabled: Type.Optional(Type.Array(item)),
    disabled: Type.Optional(Type.Array(item)),
  });

export const CollisionException = Type.Object({
  domain: Type.Optional(Type.String()),
  tld: Type.Optional(Type.String()),
  provider: ProviderValue,
  network: Type.Optional(NetworkValue),
});

/** Normalized settings (docs/scoring.md): what GET and PUT settings answer. */
export const SettingsAnswer = Type.Object({
  networks: Type.Optional(Toggle(NetworkValue)),
  providers: Type.Optional(Toggle(ProviderValue)),
  providerPriority: Type.Optional(Type.Array(ProviderValue)),
  exceptions: Type.Optional(Type.Array(CollisionException)),
  includeExpired: Type.Optional(Type.Boolean()),
  liveLookups: Type.Optional(Type.Boolean()),
});

export const SecurityAnswer = Type.Object({
  allowedIps: Type.Array(Type.String()),
  allowedOrigins: Type.Array(Type.String()),
  updatedAt: NullableIso,
  limits: PlanLimits,
});

export const Member = Type.Object({
  accountId: Type.Number(),
  email: Type.String(),
  fullName: Type.String(),
  role: RoleValue,
  since: NullableIso,
});
export const PendingInvitation = Type.Object({
  id: Type.Number(),
  email: Type.String(),
  role: RoleValue,
  expiresAt: NullableIso,
});
export const MembersAnswer = Type.Object({
  members: Type.Array(Member),
  invitations: Type.Array(PendingInvitation),
});
export const MemberAddedAnswer = Type.Union([
  Type.Object({
    status: Type.Literal("member"),
    member: Type.Object({
      accountId: Type.Number(),
      email: Type.String(),
      fullName: Type.String(),
      role: RoleValue,
    }),
  }),
  Type.Object({ status: Type.Literal("invited"), invitation: PendingInvitation }),
]);
export const RoleChangedAnswer = Type.Object({ accountId: Type.Number(), role: RoleValue });
export const RemovedAnswer = Type.Object({ removed: Type.Literal(true) });
export const LeftAnswer = Type.Object({ left: Type.Literal(true) });
export const CancelledAnswer = Type.Object({ cancelled: Type.Literal(true) });

export const ApiKeyItem = Type.Object({
  id: Type.Number(),
  name: Type.String(),
  prefix: Type.String(),
  createdAt: NullableIso,
  lastUsedAt: NullableIso,
  status: Type.Union([Type.Literal("active"), Type.Literal("expired"), Type.Literal("revoked")]),
  revokedAt: NullableIso,
  endpoints: NullableList,
  networks: NullableList,
  providers: NullableList,
  expiresAt: NullableIso,
  rotatedTo: Type.Union([Type.Number(), Type.Null()]),
  requestsThisMonth: Type.Integer({ minimum: 0 }),
});
export const KeysAnswer = Type.Array(ApiKeyItem);
export const CreatedKeyAnswer = Type.Composite([
  ApiKeyItem,
  Type.Object({ key: Type.String({ description: "The secret: shown in this answer only" }) }),
]);
/** POST /projects/:id/keys/:keyId/rotate: the new key (its secret) and the old one's overlap. */
export const RotatedKeyAnswer = Type.Composite([CreatedKeyAnswer, Type.Object({ previous: ApiKeyItem })]);
export const RevokedAnswer = Type.Object({ revoked: Type.Literal(true) });

// ---- Password strength, "try it", settings dry run ----

export const PasswordStrengthAnswer = Type.Object({
  score: Type.Integer({ minimum: 0, maximum: 4, description: "0 (refused) … 4 (very strong)" }),
  acceptable: Type.Boolean({ description: "Registration and password changes would accept it" }),
  code: Type.Union([
    Type.Null(),
    Type.Literal("WEAK_PASSWORD"),
    Type.Literal("COMMON_PASSWORD"),
    Type.Literal("TOO_SHORT"),
  ]),
  hint: Type.String({ description: "A sentence for the person typing it" }),
});

const ScoreRule = Type.Object({
  rule: Type.String({ description: "The rule's name (docs/scoring.md)" }),
  points: Type.Number({ description: "Points it added (negative: removed)" }),
  description: Type.String(),
});

const WireInfo = Type.Object({
  sld: Type.String(),
  tld: Type.String(),
  smartContractAddress: Type.Optional(Type.String()),
  lastUpdate: Type.String(),
  CSAMValidation: Type.Boolean(),
  KYC: Type.Boolean(),
  tags: Type.Array(Type.String()),
});

/** A record exactly as API v1 writes it (docs/api.md). */
export const WireRecord = Type.Object({
  info: WireInfo,
  records: Type.Record(Type.String(), Type.String()),
  domain: Type.String(),
  fullQualifiedDomain: Type.String(),
  network: NetworkValue,
  provider: ProviderValue,
  ownerAddress: Type.String(),
  score: Type.Number(),
  spam: Type.Boolean(),
  scoreDetails: Type.Optional(
    Type.Array(Type.Object({ rule: Type.String(), effect: Type.Number(), reason: Type.String() })),
  ),
});

export const TryAnswer = Type.Object({
  method: Type.Union([
    Type.Literal("resolve"),
    Type.Literal("deep-resolve"),
    Type.Literal("reverse-resolve"),
  ]),
  /** The v1 request this try stands for (path and query), for a "copy as curl" button. */
  request: Type.String({ description: "e.g. /svc/api/v1/resolve?domain=alice.wallet&explain=true" }),
  /** The HTTP status the v1 route would answer: 200, or 404 for resolve without a match. */
  status: Type.Number(),
  /** The v1 answer's envelope, byte for byte what an API key of this project gets. */
  answer: Type.Union([
    Type.Object({
      result: Type.Literal(true),
      data: Type.Union([WireRecord, Type.Array(WireRecord)]),
    }),
    ErrorAnswer,
  ]),
  /** With explain: one row per record (best first), its score and the rules behind it. */
  explain: Type.Union([
    Type.Array(
      Type.Object({
        domain: Type.String(),
        network: NetworkValue,
        provider: ProviderValue,
        score: Type.Number(),
        rules: Type.Array(ScoreRule),
      }),
    ),
    Type.Null(),
  ]),
});

export const Winner = Type.Object({
  namespace: ProviderValue,
  network: NetworkValue,
  owner: Type.String({ description: "Lower-case owner address" }),
});

export const DryRunAnswer = Type.Object({
  scanned: Type.Number({ description: "Names looked at (each name once, whatever its namespaces)" }),
  changed: Type.Number({ description: "Names whose winner changes (the full count)" }),
  names: Type.Array(
    Type.Object({
      name: Type.String(),
      before: Type.Union([Winner, Type.Null()], { description: "null: not served before" }),
      after: Type.Union([Winner, Type.Null()], { description: "null: not served after" }),
    }),
  ),
  truncated: Type.Boolean({ description: "True when names holds only the first of changed" }),
});
