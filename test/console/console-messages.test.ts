// The console's wording of the server's refusals (web/src/messages.ts), fed with the real answers
// of the console API to the bad input each form can send: every sentence names the field as the
// form labels it, never a JSON field name, a validator's phrase or the SSRF guard's range names.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { plainMessage } from "../../web/src/messages.js";
import { createProject, signedIn } from "./helpers/accounts.js";
import { type ConsoleTestApp, createConsoleTestApp } from "./helpers/console-app.js";

describe("the console's words for the server's refusals", () => {
  let t: ConsoleTestApp;
  beforeAll(async () => {
    t = await createConsoleTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it("words each form's refusal as the form labels its field", async () => {
    const owner = await signedIn(t, "words-owner");
    const p = await createProject(t, [{ id: owner.id, role: "owner" }]);
    const base = `projects/${p.id}`;
    const past = new Date(t.clock.now - 3_600_000).toISOString();
    const far = new Date(t.clock.now + 40 * 86_400_000).toISOString();
    const key = (await owner.agent.post(`${base}/keys`, { name: "k" })).json().data;
    const cases: Array<[string, () => Promise<{ statusCode: number; json: () => unknown }>, string]> = [
      [
        "empty password",
        () => owner.agent.post("account/two-factor/disable", { password: "", code: "1" }),
        "The password is required.",
      ],
      [
        "long e-mail",
        () => owner.agent.post("auth/password-reset", { email: `${"a".repeat(250)}@example.test` }),
        "The e-mail address is too long: at most 254 characters.",
      ],
      [
        "expiry in the past",
        () => owner.agent.post(`${base}/keys`, { name: "x", expiresAt: past }),
        "The expiry is in the past. Choose a time to come.",
      ],
      [
        "overlap beyond 30 days",
        () => owner.agent.post(`${base}/keys/${key.id}/rotate`, { overlapUntil: far }),
        "The time the old key works until is more than 30 days ahead. Choose a time within 30 days.",
      ],
      [
        "a prefix beyond 32",
        () => owner.agent.put(`${base}/security`, { allowedIps: ["10.0.0.0/33"], allowedOrigins: [] }),
        '10.0.0.0/33: the prefix length after "/" must be between 0 and 32.',
      ],
      [
        "not an address",
        () => owner.agent.put(`${base}/security`, { allowedIps: ["300.1.1.1"], allowedOrigins: [] }),
        '"300.1.1.1" is not an IP address or range. Write one such as 203.0.113.7 or 10.0.0.0/8.',
      ],
      [
        "not an origin",
        () => owner.agent.put(`${base}/security`, { allowedIps: [], allowedOrigins: ["app.example"] }),
        '"app.example" is not an origin. Write it as https://app.example.com (a port is optional).',
      ],
      [
        "a private webhook address",
        () => owner.agent.post(`${base}/webhooks`, { url: "https://10.0.0.1/hook" }),
        "10.0.0.1 is a private address. Webhooks are delivered to public addresses only.",
      ],
      [
        "a link-local webhook address",
        () => owner.agent.post(`${base}/webhooks`, { url: "https://169.254.1.1/hook" }),
        "169.254.1.1 is a link-local address. Webhooks are delivered to public addresses only.",
      ],
      [
        "plain http to a public address",
        () => owner.agent.post(`${base}/webhooks`, { url: "http://93.184.216.34/hook" }),
        "Use an https:// address. Plain http:// is accepted only to a loopback address (127.0.0.1) of this machine.",
      ],
    ];
    for (const [what, send, sentence] of cases) {
      const res = await send();
      expect(res.statusCode, what).toBeGreaterThanOrEqual(400);
      expect(res.statusCode, what).toBeLessThan(500);
      const { error } = res.json() as { error: { message: string } };
      expect(plainMessage(error.message), `${what}: ${error.message}`).toBe(sentence);
    }
  });

  it("passes other sentences through unchanged", () => {
    expect(plainMessage("exceptions[0].domain: not a name")).toBe("exceptions[0].domain: not a name");
    expect(plainMessage("A project keeps at least one owner.")).toBe("A project keeps at least one owner.");
  });
});
