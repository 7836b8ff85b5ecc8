import { useMutation } from "@tanstack/react-query";
import { useForm } from "react-hook-form";
import { post, setCsrfToken } from "../../../api";
import { useSession } from "../../../session";
import { Link } from "react-router";
import { ErrorMessage, Field, Notice, PageTitle } from "../../../ui";
import { useStrength } from "../api/password-strength";
import { fieldError, NEW_PASSWORD_RULES, NewPasswordField } from "./auth-card";

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
      <PageTitle>Change your password</PageTitle>
      <p className="subtitle">Signed in as {account?.email}. Your other sessions end when you change it.</p>
      {account?.hasPassword === false ? (
        <section className="card">
          <p>
            This account has no password yet: it signs in with the one-time link that{" "}
            <code>omniname start</code> prints. Set a password with{" "}
            <Link className="text-link" to="/forgot-password">
              "Forgot your password?"
            </Link>
            ; in the embedded setup the mail lands in the server's outbox (<code>DATA_DIR/outbox/</code>).
          </p>
        </section>
      ) : (
        <section className="card">
          <form className="form" noValidate onSubmit={form.handleSubmit((v) => change.mutate(v))}>
            <Field
              label="Current password"
              error={
                form.formState.errors.currentPassword?.message ?? fieldError(err, ["INVALID_CREDENTIALS"])
              }
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
            <NewPasswordField
              label="New password"
              input={form.register("newPassword", {
                ...NEW_PASSWORD_RULES,
                required: "Choose a new password.",
              })}
              error={form.formState.errors.newPassword?.message}
              serverError={err}
              strength={strength}
            />
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
      )}
    </div>
  );
}
