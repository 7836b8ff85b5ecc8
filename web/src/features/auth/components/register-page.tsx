import { useMutation, useQuery } from "@tanstack/react-query";
import { useForm } from "react-hook-form";
import { Link, useSearchParams } from "react-router";
import { get, post } from "../../../api";
import type { InvitationInfo } from "../../../types";
import { ErrorMessage, Field, Loading, Notice } from "../../../ui";
import { PUBLIC, useStrength } from "../api/password-strength";
import { AuthCard, fieldError, NEW_PASSWORD_RULES, NewPasswordField } from "./auth-card";

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
        <NewPasswordField
          label="Password"
          input={form.register("password", NEW_PASSWORD_RULES)}
          error={form.formState.errors.password?.message}
          serverError={err}
          strength={strength}
        />
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
