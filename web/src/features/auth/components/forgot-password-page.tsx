import { useMutation } from "@tanstack/react-query";
import { useForm } from "react-hook-form";
import { Link } from "react-router";
import { post } from "../../../api";
import { ErrorMessage, Notice } from "../../../ui";
import { PUBLIC } from "../api/password-strength";
import { AuthCard, EMAIL_RULES, EmailField } from "./auth-card";

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
          <EmailField
            input={form.register("email", EMAIL_RULES)}
            error={form.formState.errors.email?.message}
          />
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
