/**
 * The one mapping from the server's error messages to the sentences the console shows. The
 * server's messages are written for API clients ("The field "expiresAt" is in the past"); a
 * person reads the field's name as the form labels it, and what to do about it. Every form gets
 * its messages through `ApiError.message` (api.ts), so each refusal is worded once, here.
 * Unknown messages pass through unchanged: they are already sentences.
 */

/** A body field or query parameter as the console's forms label it. */
const FIELD_LABELS: Record<string, string> = {
  email: "The e-mail address",
  password: "The password",
  currentPassword: "The current password",
  newPassword: "The new password",
  fullName: "Your full name",
  name: "The name",
  description: "The description",
  expiresAt: "The expiry",
  overlapUntil: "The time the old key works until",
  url: "The endpoint URL",
  eventTypes: "The event types",
  code: "The code",
  recoveryCode: "The recovery code",
  allowedIps: "The allowed IP addresses",
  allowedOrigins: "The allowed origins",
  from: "The start date",
  to: "The end date",
  endpoints: "The endpoints",
  networks: "The networks",
  providers: "The providers",
};

/** A field's label, or the field's own name when the console has no label for it. */
export function fieldLabel(field: string): string {
  return FIELD_LABELS[field] ?? `The field "${field}"`;
}

/** An address range of the SSRF guard (`linkLocal`, `private` …) in words. */
function rangeWords(range: string): string {
  if (range === "linkLocal") return "link-local";
  return range.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase();
}

/** Why a webhook URL was refused (net/address-guard.ts, accounts/webhook-address.ts), in words. */
function urlRefusal(reason: string): string {
  const range = /^(?:[^:]+: )?(\S+) is an? (\w+) address$/.exec(reason);
  if (range)
    return `${range[1]} is a ${rangeWords(range[2])} address. Webhooks are delivered to public addresses only.`;
  if (/^must be https:\/\/ \(http only to a loopback address\)$/.test(reason))
    return "Use an https:// address. Plain http:// is accepted only to a loopback address (127.0.0.1) of this machine.";
  if (reason === "must be https://") return "Use an https:// address.";
  const unresolved = /^(\S+) does not resolve$/.exec(reason);
  if (unresolved) return `${unresolved[1]} does not resolve. Check the host name.`;
  if (reason === "not an absolute URL")
    return "Enter a full address, such as https://example.com/hooks/omniname.";
  const long = /^longer than (\d+) characters$/.exec(reason);
  if (long) return `The endpoint URL is too long: at most ${long[1]} characters.`;
  return `The endpoint URL ${reason}.`;
}

type Rule = [RegExp, (m: RegExpExecArray) => string];

/** Each rule turns one shape of the server's message into the console's sentence. */
const RULES: Rule[] = [
  [
    /^The (?:field|parameter) "(\w+)" (?:is required|must NOT have fewer than 1 characters|must not be empty)/,
    (m) => `${fieldLabel(m[1])} is required.`,
  ],
  [
    /^The (?:field|parameter) "(\w+)" (?:must NOT have more than|is longer than|has at most) (\d+)(?: printable)? characters/,
    (m) => `${fieldLabel(m[1])} is too long: at most ${m[2]} characters.`,
  ],
  [/^The field "(\w+)" is in the past/, (m) => `${fieldLabel(m[1])} is in the past. Choose a time to come.`],
  [
    /^The field "(\w+)" is more than 30 days ahead/,
    (m) => `${fieldLabel(m[1])} is more than 30 days ahead. Choose a time within 30 days.`,
  ],
  [/^The field "url" is refused: (.*?)\.?$/, (m) => urlRefusal(m[1])],
  [
    /^Bad prefix length in (\S+): 0\.\.(\d+)$/,
    (m) => `${m[1]}: the prefix length after "/" must be between 0 and ${m[2]}.`,
  ],
  [
    /^Not an IP address or CIDR range: (.*)$/,
    (m) => `"${m[1]}" is not an IP address or range. Write one such as 203.0.113.7 or 10.0.0.0/8.`,
  ],
  [
    /^Not an origin \(scheme:\/\/host\[:port\]\): (.*)$/,
    (m) => `"${m[1]}" is not an origin. Write it as https://app.example.com (a port is optional).`,
  ],
  [/^The field "(\w+)" (.*)$/, (m) => `${fieldLabel(m[1])} ${m[2]}`],
];

/** The console's sentence for a server's message (unchanged when no rule knows it). */
export function plainMessage(message: string): string {
  for (const [re, word] of RULES) {
    const m = re.exec(message);
    if (m) return word(m);
  }
  return message;
}
