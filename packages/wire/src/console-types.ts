/**
 * The console API's types for the web console (`import type { … } from "@omniname/wire/console-types"`).
 * Every type is derived from a TypeBox schema: answers from `console-answers.ts`, request bodies
 * from `console-schemas.ts` (the schemas the server validates and serializes with), so the client
 * never writes them twice. Type-only imports: importing this module loads no code.
 */
import type { Static } from "@sinclair/typebox";
import type * as A from "./console-answers.js";
import type * as S from "./console-schemas.js";

/** Every successful answer: `{ result: true, data }`. */
export type Ok<T> = { result: true; data: T };
/** Every refusal: `{ result: false, error: { code, message } }` (codes: docs/errors.md). */
export type ErrorEnvelope = Static<typeof A.ErrorAnswer>;
export type Envelope<T> = Ok<T> | ErrorEnvelope;

export type Role = Static<typeof A.RoleValue>;
export type Network = Static<typeof A.NetworkValue>;
export type Provider = Static<typeof A.ProviderValue>;

// ---- Answers (the `data` of Ok) ----
export type Account = Static<typeof A.AccountAnswer>;
/** POST /auth/login, GET /account */
export type SessionAnswer = Static<typeof A.SessionAnswer>;
/** POST /auth/login: a session, or the second step's token */
export type LoginAnswer = Static<typeof A.LoginAnswer>;
export type TwoFactorChallengeAnswer = Static<typeof A.TwoFactorChallengeAnswer>;
/** GET /account/two-factor */
export type TwoFactorStatus = Static<typeof A.TwoFactorStatusAnswer>;
/** POST /account/two-factor/setup */
export type TwoFactorSetup = Static<typeof A.TwoFactorSetupAnswer>;
/** POST /account/two-factor/confirm */
export type RecoveryCodesAnswer = Static<typeof A.RecoveryCodesAnswer>;
/** GET and PUT /projects/:id/two-factor */
export type TwoFactorRule = Static<typeof A.TwoFactorRuleAnswer>;
/** GET /session (signed out: account null) */
export type SessionProbeAnswer = Static<typeof A.SessionProbeAnswer>;
/** GET /csrf */
export type CsrfAnswer = Static<typeof A.CsrfAnswer>;
/** GET /auth/invitation?token= */
export type InvitationInfo = Static<typeof A.InvitationInfoAnswer>;
/** POST /auth/register (201) */
export type RegisterAnswer = Static<typeof A.RegisterAnswer>;
/** POST /auth/verify-email */
export type VerifyAnswer = Static<typeof A.VerifyAnswer>;
/** POST /auth/resend-verification, POST /auth/password-reset (202) */
export type AcceptedAnswer = Static<typeof A.AcceptedAnswer>;
/** POST /auth/logout */
export type SignedOutAnswer = Static<typeof A.SignedOutAnswer>;
/** POST /auth/password-reset/confirm */
export type ResetAnswer = Static<typeof A.ResetAnswer>;
/** POST /account/password */
export type PasswordChangedAnswer = Static<typeof A.PasswordChangedAnswer>;
/** POST /auth/password-strength */
export type PasswordStrength = Static<typeof A.PasswordStrengthAnswer>;

export type PlanLimits = Static<typeof A.PlanLimits>;
/** GET /projects (an array of these); POST /projects and PATCH /projects/:id answer one */
export type ProjectListItem = Static<typeof A.ProjectListItem>;
/** GET /projects/allowance */
export type ProjectAllowance = Static<typeof A.ProjectAllowanceAnswer>;
/** GET /projects/:id */
export type ProjectDetail = Static<typeof A.ProjectDetailAnswer>;
/** DELETE /projects/:id */
export type DeletedAnswer = Static<typeof A.DeletedAnswer>;
export type UsageStats = Static<typeof A.UsageStats>;
/** GET /projects/:id/dashboard */
export type Dashboard = Static<typeof A.DashboardAnswer>;
/** GET and PUT /projects/:id/settings (normalized) */
export type Settings = Static<typeof A.SettingsAnswer>;
export type CollisionException = Static<typeof A.CollisionException>;
/** GET and PUT /projects/:id/security */
export type Security = Static<typeof A.SecurityAnswer>;
export type Member = Static<typeof A.Member>;
export type PendingInvitation = Static<typeof A.PendingInvitation>;
/** GET /projects/:id/members */
export type MembersAnswer = Static<typeof A.MembersAnswer>;
/** POST /projects/:id/members: 201 member, 202 invited */
export type MemberAddedAnswer = Static<typeof A.MemberAddedAnswer>;
/** PATCH /projects/:id/members/:accountId */
export type RoleChangedAnswer = Static<typeof A.RoleChangedAnswer>;
export type RemovedAnswer = Static<typeof A.RemovedAnswer>;
export type LeftAnswer = Static<typeof A.LeftAnswer>;
export type CancelledAnswer = Static<typeof A.CancelledAnswer>;
export type ApiKeyItem = Static<typeof A.ApiKeyItem>;
/** GET /projects/:id/keys */
export type KeysAnswer = Static<typeof A.KeysAnswer>;
/** POST /projects/:id/keys (201): the secret `key` is in this answer only */
export type CreatedKey = Static<typeof A.CreatedKeyAnswer>;
export type RevokedAnswer = Static<typeof A.RevokedAnswer>;
/** POST /projects/:id/keys/:keyId/rotate (201): the new key's secret, and the old key's overlap */
export type RotatedKey = Static<typeof A.RotatedKeyAnswer>;
/** A record as API v1 writes it */
export type WireRecord = Static<typeof A.WireRecord>;
/** POST /projects/:id/try */
export type TryAnswer = Static<typeof A.TryAnswer>;
export type Winner = Static<typeof A.Winner>;
/** POST /projects/:id/settings/dry-run */
export type DryRunAnswer = Static<typeof A.DryRunAnswer>;

// ---- Request bodies ----
export type RegisterBody = Static<typeof S.RegisterBody>;
export type TokenBody = Static<typeof S.TokenBody>;
export type EmailBody = Static<typeof S.EmailBody>;
export type LoginBody = Static<typeof S.LoginBody>;
export type ResetConfirmBody = Static<typeof S.ResetConfirmBody>;
export type PasswordChangeBody = Static<typeof S.PasswordChangeBody>;
export type PasswordStrengthBody = Static<typeof S.PasswordStrengthBody>;
export type ProjectCreateBody = Static<typeof S.ProjectCreateBody>;
export type ProjectPatchBody = Static<typeof S.ProjectPatchBody>;
/** PUT /projects/:id/settings takes the Settings shape (aliases such as "ENS" are accepted too) */
export type SettingsBody = Settings;
export type SecurityBody = Static<typeof S.SecurityBody>;
export type MemberBody = Static<typeof S.MemberBody>;
export type RoleBody = Static<typeof S.RoleBody>;
export type KeyBody = Static<typeof S.KeyBody>;
export type KeyPatchBody = Static<typeof S.KeyPatchBody>;
export type RotateBody = Static<typeof S.RotateBody>;
export type TryMethod = Static<typeof S.TryMethod>;
export type TryBody = Static<typeof S.TryBody>;
/** POST /projects/:id/settings/dry-run: `{ settings }` as PUT /settings takes them */
export type DryRunBody = { settings: SettingsBody };
