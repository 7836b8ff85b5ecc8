import { useMutation } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import { Link, useSearchParams } from "react-router";
import { post } from "../../../api";
import { ErrorMessage, Field, Loading, Notice } from "../../../ui";
import { PUBLIC } from "../api/password-strength";
import { AuthCard } from "./auth-card";

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
