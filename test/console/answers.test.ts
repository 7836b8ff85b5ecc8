import { readFileSync } from "node:fs";
import { FormatRegistry, type TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { totpCode } from "../../src/accounts/two-factor.js";
import * as A from "../../src/api/routes/console/console.answers.js";
import {
  Agent,
  type ConsoleTestApp,
  createConsoleTestApp,
  PASSWORD,
  signUp,
  tokenOf,
  uniqueEmail,
} from "./helpers/console-app.js";

FormatRegistry.Set("date-time", (v) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(v));

/**
 * Every console answer, produced by the real API, against the schema the web console's types come
 * from (console.answers.ts → console.types.ts): a service that changes an answer without its
 * schema fails here.
 */
function expectShape(schema: TSchema, res: { statusCode: number; body: string }, status = 200) {
  expect(res.statusCode, res.body).toBe(status);
  const body = JSON.parse(res.body);
  const envelope = body.result === false ? A.ErrorAnswer : null;
  if (envelope) {
    expect(Value.Check(envelope, body), res.body).toBe(true);
    return body;
  }
  expect(body.result).toBe(true);
  const errors = [...Value.Errors(schema, body.data)].map((e) => `${e.path}: ${e.message}`);
  expect(errors, res.body).toEqual([]);
  return body.data;
}

describe("console answers match console.answers.ts", () => {
  let t: ConsoleTestApp;
  beforeAll(async () => {
    t = await createConsoleTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it("auth, projects, team, keys, security, settings, dashboard, errors", async () => {
    const email = uniqueEmail("answers");
    const { link } = await t.services.accounts.invite(email, { wait: true });
    const invitationToken = new URL(link).searchParams.get("token")!;
    const browser = new Agent(t.app);
    expectShape(A.CsrfAnswer, await browser.get("csrf"));
    const signedOut = expectShape(A.SessionProbeAnswer, await browser.get("session"));
    expect(signedOut.account).toBeNull();
    expectShape(A.InvitationInfoAnswer, await browser.get(`auth/invitation?token=${invitationToken}`));
    expectShape(
      A.RegisterAnswer,
      await browser.post("auth/register", {
        invitationToken,
        fullName: "A",
        email,
        password: PASSWORD,
        acceptTerms: true,
      }),
      201,
    );
    const verify = tokenOf(await t.smtp.waitFor(email, /Verify/));
    expectShape(A.VerifyAnswer, await browser.post("auth/verify-email", { token: verify }));
    expectShape(A.AcceptedAnswer, await browser.post("auth/resend-verification", { email }), 202);
    expectShape(A.SessionAnswer, await browser.post("auth/login", { email, password: PASSWORD }));
    expectShape(A.SessionAnswer, await browser.get("account"));
    const signedIn = expectShape(A.SessionProbeAnswer, await browser.get("session"));
    expect(signedIn.account?.email).toBe(email);

    const p = expectShape(
      A.ProjectListItem,
      await browser.post("projects", { name: `answers ${email}` }),
      201,
    );
    expectShape(A.ProjectListAnswer, await browser.get("projects"));
    const allowance = expectShape(A.ProjectAllowanceAnswer, await browser.get("projects/allowance"));
    expect(allowance.owned).toBe(1);
    expectShape(A.ProjectListItem, await browser.patch(`projects/${p.id}`, { description: "d" }));
    const detail = expectShape(A.ProjectDetailAnswer, await browser.get(`projects/${p.id}`));
    // One project on the default plan: the allowance is that plan's limit.
    expect(allowance.max).toBe(detail.limits.maxProjects);
    expectShape(A.DashboardAnswer, await browser.get(`projects/${p.id}/dashboard`));
    expectShape(A.SettingsAnswer, await browser.get(`projects/${p.id}/settings`));
    const saved = expectShape(
      A.SettingsAnswer,
      await browser.put(`projects/${p.id}/settings`, {
        networks: { disabled: ["bsc"] },
        providers: { enabled: ["ENS", "UNS", "FNS"] },
        providerPriority: ["ENS"],
        exceptions: [
          { tld: "wallet", provider: "FNS", network: "POLYGON" },
          { domain: "alice.wallet", provider: "FNS" },
        ],
        includeExpired: true,
        liveLookups: false,
      }),
    );
    expect(saved.liveLookups).toBe(false);
    expectShape(A.PasswordStrengthAnswer, await browser.post("auth/password-strength", { password: "x" }));
    for (const body of [
      { method: "resolve", domain: "alice.wallet", explain: true },
      { method: "resolve", domain: "nobody.wallet" },
      { method: "deep-resolve", domain: "alice.wallet", explain: true },
      { method: "reverse-resolve", address: "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266" },
    ])
      expectShape(A.TryAnswer, await browser.post(`projects/${p.id}/try`, body));
    const dry = { settings: { networks: { disabled: ["POLYGON"] } } };
    const dryRun = expectShape(A.DryRunAnswer, await browser.post(`projects/${p.id}/settings/dry-run`, dry));
    expect(dryRun.changed).toBe(1);
    expectShape(A.SecurityAnswer, await browser.get(`projects/${p.id}/security`));
    expectShape(
      A.SecurityAnswer,
      await browser.put(`projects/${p.id}/security`, { allowedIps: ["10.0.0.0/8"], allowedOrigins: [] }),
    );
    const key = expectShape(
      A.CreatedKeyAnswer,
      await browser.post(`projects/${p.id}/keys`, { name: "k" }),
      201,
    );
    expectShape(A.KeysAnswer, await browser.get(`projects/${p.id}/keys`));
    expectShape(A.RevokedAnswer, await browser.delete(`projects/${p.id}/keys/${key.id}`));
    expectShape(A.KeysAnswer, await browser.get(`projects/${p.id}/keys`));

    // Two-factor sign-in: status, set-up, recovery codes, the project rule, the sign-in's two steps.
    expectShape(A.TwoFactorStatusAnswer, await browser.get("account/two-factor"));
    const setup = expectShape(A.TwoFactorSetupAnswer, await browser.post("account/two-factor/setup"));
    expectShape(
      A.RecoveryCodesAnswer,
      await browser.post("account/two-factor/confirm", { code: totpCode(setup.secret, t.clock.now) }),
    );
    expectShape(A.TwoFactorRuleAnswer, await browser.put(`projects/${p.id}/two-factor`, { required: true }));
    expectShape(A.TwoFactorRuleAnswer, await browser.get(`projects/${p.id}/two-factor`));
    expectShape(A.TwoFactorRuleAnswer, await browser.put(`projects/${p.id}/two-factor`, { required: false }));
    const second = await new Agent(t.app).start();
    const challenge = expectShape(
      A.LoginAnswer,
      await second.post("auth/login", { email, password: PASSWORD }),
    );
    expect(challenge.twoFactorRequired).toBe(true);
    t.clock.now += 30_000;
    expectShape(
      A.SessionAnswer,
      await second.post("auth/login/two-factor", {
        challengeToken: challenge.challengeToken,
        code: totpCode(setup.secret, t.clock.now),
      }),
    );
    expectShape(
      A.TwoFactorDisabledAnswer,
      await second.post("account/two-factor/disable", {
        password: PASSWORD,
        code: totpCode(setup.secret, t.clock.now + 30_000),
      }),
    );

    const other = uniqueEmail("answers-other");
    await signUp(t, other);
    const added = expectShape(
      A.MemberAddedAnswer,
      await browser.post(`projects/${p.id}/members`, { email: other, role: "viewer" }),
      201,
    );
    const invited = expectShape(
      A.MemberAddedAnswer,
      await browser.post(`projects/${p.id}/members`, { email: uniqueEmail("nobody"), role: "developer" }),
      202,
    );
    expectShape(A.MembersAnswer, await browser.get(`projects/${p.id}/members`));
    expectShape(
      A.RoleChangedAnswer,
      await browser.patch(`projects/${p.id}/members/${added.member.accountId}`, { role: "developer" }),
    );
    expectShape(A.RemovedAnswer, await browser.delete(`projects/${p.id}/members/${added.member.accountId}`));
    expectShape(
      A.CancelledAnswer,
      await browser.delete(`projects/${p.id}/invitations/${invited.invitation.id}`),
    );

    // Refusals: the error envelope.
    expectShape(A.ErrorAnswer, await browser.get("projects/999999"), 404);
    expectShape(A.ErrorAnswer, await browser.post("projects", { name: "" }), 400);

    expectShape(
      A.PasswordChangedAnswer,
      await browser.post("account/password", {
        currentPassword: PASSWORD,
        newPassword: "another long passphrase",
      }),
    );
    expectShape(A.DeletedAnswer, await browser.delete(`projects/${p.id}`));
    expectShape(A.AcceptedAnswer, await browser.post("auth/password-reset", { email }), 202);
    const reset = tokenOf(await t.smtp.waitFor(email, /Reset/));
    expectShape(A.SignedOutAnswer, await browser.post("auth/logout"));
    await browser.get("csrf");
    expectShape(
      A.ResetAnswer,
      await browser.post("auth/password-reset/confirm", { token: reset, password: PASSWORD }),
    );
  });
});

describe("the console's types (packages/wire) stay importable by the web console", () => {
  // The web app compiles with its own settings (DOM, no Node types): what console-types.ts pulls
  // in must be TypeBox and these few modules of the package, which import nothing else.
  const ALLOWED: Record<string, string[]> = {
    "packages/wire/src/console-types.ts": [
      "@sinclair/typebox",
      "./console-answers.js",
      "./console-schemas.js",
    ],
    "packages/wire/src/console-answers.ts": ["@sinclair/typebox"],
    "packages/wire/src/console-schemas.ts": ["@sinclair/typebox", "./permissions.js"],
    "packages/wire/src/permissions.ts": [],
  };
  it.each(Object.entries(ALLOWED))("%s imports only what it may", (file, allowed) => {
    const text = readFileSync(new URL(`../../${file}`, import.meta.url), "utf8");
    const imports = [...text.matchAll(/^(?:import|export)[^;]*?from\s+"([^"]+)"/gms)].map((m) => m[1]);
    expect([...new Set(imports)].sort()).toEqual([...allowed].sort());
  });
  it("imports types only (no code runs when the web app imports it)", () => {
    const text = readFileSync(new URL("../../packages/wire/src/console-types.ts", import.meta.url), "utf8");
    const statements = [...text.matchAll(/^import\s+(type\s+)?/gm)];
    expect(statements.length).toBeGreaterThan(0);
    for (const m of statements) expect(m[1], m[0]).toBe("type ");
  });
});
