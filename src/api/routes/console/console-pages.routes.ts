import type { FastifyInstance, FastifyReply } from "fastify";
import { isTokenShape } from "../../../accounts/tokens.js";
import type { Config } from "../../../config/config.schema.js";
import { CONSOLE_PREFIX } from "./console.routes.js";

/** The console pages that account e-mails link to (PUBLIC_URL + path). */
const CONSOLE_PAGES = {
  home: "/console",
  register: "/console/register",
  verifyEmail: "/console/verify-email",
  resetPassword: "/console/reset-password",
  project: "/console/projects/:id",
} as const;

const DOCS = "docs/console-api.md";

/**
 * While the web console is not built (no web/dist/index.html; console-spa.routes.ts decides), the
 * links of the account e-mails open these plain-text pages: each says what the link is for and the
 * exact console API calls that finish the step, with the link's token filled in. A GET changes
 * nothing (mail scanners prefetch links), the answer is text/plain (nothing in it runs), is never
 * cached, and the token in the URL is not sent on as a referrer.
 */
export async function consolePages(
  scope: FastifyInstance,
  opts: { config: Pick<Config, "publicUrl"> },
): Promise<void> {
  const base = () => opts.config.publicUrl;
  const api = (path: string) => `${base()}${CONSOLE_PREFIX}/${path}`;
  const csrfStep = () => [
    "1. Get a CSRF token; curl keeps its cookie in the file ./jar:",
    "",
    `   curl -s -c jar ${api("csrf")}`,
    "",
    '   The answer is {"result":true,"data":{"csrfToken":"…"}}: use that csrfToken as CSRF_TOKEN below.',
  ];
  const post = (path: string, body: string) => [
    "   curl -s -b jar -c jar -H 'X-CSRF-Token: CSRF_TOKEN' -H 'Content-Type: application/json' \\",
    `     -d '${body}' \\`,
    `     ${api(path)}`,
  ];
  const page = (reply: FastifyReply, title: string, lines: string[]) =>
    reply
      .header("cache-control", "no-store")
      .header("referrer-policy", "no-referrer")
      .header("x-content-type-options", "nosniff")
      .type("text/plain; charset=utf-8")
      .send(
        [
          `omniname: ${title}`,
          "",
          "The omniname web console is not built on this server (`npm run build` writes web/dist).",
          `Until it is, this step is done with the console API (JSON over HTTP, described in ${DOCS}),`,
          "for example with curl:",
          "",
          ...lines,
          "",
        ].join("\n"),
      );
  /** The link's token, or null when the link was cut short or edited. */
  const tokenOf = (query: unknown): string | null => {
    const t = (query as { token?: unknown } | null)?.token;
    return isTokenShape(t) ? t : null;
  };
  const incomplete = [
    "This link is incomplete: its token is missing or damaged. Open the whole link from the e-mail",
    "(some mail programs cut long links in two).",
  ];

  scope.get(CONSOLE_PAGES.home, async (_request, reply) =>
    page(reply, "console", [
      "Sign in:",
      "",
      ...csrfStep(),
      "",
      "2. Sign in; the session cookie goes to ./jar and the answer carries a new csrfToken:",
      "",
      ...post("auth/login", '{"email":"you@example.com","password":"YOUR_PASSWORD"}'),
      "",
      `Then, for example: curl -s -b jar ${api("projects")}`,
      `Registration is by invitation: an operator runs "omniname admin invite EMAIL".`,
    ]),
  );

  scope.get(CONSOLE_PAGES.register, async (request, reply) => {
    const token = tokenOf(request.query);
    if (token === null) return page(reply, "accept an invitation", incomplete);
    return page(reply, "accept your invitation", [
      `What the invitation is for: curl -s '${api(`auth/invitation?token=${token}`)}'`,
      "",
      ...csrfStep(),
      "",
      "2. Register with the address the invitation was sent to and a password of 10 to 256 characters",
      "   (acceptTerms: you accept the terms of service):",
      "",
      ...post(
        "auth/register",
        `{"invitationToken":"${token}","fullName":"Your Name","email":"you@example.com","password":"YOUR_PASSWORD","acceptTerms":true}`,
      ),
      "",
      "3. A verification link is e-mailed to you: open it for the last step.",
      "",
      "The invitation works once and expires after the time given in the e-mail.",
    ]);
  });

  scope.get(CONSOLE_PAGES.verifyEmail, async (request, reply) => {
    const token = tokenOf(request.query);
    if (token === null) return page(reply, "verify your e-mail address", incomplete);
    return page(reply, "verify your e-mail address", [
      ...csrfStep(),
      "",
      "2. Confirm the address:",
      "",
      ...post("auth/verify-email", `{"token":"${token}"}`),
      "",
      `Then sign in: see ${base()}${CONSOLE_PAGES.home}`,
    ]);
  });

  scope.get(CONSOLE_PAGES.resetPassword, async (request, reply) => {
    const token = tokenOf(request.query);
    if (token === null) return page(reply, "reset your password", incomplete);
    return page(reply, "reset your password", [
      ...csrfStep(),
      "",
      "2. Choose the new password (10 to 256 characters); every session of the account ends:",
      "",
      ...post("auth/password-reset/confirm", `{"token":"${token}","password":"YOUR_NEW_PASSWORD"}`),
      "",
      "The link works once and expires 60 minutes after it was sent.",
    ]);
  });

  scope.get<{ Params: { id: string } }>(CONSOLE_PAGES.project, async (request, reply) => {
    const id = /^\d{1,12}$/.test(request.params.id) ? request.params.id : "PROJECT_ID";
    return page(reply, "your project", [
      `Sign in as shown on ${base()}${CONSOLE_PAGES.home}, then:`,
      "",
      `   curl -s -b jar ${api(`projects/${id}`)}`,
      `   curl -s -b jar ${api(`projects/${id}/keys`)}`,
    ]);
  });
}
