import { randomInt } from "node:crypto";
import { Secret, TOTP } from "otpauth";
import { AppError } from "../domain/errors.js";
import { openSecret, sealSecret } from "./sealed-secret.js";
import { sign } from "./tokens.js";

// The pure parts of two-factor sign-in: TOTP (RFC 6238, through otpauth), the secret's encryption
// at rest, and recovery codes. The service (two-factor.service.ts) stores and checks them.

export const TOTP_PERIOD_S = 30;
export const TOTP_DIGITS = 6;
/**
 * Steps accepted on either side of the current one: one (30 s), RFC 6238 §5.2's allowance for a
 * clock a little off and for the time the person takes to type. A code of an older step is refused.
 */
export const TOTP_WINDOW = 1;
export const RECOVERY_CODE_COUNT = 10;
const ISSUER = "omniname";

/** A fresh 160-bit TOTP secret (RFC 4226's recommended length), base32 as authenticator apps take it. */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

function totp(secretBase32: string, label = ""): TOTP {
  return new TOTP({
    issuer: ISSUER,
    label,
    secret: Secret.fromBase32(secretBase32),
    algorithm: "SHA1",
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD_S,
  });
}

/** The `otpauth://` URI an authenticator app reads from the QR code. */
export function totpUri(secretBase32: string, email: string): string {
  return totp(secretBase32, email).toString();
}

/** The code of a moment (tests and the enrolment's own check use it). */
export function totpCode(secretBase32: string, timestampMs: number): string {
  return totp(secretBase32).generate({ timestamp: timestampMs });
}

/**
 * The time step a code belongs to, when it is valid within ±TOTP_WINDOW steps of `nowMs`; null
 * otherwise. Replay is the caller's to refuse: it keeps the last step accepted per account.
 */
export function totpStepOf(secretBase32: string, code: string, nowMs: number): number | null {
  const t = totp(secretBase32);
  const delta = t.validate({ token: code, timestamp: nowMs, window: TOTP_WINDOW });
  return delta === null ? null : t.counter({ timestamp: nowMs }) + delta;
}

/** Six digits, or a clear field error (spaces and dashes as apps show them are allowed). */
export function parseTotpCode(input: string): string {
  const code = input.replace(/[\s-]/g, "");
  if (!/^\d+$/.test(code)) throw new AppError("INVALID_PARAMETER", "code: must be 6 digits.");
  if (code.length !== TOTP_DIGITS)
    throw new AppError("INVALID_PARAMETER", `code: must be 6 digits (this one has ${code.length}).`);
  return code;
}

// Recovery codes: 10 characters of a 31-character alphabet without look-alikes (0/o, 1/l/i), shown as
// xxxxx-xxxxx: about 49.5 random bits each, enough for a code that works once and is throttled.
const ALPHABET = "23456789abcdefghjkmnpqrstuvwxyz"; // 31 characters
const RECOVERY_LENGTH = 10;

export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    let s = "";
    for (let i = 0; i < RECOVERY_LENGTH; i++) s += ALPHABET[randomInt(ALPHABET.length)];
    return `${s.slice(0, 5)}-${s.slice(5)}`;
  });
}

/** A recovery code as typed (any case, with or without the dash), or a clear field error. */
export function parseRecoveryCode(input: string): string {
  const code = input.trim().toLowerCase().replace(/[\s-]/g, "");
  if (code.length !== RECOVERY_LENGTH || ![...code].every((c) => ALPHABET.includes(c)))
    throw new AppError("INVALID_PARAMETER", "recoveryCode: must be 10 letters and digits, as xxxxx-xxxxx.");
  return code;
}

/**
 * A recovery code's stored form: HMAC-SHA-256 under the server's pepper. 50 bits would fall to
 * an offline search of a leaked table if hashed without a key; with the key out of the database,
 * the table alone tells nothing, and the check stays fast (no slow hash per code at sign-in).
 */
export function hashRecoveryCode(pepper: string, accountId: number, code: string): string {
  return sign(pepper, "recovery-code", `${accountId}:${code}`);
}

/** Sealed per sealed-secret.ts (AES-256-GCM, key derived from the pepper); the account id is bound as AAD. */
export function encryptTotpSecret(pepper: string, accountId: number, secretBase32: string): string {
  return sealSecret(pepper, "totp-secret", accountId, secretBase32);
}

export function decryptTotpSecret(pepper: string, accountId: number, stored: string): string {
  return openSecret(pepper, "totp-secret", accountId, stored, "TOTP secret");
}
