import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { useForm } from "react-hook-form";
import { Link, useNavigate, useSearchParams } from "react-router";
import { ApiError, post, setCsrfToken } from "../../../api";
import { ACCOUNT_KEY, safeNext, useSession } from "../../../session";
import type { AccountAnswer, LoginAnswer } from "../../../types";
import { ErrorMessage, Field, Notice } from "../../../ui";
import { PUBLIC } from "../api/password-strength";
import { TwoFactorStep } from "../../two-factor/components/two-factor-step";
import { AuthCard, EMAIL_RULES, EmailField } from "./auth-card";

export function SignInPage() {
  const [params] = useSearchParams();
  const next = safeNext(params.get("next"));
  const navigate = useNavigate();
  const client = useQueryClient();
  const { account } = useSession();
  const form = useForm<{ email: string; password: string }>({ defaultValues: { email: "", password: "" } });
  // With two-factor sign-in on, the password answers a token for the second step instead of a session.
  const [challenge, setChallenge] = useState<string | null>(null);
  const signedIn = (me: AccountAnswer) => {
    setCsrfToken(me.csrfToken);
    client.setQueryData(ACCOUNT_KEY, me.account);
    navigate(next, { replace: true });
  };
  const login = useMutation({
    mutationFn: (v: { email: string; password: string }) => post<LoginAnswer>("/auth/login", v, PUBLIC),
    onSuccess: (r) => ("twoFactorRequired" in r ? setChallenge(r.challengeToken) : signedIn(r)),
  });
  const resend = useMutation({
    mutationFn: (email: string) => post("/auth/resend-verification", { email }, PUBLIC),
  });
  useEffect(() => {
    if (account && !login.isPending && !login.isSuccess) navigate(next, { replace: true });
  }, [account, login.isPending, login.isSuccess, navigate, next]);
  const err = login.error;
  const notVerified = err instanceof ApiError && err.code === "EMAIL_NOT_VERIFIED";
  if (challenge !== null)
    return (
      <AuthCard title="Two-factor sign-in" intro="Your password is right. One more step.">
        <TwoFactorStep challengeToken={challenge} onSignedIn={signedIn} />
        <p className="auth-links">
          <button type="button" className="btn btn-link" onClick={() => setChallenge(null)}>
            Start again
          </button>
        </p>
      </AuthCard>
    );
  return (
    <AuthCard title="Sign in" intro="Welcome back. Sign in to manage your projects and API keys.">
      {params.get("expired") && (
        <Notice tone="warning">Your session has ended. Sign in to continue where you were.</Notice>
      )}
      {params.get("signedOut") && <Notice>You are signed out.</Notice>}
      {params.get("verified") && (
        <Notice tone="success">Your e-mail address is verified. You can sign in now.</Notice>
      )}
      {params.get("reset") && (
        <Notice tone="success">Your password is changed. Sign in with the new one.</Notice>
      )}
      <form className="form" noValidate onSubmit={form.handleSubmit((v) => login.mutate(v))}>
        <EmailField
          input={form.register("email", EMAIL_RULES)}
          error={form.formState.errors.email?.message}
        />
        <Field label="Password" error={form.formState.errors.password?.message}>
          {(p) => (
            <input
              {...p}
              type="password"
              autoComplete="current-password"
              {...form.register("password", { required: "Enter your password." })}
            />
          )}
        </Field>
        {err && !notVerified && <ErrorMessage error={err} />}
        {notVerified && (
          <div className="alert alert-warning" role="alert">
            <span>Your e-mail address is not verified yet. Open the link we sent you, or get a new one.</span>
            <button
              type="button"
              className="btn btn-small btn-secondary"
              disabled={resend.isPending || resend.isSuccess}
              onClick={() => resend.mutate(form.getValues("email"))}
            >
              {resend.isSuccess ? "Link sent" : "Send a new link"}
            </button>
          </div>
        )}
        <button type="submit" className="btn btn-primary btn-block" disabled={login.isPending}>
          {login.isPending ? "Signing in…" : "Sign in"}
        </button>
      </form>
      <p className="auth-links">
        <Link to="/forgot-password">Forgot your password?</Link>
      </p>
      <p className="muted small">
        Accounts are by invitation: open the link in your invitation e-mail to register.
      </p>
    </AuthCard>
  );
}
