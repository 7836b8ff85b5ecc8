import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { useForm } from "react-hook-form";
import { Link, useNavigate, useSearchParams } from "react-router";
import { ApiError, get, post, setCsrfToken } from "../api";
import { ACCOUNT_KEY, safeNext, useSession } from "../session";
import type { AccountAnswer, InvitationInfo, PasswordStrength } from "../types";
import { ErrorMessage, Field, Loading, Notice } from "../ui";

const PUBLIC = { public: true } as const;

function AuthCard({
  title,
  intro,
  children,
}: {
  title: string;
  intro?: React.ReactNode;
  children: React.ReactNode;
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

/** The server's verdict on a password as it is typed (same rules as registration), debounced. */
function useStrength(password: string, email?: string): PasswordStrength | null {
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

function StrengthHint({ strength }: { strength: PasswordStrength | null }) {
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
function fieldError(error: unknown, codes: string[]): string | null {
  return error instanceof ApiError && codes.includes(error.code) ? error.message : null;
}

export function SignInPage() {
  const [params] = useSearchParams();
  const next = safeNext(params.get("next"));
  const navigate = useNavigate();
  const client = useQueryClient();
  const { account } = useSession();
  const form = useForm<{ email: string; password: string }>({ defaultValues: { email: "", password: "" } });
  const login = useMutation({
    mutationFn: (v: { email: string; password: string }) => post<AccountAnswer>("/auth/login", v, PUBLIC),
    onSuccess: (me) => {
      setCsrfToken(me.csrfToken);
      client.setQueryData(ACCOUNT_KEY, me.account);
      navigate(next, { replace: true });
    },
  });
  const resend = useMutation({
    mutationFn: (email: string) => post("/auth/resend-verification", { email }, PUBLIC),
  });
  useEffect(() => {
    if (account && !login.isPending && !login.isSuccess) navigate(next, { replace: true });
  }, [account, login.isPending, login.isSuccess, navigate, next]);
  const err = login.error;
  const notVerified = err instanceof ApiError && err.code === "EMAIL_NOT_VERIFIED";
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
        <Field label="E-mail address" error={form.formState.errors.email?.message}>
          {(p) => (
            <input
              {...p}
              type="email"
              autoComplete="username"
              {...form.register("email", { required: "Enter your e-mail address." })}
            />
          )}
        </Field>
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

interface RegisterForm {
  fullName: string;
  password: string;
  acceptTerms: boolean;
}

export function RegisterPage() {
  const [params] = useSearchParams();
  const token = params.get("token") ?? "";
  const info = useQuery({
    queryKey: ["invitation", token],
    queryFn: () => get<InvitationInfo>(`/auth/invitation?token=${encodeURIComponent(token)}`, PUBLIC),
    enabled: token !== "",
    retry: false,
  });
  const form = useForm<RegisterForm>({ defaultValues: { fullName: "", password: "", acceptTerms: false } });
  const password = form.watch("password");
  const strength = useStrength(password, info.data?.email);
  const register = useMutation({
    mutationFn: (v: RegisterForm) =>
      post("/auth/register", { invitationToken: token, email: info.data!.email, ...v }, PUBLIC),
  });

  if (token === "")
    return (
      <AuthCard title="Accept your invitation">
        <ErrorMessage error="This page needs the link from your invitation e-mail." />
      </AuthCard>
    );
  if (info.isPending) return <Loading label="Checking your invitation" />;
  if (info.isError)
    return (
      <AuthCard title="Accept your invitation">
        <ErrorMessage error={info.error} />
        <p>
          Invitations are valid for 7 days and can be used once. Ask the person who invited you to send a new
          one, or <Link to="/sign-in">sign in</Link> if you already registered.
        </p>
      </AuthCard>
    );
  if (register.isSuccess)
    return (
      <AuthCard title="Check your mail">
        <Notice tone="success">
          We sent a verification link to <strong>{info.data.email}</strong>. Open it to activate your account,
          then sign in.
        </Notice>
        <p className="muted small">
          The link is valid for 48 hours. Nothing arrived? Check your spam folder.
        </p>
      </AuthCard>
    );
  const i = info.data;
  const err = register.error;
  return (
    <AuthCard
      title="Create your account"
      intro={
        <p>
          {i.invitedBy ? (
            <>
              <strong>{i.invitedBy.fullName}</strong> ({i.invitedBy.email}) invited you
            </>
          ) : (
            <>The omniname team invited you</>
          )}
          {i.project ? (
            <>
              {" "}
              to join <strong>{i.project.name}</strong> as <strong>{i.role}</strong>.
            </>
          ) : (
            <> to omniname.</>
          )}
        </p>
      }
    >
      <form className="form" noValidate onSubmit={form.handleSubmit((v) => register.mutate(v))}>
        <Field label="Full name" error={form.formState.errors.fullName?.message}>
          {(p) => (
            <input
              {...p}
              autoComplete="name"
              {...form.register("fullName", {
                required: "Enter your full name.",
                maxLength: { value: 200, message: "At most 200 characters." },
              })}
            />
          )}
        </Field>
        <Field label="E-mail address" hint="The invitation is for this address.">
          {(p) => <input {...p} type="email" value={i.email} readOnly autoComplete="username" />}
        </Field>
        <Field
          label="Password"
          error={
            form.formState.errors.password?.message ?? fieldError(err, ["WEAK_PASSWORD", "COMMON_PASSWORD"])
          }
          hint={<StrengthHint strength={strength} />}
        >
          {(p) => (
            <input
              {...p}
              type="password"
              autoComplete="new-password"
              {...form.register("password", {
                required: "Choose a password.",
                minLength: { value: 10, message: "At least 10 characters." },
              })}
            />
          )}
        </Field>
        <div className={`check ${form.formState.errors.acceptTerms ? "field-invalid" : ""}`}>
          <input
            id="terms"
            type="checkbox"
            aria-describedby={form.formState.errors.acceptTerms ? "terms-error" : undefined}
            {...form.register("acceptTerms", { validate: (v) => v || "Accept the terms to continue." })}
          />
          <label htmlFor="terms">I accept the terms of service and the data processing agreement.</label>
        </div>
        {(form.formState.errors.acceptTerms || fieldError(err, ["TERMS_NOT_ACCEPTED"])) && (
          <div className="field-error" id="terms-error" role="alert">
            {form.formState.errors.acceptTerms?.message ?? fieldError(err, ["TERMS_NOT_ACCEPTED"])}
          </div>
        )}
        {err && !fieldError(err, ["WEAK_PASSWORD", "COMMON_PASSWORD", "TERMS_NOT_ACCEPTED"]) && (
          <ErrorMessage error={err} />
        )}
        <button type="submit" className="btn btn-primary btn-block" disabled={register.isPending}>
          {register.isPending ? "Creating your account…" : "Create account"}
        </button>
      </form>
    </AuthCard>
  );
}

export function VerifyPage() {
  const [params] = useSearchParams();
  const token = params.get("token") ?? "";
  const started = useRef(false);
  const verify = useMutation({ mutationFn: () => post("/auth/verify-email", { token }, PUBLIC) });
  const [email, setEmail] = useState("");
  const resend = useMutation({ mutationFn: () => post("/auth/resend-verification", { email }, PUBLIC) });
  useEffect(() => {
    // Once, also under StrictMode's double effects: the token is single-use.
    if (token && !started.current) {
      started.current = true;
      verify.mutate();
    }
  }, [token, verify]);
  if (verify.isSuccess)
    return (
      <AuthCard title="E-mail address verified">
        <Notice tone="success">Thank you. Your account is active.</Notice>
        <Link className="btn btn-primary btn-block" to="/sign-in?verified=1">
          Sign in
        </Link>
      </AuthCard>
    );
  if (token && (verify.isPending || verify.isIdle)) return <Loading label="Verifying your e-mail address" />;
  return (
    <AuthCard title="Verify your e-mail address">
      <ErrorMessage
        error={token ? verify.error : "This page needs the link from your verification e-mail."}
      />
      <p>Verification links are valid for 48 hours and can be used once. Get a new one:</p>
      <form
        className="form"
        onSubmit={(e) => {
          e.preventDefault();
          resend.mutate();
        }}
      >
        <Field label="E-mail address">
          {(p) => (
            <input {...p} type="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
          )}
        </Field>
        <ErrorMessage error={resend.error} />
        {resend.isSuccess && (
          <Notice tone="success">
            If this address has an account waiting for verification, a new link is on its way.
          </Notice>
        )}
        <button type="submit" className="btn btn-secondary btn-block" disabled={resend.isPending}>
          Send a new link
        </button>
      </form>
    </AuthCard>
  );
}

export function ForgotPage() {
  const form = useForm<{ email: string }>({ defaultValues: { email: "" } });
  const send = useMutation({ mutationFn: (v: { email: string }) => post("/auth/password-reset", v, PUBLIC) });
  return (
    <AuthCard
      title="Reset your password"
      intro="Enter the address of your account; we will e-mail you a link to choose a new password."
    >
      {send.isSuccess ? (
        <Notice tone="success">
          If an account exists for this address, a reset link is on its way. It is valid for 60 minutes.
        </Notice>
      ) : (
        <form className="form" noValidate onSubmit={form.handleSubmit((v) => send.mutate(v))}>
          <Field label="E-mail address" error={form.formState.errors.email?.message}>
            {(p) => (
              <input
                {...p}
                type="email"
                autoComplete="username"
                {...form.register("email", { required: "Enter your e-mail address." })}
              />
            )}
          </Field>
          <ErrorMessage error={send.error} />
          <button type="submit" className="btn btn-primary btn-block" disabled={send.isPending}>
            Send the link
          </button>
        </form>
      )}
      <p className="auth-links">
        <Link to="/sign-in">Back to sign in</Link>
      </p>
    </AuthCard>
  );
}

export function ResetPage() {
  const [params] = useSearchParams();
  const token = params.get("token") ?? "";
  const navigate = useNavigate();
  const form = useForm<{ password: string }>({ defaultValues: { password: "" } });
  const strength = useStrength(form.watch("password"));
  const reset = useMutation({
    mutationFn: (v: { password: string }) => post("/auth/password-reset/confirm", { token, ...v }, PUBLIC),
    onSuccess: () => navigate("/sign-in?reset=1", { replace: true }),
  });
  const err = reset.error;
  return (
    <AuthCard title="Choose a new password">
      {token === "" && <ErrorMessage error="This page needs the link from your password reset e-mail." />}
      <form className="form" noValidate onSubmit={form.handleSubmit((v) => reset.mutate(v))}>
        <Field
          label="New password"
          error={
            form.formState.errors.password?.message ?? fieldError(err, ["WEAK_PASSWORD", "COMMON_PASSWORD"])
          }
          hint={<StrengthHint strength={strength} />}
        >
          {(p) => (
            <input
              {...p}
              type="password"
              autoComplete="new-password"
              {...form.register("password", {
                required: "Choose a password.",
                minLength: { value: 10, message: "At least 10 characters." },
              })}
            />
          )}
        </Field>
        {err && !fieldError(err, ["WEAK_PASSWORD", "COMMON_PASSWORD"]) && <ErrorMessage error={err} />}
        {err instanceof ApiError && err.code === "TOKEN_INVALID" && (
          <p>
            <Link to="/forgot-password">Ask for a new link</Link>
          </p>
        )}
        <button
          type="submit"
          className="btn btn-primary btn-block"
          disabled={reset.isPending || token === ""}
        >
          Set the new password
        </button>
      </form>
    </AuthCard>
  );
}

export function ChangePasswordPage() {
  const { account } = useSession();
  const form = useForm<{ currentPassword: string; newPassword: string }>({
    defaultValues: { currentPassword: "", newPassword: "" },
  });
  const strength = useStrength(form.watch("newPassword"), account?.email);
  const change = useMutation({
    mutationFn: (v: { currentPassword: string; newPassword: string }) =>
      post<{ csrfToken: string }>("/account/password", v),
    onSuccess: (r) => {
      setCsrfToken(r.csrfToken);
      form.reset();
    },
  });
  const err = change.error;
  return (
    <div className="narrow">
      <h1>Change your password</h1>
      <p className="subtitle">Signed in as {account?.email}. Your other sessions end when you change it.</p>
      <section className="card">
        <form className="form" noValidate onSubmit={form.handleSubmit((v) => change.mutate(v))}>
          <Field
            label="Current password"
            error={form.formState.errors.currentPassword?.message ?? fieldError(err, ["INVALID_CREDENTIALS"])}
          >
            {(p) => (
              <input
                {...p}
                type="password"
                autoComplete="current-password"
                {...form.register("currentPassword", { required: "Enter your current password." })}
              />
            )}
          </Field>
          <Field
            label="New password"
            error={
              form.formState.errors.newPassword?.message ??
              fieldError(err, ["WEAK_PASSWORD", "COMMON_PASSWORD"])
            }
            hint={<StrengthHint strength={strength} />}
          >
            {(p) => (
              <input
                {...p}
                type="password"
                autoComplete="new-password"
                {...form.register("newPassword", {
                  required: "Choose a new password.",
                  minLength: { value: 10, message: "At least 10 characters." },
                })}
              />
            )}
          </Field>
          {err && !fieldError(err, ["INVALID_CREDENTIALS", "WEAK_PASSWORD", "COMMON_PASSWORD"]) && (
            <ErrorMessage error={err} />
          )}
          {change.isSuccess && (
            <Notice tone="success">Your password is changed. Other sessions are signed out.</Notice>
          )}
          <button type="submit" className="btn btn-primary" disabled={change.isPending}>
            Change password
          </button>
        </form>
      </section>
    </div>
  );
}
