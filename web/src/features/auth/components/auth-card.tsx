import type { ReactNode } from "react";
import type { UseFormRegisterReturn } from "react-hook-form";
import { ApiError } from "../../../api";
import type { PasswordStrength } from "../../../types";
import { Field } from "../../../ui";

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
        <h1>{title}</h1>
        {intro && <div className="auth-intro">{intro}</div>}
        {children}
      </div>
      <p className="auth-foot">omniname · Web3 name resolution for businesses</p>
    </div>
  );
}

const STRENGTH = ["Too weak", "Weak", "Fair", "Strong", "Very strong"];

export function StrengthHint({ strength }: { strength: PasswordStrength | null }) {
  if (strength === null)
    return <span>At least 10 characters. A few unrelated words make a strong password.</span>;
  return (
    <span className="strength" aria-live="polite">
      <meter
        min={0}
        max={4}
        low={2}
        high={3}
        optimum={4}
        value={strength.score}
        aria-label="Password strength"
      />
      <strong className={strength.acceptable ? "ok" : "bad"}>{STRENGTH[strength.score]}</strong>
      <span> · {strength.hint}</span>
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
  return (
    <Field
      label={label}
      error={error ?? fieldError(serverError, ["WEAK_PASSWORD", "COMMON_PASSWORD"])}
      hint={<StrengthHint strength={strength} />}
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
