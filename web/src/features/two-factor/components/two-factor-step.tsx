import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { post } from "../../../api";
import type { AccountAnswer } from "../../../types";
import { ErrorMessage, Field } from "../../../ui";
import { fieldMessage } from "../api/two-factor.api";

/**
 * The second step of a sign-in: a code of the app, or one of the recovery codes. `onSignedIn`
 * gets the session as the password step would have given it.
 */
export function TwoFactorStep({
  challengeToken,
  onSignedIn,
}: {
  challengeToken: string;
  onSignedIn: (me: AccountAnswer) => void;
}) {
  const [recovery, setRecovery] = useState(false);
  const [value, setValue] = useState("");
  const verify = useMutation({
    mutationFn: () =>
      post<AccountAnswer>(
        "/auth/login/two-factor",
        recovery ? { challengeToken, recoveryCode: value } : { challengeToken, code: value },
        { public: true },
      ),
    onSuccess: onSignedIn,
  });
  const field = recovery ? "recoveryCode" : "code";
  const error = fieldMessage(verify.error, field);
  return (
    <form
      className="form"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        verify.mutate();
      }}
    >
      <p>
        {recovery
          ? "Enter one of the recovery codes you stored when you turned on two-factor sign-in. Each works once."
          : "Enter the 6-digit code your authenticator app shows for omniname."}
      </p>
      <Field label={recovery ? "Recovery code" : "Authentication code"} error={error}>
        {(p) => (
          <input
            {...p}
            key={field}
            // The step replaces the password form: its one field takes the focus at once.
            // biome-ignore lint/a11y/noAutofocus: the only field of a step the person just asked for
            autoFocus
            inputMode={recovery ? "text" : "numeric"}
            autoComplete={recovery ? "off" : "one-time-code"}
            maxLength={recovery ? 40 : 20}
            value={value}
            onChange={(e) => setValue(e.target.value)}
          />
        )}
      </Field>
      {verify.error && !error && <ErrorMessage error={verify.error} />}
      <button type="submit" className="btn btn-primary btn-block" disabled={verify.isPending}>
        {verify.isPending ? "Checking…" : "Verify"}
      </button>
      <button
        type="button"
        className="btn btn-link"
        onClick={() => {
          setRecovery(!recovery);
          setValue("");
          verify.reset();
        }}
      >
        {recovery ? "Use a code of the app instead" : "Use a recovery code instead"}
      </button>
    </form>
  );
}
