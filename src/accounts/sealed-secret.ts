import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import { AppError } from "../domain/errors.js";

// Secrets the server must read back (a TOTP secret, a webhook's signing secret), encrypted at rest:
// AES-256-GCM with a key derived (HKDF-SHA-256) from the pepper per purpose; the owner's id is bound
// as AAD, so a sealed value copied onto another row does not open.

function key(pepper: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync("sha256", pepper, "omniname", purpose, 32));
}

export function sealSecret(pepper: string, purpose: string, ownerId: number, plain: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv("aes-256-gcm", key(pepper, purpose), iv);
  c.setAAD(Buffer.from(String(ownerId)));
  const body = Buffer.concat([c.update(plain, "utf8"), c.final()]);
  return ["v1", iv, c.getAuthTag(), body]
    .map((x) => (typeof x === "string" ? x : x.toString("base64url")))
    .join(".");
}

/** The plain secret; INTERNAL_ERROR "… is damaged" when the value is malformed or does not authenticate. */
export function openSecret(
  pepper: string,
  purpose: string,
  ownerId: number,
  sealed: string,
  what: string,
): string {
  const [v, iv, tag, body] = sealed.split(".");
  if (v !== "v1" || !iv || !tag || body === undefined)
    throw new AppError("INTERNAL_ERROR", `A stored ${what} is damaged.`);
  const d = createDecipheriv("aes-256-gcm", key(pepper, purpose), Buffer.from(iv, "base64url"));
  d.setAAD(Buffer.from(String(ownerId)));
  d.setAuthTag(Buffer.from(tag, "base64url"));
  return Buffer.concat([d.update(Buffer.from(body, "base64url")), d.final()]).toString("utf8");
}
