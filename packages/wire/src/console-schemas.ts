import { type TSchema, Type } from "@sinclair/typebox";
import { ROLES } from "./permissions.js";

/**
 * Request schemas of the console API. Bounds are generous for people and tight for attackers:
 * every string has a maximum, bodies are capped per route (CONSOLE_BODY_LIMIT), unknown fields are
 * dropped by the validator.
 */
export const CONSOLE_BODY_LIMIT = 16 * 1024;
/** Settings carry up to 10,000 collision exceptions. */
export const SETTINGS_BODY_LIMIT = 2 * 1024 * 1024;

const Email = Type.String({ minLength: 3, maxLength: 254, description: "E-mail address (case-insensitive)" });
const Password = Type.String({ minLength: 1, maxLength: 1024 });
const Token = Type.String({ minLength: 1, maxLength: 200, description: "The token of an e-mailed link" });
const RoleSchema = Type.Unsafe<(typeof ROLES)[number]>({ type: "string", enum: [...ROLES] });
const Id = Type.String({ pattern: "^[1-9][0-9]{0,14}$" });

export const ProjectParams = Type.Object({ projectId: Id });
export const MemberParams = Type.Object({ projectId: Id, accountId: Id });
export const InvitationParams = Type.Object({ projectId: Id, invitationId: Id });
export const KeyParams = Type.Object({ projectId: Id, keyId: Id });

export const TokenQuery = Type.Object({ token: Token });

export const RegisterBody = Type.Object(
  {
    invitationToken: Token,
    fullName: Type.String({ minLength: 1, maxLength: 200 }),
    email: Email,
    password: Password,
    acceptTerms: Type.Boolean({ description: "Must be true" }),
  },
  { additionalProperties: false },
);
export const TokenBody = Type.Object({ token: Token }, { additionalProperties: false });
export const EmailBody = Type.Object({ email: Email }, { additionalProperties: false });
export const LoginBody = Type.Object({ email: Email, password: Password }, { additionalProperties: false });
export const ResetConfirmBody = Type.Object(
  { token: Token, password: Password },
  { additionalProperties: false },
);
export const PasswordChangeBody = Type.Object(
  { currentPassword: Password, newPassword: Password },
  { additionalProperties: false },
);

// Two-factor codes: the lengths are checked by the service, so a wrong one gets its own message.
const TotpCode = Type.String({ maxLength: 20, description: "The 6-digit code of the authenticator app" });
const RecoveryCode = Type.String({ maxLength: 40, description: "A recovery code, xxxxx-xxxxx" });
export const TwoFactorLoginBody = Type.Object(
  {
    challengeToken: Type.String({ minLength: 1, maxLength: 200, description: "From POST /auth/login" }),
    code: Type.Optional(TotpCode),
    recoveryCode: Type.Optional(RecoveryCode),
  },
  { additionalProperties: false },
);
export const TwoFactorCodeBody = Type.Object({ code: TotpCode }, { additionalProperties: false });
export const TwoFactorDisableBody = Type.Object(
  { password: Password, code: Type.Optional(TotpCode), recoveryCode: Type.Optional(RecoveryCode) },
  { additionalProperties: false },
);
export const TwoFactorRuleBody = Type.Object({ required: Type.Boolean() }, { additionalProperties: false });

export const ProjectCreateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    description: Type.Optional(Type.String({ maxLength: 1000 })),
  },
  { additionalProperties: false },
);
export const ProjectPatchBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    description: Type.Optional(Type.String({ maxLength: 1000 })),
  },
  { additionalProperties: false, minProperties: 1 },
);
export const SettingsBody = Type.Record(Type.String(), Type.Unknown(), {
  description: "Resolution settings and collision rules (docs/scoring.md)",
});
export const SecurityBody = Type.Object(
  {
    allowedIps: Type.Array(Type.String({ maxLength: 64 }), { maxItems: 100 }),
    allowedOrigins: Type.Array(Type.String({ maxLength: 255 }), { maxItems: 100 }),
  },
  { additionalProperties: false },
);
export const MemberBody = Type.Object({ email: Email, role: RoleSchema }, { additionalProperties: false });
export const RoleBody = Type.Object({ role: RoleSchema }, { additionalProperties: false });
/**
 * A key's scope of one kind: names checked by accounts/key-scopes.ts (which says which name is
 * unknown); null or absent: no limit. The schema only bounds the size.
 */
// Null first: the validator coerces types, and would make null an array ([""]) if that came first.
const ScopeList = Type.Union([Type.Null(), Type.Array(Type.String({ maxLength: 64 }), { maxItems: 32 })]);
/** An ISO 8601 time, checked by accounts/key-scopes.ts (past, too far ahead). */
const Time = Type.String({ maxLength: 40 });
const KeyLimits = {
  endpoints: Type.Optional(ScopeList),
  networks: Type.Optional(ScopeList),
  providers: Type.Optional(ScopeList),
  expiresAt: Type.Optional(Type.Union([Type.Null(), Time])),
};
export const KeyBody = Type.Object(
  { name: Type.String({ maxLength: 100, default: "" }), ...KeyLimits },
  { additionalProperties: false },
);
export const KeyPatchBody = Type.Object(
  { name: Type.Optional(Type.String({ maxLength: 100 })), ...KeyLimits },
  { additionalProperties: false, minProperties: 1 },
);
export const RotateBody = Type.Object(
  { overlapUntil: Time, expiresAt: Type.Optional(Type.Union([Type.Null(), Time])) },
  { additionalProperties: false },
);

export const PasswordStrengthBody = Type.Object(
  {
    password: Type.String({ maxLength: 1024 }),
    email: Type.Optional(Type.String({ maxLength: 254 })),
  },
  { additionalProperties: false },
);
export const TryMethod = Type.Union(
  [Type.Literal("resolve"), Type.Literal("deep-resolve"), Type.Literal("reverse-resolve")],
  { description: "The v1 route to try" },
);
export const TryBody = Type.Object(
  {
    method: TryMethod,
    domain: Type.Optional(Type.String({ maxLength: 1024, description: "resolve and deep-resolve" })),
    address: Type.Optional(Type.String({ maxLength: 128, description: "reverse-resolve: 0x + 40 hex" })),
    network: Type.Optional(Type.String({ maxLength: 32 })),
    provider: Type.Optional(Type.String({ maxLength: 32 })),
    explain: Type.Optional(Type.Boolean({ description: "resolve and deep-resolve: the score's rules" })),
  },
  { additionalProperties: false },
);
export const DryRunBody = Type.Object(
  { settings: SettingsBody },
  { additionalProperties: false, description: "The settings PUT /settings would get" },
);

/** Schema fields shared by console routes, tagged `console` for any OpenAPI document. */
export function doc(summary: string, extra: Record<string, TSchema> = {}) {
  return { tags: ["console"], summary, ...extra };
}

export function ok<T>(data: T): { result: true; data: T } {
  return { result: true, data };
}
