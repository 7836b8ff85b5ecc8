import type { ReactNode } from "react";
import type { UseFormRegisterReturn } from "react-hook-form";
import { ApiError } from "../../../api";
import type { PasswordStrength } from "../../../types";
import { Field, PageTitle } from "../../../ui";

export function AuthCard({
  title,
  intro,
  children,
}: {
  title: string;
  intro?: ReactNode;
  children: ReactNode;
}) {
  return (
    <div className="auth">
      <div className="auth-card">
        <PageTitle>{title}</PageTitle>
        {intro && <div className="auth-intro">{intro}</div>}
        {children}
      </div>
      <p className="auth-foot">omniname · Web3 name resolution for businesses</p>
    </div>
  );
}

const STRENGTH = ["Too weak", "Weak", "Fair", "Strong", "Very strong"];

/** The shape of an e-mailed link's token (tokens.ts: 32 random bytes, base64url). */
export const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** The rules of an e-mail address in the browser (the server checks it again). */
export const EMAIL_RULES = {
  required: "Enter your e-mail address.",
  maxLength: { value: 254, message: "An e-mail address has at most 254 characters." },
  pattern: {
    value: /^[^\s@]+@[^\s@]+\.[^\s@]+$/,
    message: "Enter an e-mail address such as name@company.com.",
  },
} as const;

/**
 * The server's verdict as the password is typed. A password the server refuses (too common, the
 * e-mail address) is never called strong, whatever its score; and when the same refusal is shown
 * under the field (`refused`), the hint does not say it a second time.
 */
export function StrengthHint({
  strength,
  refused = false,
}: {
  strength: PasswordStrength | null;
  refused?: boolean;
}) {
  if (strength === null)
    return <span>At least 10 characters. A few unrelated words make a strong password.</span>;
  const score = strength.acceptable ? strength.score : Math.min(strength.score, 1);
  return (
    <span className="strength" aria-live="polite">
      <meter min={0} max={4} low={2} high={3} optimum={4} value={score} aria-label="Password strength" />
      <strong className={strength.acceptable ? "ok" : "bad"}>
        {strength.acceptable ? STRENGTH[score] : "Not accepted"}
      </strong>
      {!refused && <span> · {strength.hint}</span>}
    </span>
  );
}

/** A field error from the server's answer, when the code concerns that field. */
export function fieldError(error: unknown, codes: string[]): string | null {
  return error instanceof ApiError && codes.includes(error.code) ? error.message : null;
}

/** The rules a new password is held to in the browser (the server checks them again, and more). */
export const NEW_PASSWORD_RULES = {
  required: "Choose a password.",
  minLength: { value: 10, message: "At least 10 characters." },
} as const;

/** A new password with the server's strength hint; its refusals by the server shown under it. */
export function NewPasswordField({
  label,
  input,
  error,
  serverError,
  strength,
}: {
  label: string;
  input: UseFormRegisterReturn;
  error?: string;
  serverError: unknown;
  strength: PasswordStrength | null;
}) {
  const refused = error ?? fieldError(serverError, ["WEAK_PASSWORD", "COMMON_PASSWORD"]);
  return (
    <Field
      label={label}
      error={refused}
      hint={<StrengthHint strength={strength} refused={Boolean(refused)} />}
    >
      {(p) => <input {...p} type="password" autoComplete="new-password" {...input} />}
    </Field>
  );
}

/** The account's e-mail address, as typed on the signed-out forms. */
export function EmailField({ input, error }: { input: UseFormRegisterReturn; error?: string }) {
  return (
    <Field label="E-mail address" error={error}>
      {(p) => <input {...p} type="email" autoComplete="username" {...input} />}
    </Field>
  );
}
