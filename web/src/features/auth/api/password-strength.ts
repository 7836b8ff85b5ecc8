import { useEffect, useState } from "react";
import { post } from "../../../api";
import type { PasswordStrength } from "../../../types";

/** Signed-out calls: a 401 is an answer there, not a lost session. */
export const PUBLIC = { public: true } as const;

/** The server's verdict on a password as it is typed (same rules as registration), debounced. */
export function useStrength(password: string, email?: string): PasswordStrength | null {
  const [result, setResult] = useState<PasswordStrength | null>(null);
  useEffect(() => {
    if (password.length === 0) {
      setResult(null);
      return;
    }
    let live = true;
    const t = window.setTimeout(() => {
      post<PasswordStrength>("/auth/password-strength", { password, ...(email ? { email } : {}) }, PUBLIC)
        .then((r) => live && setResult(r))
        .catch(() => live && setResult(null)); // the hint is a help; submitting still checks
    }, 350);
    return () => {
      live = false;
      window.clearTimeout(t);
    };
  }, [password, email]);
  return result;
}
