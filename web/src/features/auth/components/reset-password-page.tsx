import { useMutation } from "@tanstack/react-query";
import { useForm } from "react-hook-form";
import { Link, useNavigate, useSearchParams } from "react-router";
import { ApiError, post } from "../../../api";
import { ErrorMessage } from "../../../ui";
import { PUBLIC, useStrength } from "../api/password-strength";
import { AuthCard, fieldError, NEW_PASSWORD_RULES, NewPasswordField, TOKEN_SHAPE } from "./auth-card";

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
  // A token the server could have sent (256 random bits, base64url): anything else is a damaged
  // or mistyped link, said at once rather than after a new password was typed.
  if (token !== "" && !TOKEN_SHAPE.test(token))
    return (
      <AuthCard title="Choose a new password">
        <ErrorMessage error="This link is incomplete or damaged. Copy the whole link from the e-mail, or ask for a new one." />
        <p>
          <Link to="/forgot-password">Ask for a new link</Link>
        </p>
      </AuthCard>
    );
  return (
    <AuthCard title="Choose a new password">
      {token === "" && <ErrorMessage error="This page needs the link from your password reset e-mail." />}
      <form className="form" noValidate onSubmit={form.handleSubmit((v) => reset.mutate(v))}>
        <NewPasswordField
          label="New password"
          input={form.register("password", NEW_PASSWORD_RULES)}
          error={form.formState.errors.password?.message}
          serverError={err}
          strength={strength}
        />
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
