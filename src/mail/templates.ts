import type { MailMessage } from "./mailer.js";

/**
 * The account e-mails. Links point at the console's pages (PUBLIC_URL/console/…, see
 * console-spa.routes.ts): the web console when it is built, else plain-text pages with the console
 * API calls and the token filled in. The mails do not say which (they cannot know; the link works
 * either way). Opening a link (a GET) never changes state, so mail scanners that prefetch links
 * cannot use them up.
 */

export function inviteMail(
  to: string,
  link: string,
  hours: number,
  project?: { name: string; role: string },
): MailMessage {
  const what = project ? `the project "${project.name}" as ${project.role}` : "omniname";
  return {
    to,
    subject: project ? `You are invited to ${project.name} on omniname` : "Your invitation to omniname",
    text: [
      `You have been invited to ${what}.`,
      "",
      "Create your account with this link:",
      link,
      "",
      `The link works once and expires in ${hours} hours. If you did not expect it, ignore this message.`,
    ].join("\n"),
  };
}

export function verifyMail(to: string, link: string, hours: number): MailMessage {
  return {
    to,
    subject: "Verify your e-mail address for omniname",
    text: [
      "Confirm that this address is yours by opening:",
      link,
      "",
      `The link works once and expires in ${hours} hours.`,
    ].join("\n"),
  };
}

export function resetMail(to: string, link: string, minutes: number): MailMessage {
  return {
    to,
    subject: "Reset your omniname password",
    text: [
      "Someone asked to reset the password of the omniname account of this address.",
      "Choose a new password with this link:",
      link,
      "",
      `The link works once and expires in ${minutes} minutes. If it was not you, ignore this message:`,
      "your password stays as it is.",
    ].join("\n"),
  };
}

export function addedMail(to: string, project: string, role: string, link: string): MailMessage {
  return {
    to,
    subject: `You were added to ${project} on omniname`,
    text: [`You are now ${role} of the project "${project}".`, "", `Open the console: ${link}`].join("\n"),
  };
}

/** A project reached 80 % or 100 % of its monthly quota (sent once a day at most). */
export function quotaAlertMail(
  to: string,
  a: { project: string; percent: 80 | 100; used: number; limit: number; resetsAt: string; link: string },
): MailMessage {
  const reached = a.percent === 100;
  return {
    to,
    subject: reached
      ? `${a.project} has used all of its monthly quota on omniname`
      : `${a.project} has used 80 % of its monthly quota on omniname`,
    text: [
      `The project "${a.project}" has used ${a.used} of its ${a.limit} requests this month (${a.percent} %).`,
      reached
        ? "Its API keys are refused with 429 QUOTA_EXCEEDED until the quota resets."
        : "When the quota is used up, its API keys are refused with 429 QUOTA_EXCEEDED until it resets.",
      `The quota resets on ${a.resetsAt}.`,
      "",
      `Usage and alerts: ${a.link}`,
    ].join("\n"),
  };
}

/** A key of a project keeps hitting its rate limit (sent once a day per key at most). */
export function rateAlertMail(
  to: string,
  a: { project: string; keyName: string; keyPrefix: string; refusals: number; windowS: number; link: string },
): MailMessage {
  return {
    to,
    subject: `An API key of ${a.project} keeps hitting its rate limit on omniname`,
    text: [
      `The API key "${a.keyName}" (${a.keyPrefix}…) of the project "${a.project}" was refused with`,
      `429 RATE_LIMITED ${a.refusals} times within ${a.windowS} seconds.`,
      "Spread its requests out, or use more keys or a plan with a higher rate.",
      "",
      `Usage and alerts: ${a.link}`,
    ].join("\n"),
  };
}

/** A webhook failed every delivery for WEBHOOK_RETRY_HOURS and was disabled (sent once, by the process that disabled it). */
export function webhookDisabledMail(
  to: string,
  a: { project: string; url: string; hours: number; lastError: string; link: string },
): MailMessage {
  return {
    to,
    subject: `A webhook of ${a.project} was disabled on omniname`,
    text: [
      `Every delivery to the webhook ${a.url} of the project "${a.project}" has failed for ${a.hours} hours,`,
      `so it was disabled. The last error: ${a.lastError}`,
      "Fix the receiver, then turn the webhook back on in the console (it resumes with new events).",
      "",
      `Webhooks and their delivery log: ${a.link}`,
    ].join("\n"),
  };
}
