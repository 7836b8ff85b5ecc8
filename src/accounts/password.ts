import { randomBytes, scrypt, timingSafeEqual } from "node:crypto";
import { dictionary } from "@zxcvbn-ts/language-common";
import { AppError } from "../domain/errors.js";

/**
 * OWASP Password Storage Cheat Sheet, scrypt: N=2^17, r=8, p=1. One hash needs 128·N·r = 128 MiB
 * of memory, above Node's 32 MiB default `maxmem`, and takes ~0.35 s on this machine.
 */
const SCRYPT_PARAMS = { N: 2 ** 17, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;
const SALT_LENGTH = 16;

const PASSWORD_MIN_LENGTH = 10;
/** Long enough for any passphrase, short enough that hashing attacker input stays bounded. */
export const PASSWORD_MAX_LENGTH = 256;

// Each hash holds 128 MiB while it runs: at most two at a time, so a burst of logins cannot take
// the process's memory (or every libuv thread) away from the API.
const MAX_CONCURRENT = 2;
// Beyond this many waiting (a flood of logins), answer "try again" at once instead of queueing
// without bound: each waiting request holds a connection and its body.
const MAX_WAITING = 200;
let running = 0;
const waiting: Array<() => void> = [];

async function withSlot<T>(fn: () => Promise<T>): Promise<T> {
  if (running >= MAX_CONCURRENT) {
    if (waiting.length >= MAX_WAITING)
      throw new AppError("TOO_MANY_ATTEMPTS", undefined, { details: { retryAfterS: 1 } });
    await new Promise<void>((r) => waiting.push(r));
  }
  running++;
  try {
    return await fn();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

function derive(password: string, salt: Buffer, N: number, r: number, p: number): Promise<Buffer> {
  return withSlot(
    () =>
      new Promise((resolve, reject) =>
        scrypt(
          password.normalize("NFC"),
          salt,
          KEY_LENGTH,
          { N, r, p, maxmem: 256 * N * r + 1024 * 1024 },
          (e, key) => (e ? reject(e) : resolve(key)),
        ),
      ),
  );
}

/** `scrypt$<log2 N>$<r>$<p>$<salt b64url>$<hash b64url>`: the parameters travel with the hash. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_LENGTH);
  const { N, r, p } = SCRYPT_PARAMS;
  const key = await derive(password, salt, N, r, p);
  return `scrypt$${Math.log2(N)}$${r}$${p}$${salt.toString("base64url")}$${key.toString("base64url")}`;
}

/** Constant-time comparison against a stored hash; a malformed hash never matches. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split("$");
  if (parts.length !== 6 || parts[0] !== "scrypt") return false;
  const [logN, r, p] = parts.slice(1, 4).map(Number);
  if (!(logN >= 14 && logN <= 20 && r >= 1 && r <= 32 && p >= 1 && p <= 16)) return false;
  const salt = Buffer.from(parts[4], "base64url");
  const expected = Buffer.from(parts[5], "base64url");
  if (expected.length !== KEY_LENGTH) return false;
  const key = await derive(password, salt, 2 ** logN, r, p);
  return timingSafeEqual(key, expected);
}

/**
 * A hash of a random password, verified against when the e-mail is unknown so that an unknown
 * and a known address cost the same time.
 */
let dummy: Promise<string> | null = null;
export function dummyHash(): Promise<string> {
  dummy ??= hashPassword(randomBytes(16).toString("hex"));
  return dummy;
}

// The ~49,000 most common passwords of the breach corpora zxcvbn-ts keeps (lower case). Built on
// first use: only registration and password changes need it.
let common: ReadonlySet<string> | null = null;

/**
 * Whether a password is one attackers try first: on the list of common and breached passwords
 * (letter case ignored), or such a password repeated ("qwertyqwerty").
 */
export function isCommonPassword(password: string): boolean {
  common ??= new Set(dictionary["passwords-common"].map((p) => p.toLowerCase()));
  const p = password.normalize("NFC").trim().toLowerCase();
  if (common.has(p)) return true;
  for (let unit = 1; unit <= p.length / 2; unit++) {
    if (p.length % unit === 0 && p.slice(0, unit).repeat(p.length / unit) === p)
      return common.has(p.slice(0, unit));
  }
  return false;
}

/**
 * NIST SP 800-63B: a length floor, no composition rules, not the e-mail address itself, not a
 * common or breached password.
 */
export function checkPasswordPolicy(password: string, email?: string): void {
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH)
    throw new AppError("WEAK_PASSWORD", `The password needs at least ${PASSWORD_MIN_LENGTH} characters.`);
  if (length > PASSWORD_MAX_LENGTH)
    throw new AppError("WEAK_PASSWORD", `The password may have at most ${PASSWORD_MAX_LENGTH} characters.`);
  if (email && password.trim().toLowerCase() === email.trim().toLowerCase())
    throw new AppError("WEAK_PASSWORD", "The password must not be the e-mail address.");
  if (new Set(password).size < 3) throw new AppError("WEAK_PASSWORD", "The password is too repetitive.");
  if (isCommonPassword(password))
    throw new AppError(
      "COMMON_PASSWORD",
      "This password is on a list of common and breached passwords that attackers try first; choose another, for example a few unrelated words.",
    );
}

export interface PasswordStrength {
  /** 0: refused; 1 to 4: accepted, from easy to guess to very strong. */
  score: 0 | 1 | 2 | 3 | 4;
  acceptable: boolean;
  code: null | "WEAK_PASSWORD" | "COMMON_PASSWORD" | "TOO_SHORT";
  hint: string;
}

function charsetOf(c: string): number {
  if (/[a-z]/.test(c)) return 26;
  if (/[A-Z]/.test(c)) return 26;
  if (/[0-9]/.test(c)) return 10;
  if (/[\x20-\x7e]/.test(c)) return 33;
  return 100;
}

/**
 * A rough estimate of the bits an attacker must guess: the character classes used give the
 * alphabet; a character already seen, or one that continues a run (abc, 321), costs 1 bit; the
 * longest piece that is a common password (4 characters or more) costs what picking it from the
 * list costs (~16 bits) instead of its characters.
 */
function estimateBits(password: string): number {
  const chars = [...password.normalize("NFC")];
  const lower = chars.map((c) => c.toLowerCase());
  const alphabet = [...new Set(chars.map(charsetOf))].reduce((a, b) => a + b, 0);
  common ??= new Set(dictionary["passwords-common"].map((p) => p.toLowerCase()));
  const perChar = Math.log2(Math.max(alphabet, 2));
  const listBits = Math.log2(common.size);
  const seen = new Set<string>();
  let bits = 0;
  let i = 0;
  while (i < chars.length) {
    let word = 0;
    // The list's entries are at most 20 characters long: the search stays linear in the length.
    for (let end = Math.min(chars.length, i + 20); end >= i + 4; end--) {
      if (common.has(lower.slice(i, end).join(""))) {
        word = end - i;
        break;
      }
    }
    if (word > 0) {
      bits += listBits;
      for (const c of lower.slice(i, i + word)) seen.add(c);
      i += word;
      continue;
    }
    const c = lower[i];
    const prev = i > 0 ? lower[i - 1].codePointAt(0)! : -2;
    const step = Math.abs(c.codePointAt(0)! - prev);
    bits += seen.has(c) || step <= 1 ? 1 : perChar;
    seen.add(c);
    i++;
  }
  return bits;
}

/**
 * How strong a password is, by the rules registration applies (checkPasswordPolicy): a password
 * the policy refuses scores 0 with the policy's code, except that one shorter than the minimum
 * says TOO_SHORT (registration answers WEAK_PASSWORD for it). Accepted passwords score 1 to 4 by
 * estimateBits. The console shows it while a person types; nothing here logs or keeps the password.
 */
export function passwordStrength(password: string, email?: string): PasswordStrength {
  if ([...password].length < PASSWORD_MIN_LENGTH)
    return {
      score: 0,
      acceptable: false,
      code: "TOO_SHORT",
      hint: `Use at least ${PASSWORD_MIN_LENGTH} characters; a few unrelated words are easy to remember and hard to guess.`,
    };
  try {
    checkPasswordPolicy(password, email);
  } catch (e) {
    if (e instanceof AppError && (e.code === "WEAK_PASSWORD" || e.code === "COMMON_PASSWORD"))
      return { score: 0, acceptable: false, code: e.code, hint: e.message };
    throw e;
  }
  const bits = estimateBits(password);
  if (bits < 28)
    return {
      score: 1,
      acceptable: true,
      code: null,
      hint: "Accepted, but easy to guess: add another word or make it longer.",
    };
  if (bits < 36)
    return {
      score: 2,
      acceptable: true,
      code: null,
      hint: "Accepted; a little longer would make it much harder to guess.",
    };
  if (bits < 50) return { score: 3, acceptable: true, code: null, hint: "A strong password." };
  return { score: 4, acceptable: true, code: null, hint: "A very strong password." };
}
