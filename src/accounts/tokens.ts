import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** A random one-time token: 256 bits, URL-safe. Only its hash is stored. */
export function newToken(): string {
  return randomBytes(32).toString("base64url");
}

/**
 * SHA-256 is enough for tokens: they carry 256 random bits, so there is nothing to brute-force and
 * no need for a slow hash; what matters is that a leaked table does not hold usable tokens.
 */
export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/** HMAC-SHA-256 under a purpose-bound key, base64url. */
export function sign(secret: string, purpose: string, value: string): string {
  return createHmac("sha256", `${purpose}\u0000${secret}`).update(value).digest("base64url");
}

export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Tokens arrive from attackers: a shape check before any lookup keeps junk out of the queries. */
export function isTokenShape(token: unknown): token is string {
  return typeof token === "string" && /^[A-Za-z0-9_-]{20,100}$/.test(token);
}
