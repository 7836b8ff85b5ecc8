import { useState } from "react";
import { Link, useSearchParams } from "react-router";
import { safeNext } from "../../../session";
import { Card, ErrorMessage, Field, Loading, Notice, PageHeader } from "../../../ui";
import { fieldMessage, useTwoFactor } from "../api/two-factor.api";

/** The base32 secret in groups of four, as authenticator apps show it when typed by hand. */
const grouped = (s: string) => s.replace(/(.{4})/g, "$1 ").trim();

function CodeField({
  label,
  value,
  onChange,
  error,
}: {
  label: string;
  value: string;
  onChange: (v: string) => void;
  error: string | null;
}) {
  return (
    <Field label={label} hint="The 6 digits your authenticator app shows now." error={error}>
      {(p) => (
        <input
          {...p}
          inputMode="numeric"
          autoComplete="one-time-code"
          maxLength={20}
          value={value}
          onChange={(e) => onChange(e.target.value)}
        />
      )}
    </Field>
  );
}

function RecoveryCodes({
  codes,
  next,
  onDone,
}: {
  codes: string[];
  next: string | null;
  onDone: () => void;
}) {
  const [stored, setStored] = useState(false);
  return (
    <Card title="Your recovery codes">
      <Notice tone="warning">
        Store these ten codes somewhere safe, apart from your phone: each signs you in once if you lose your
        app. <strong>You will not see them again.</strong>
      </Notice>
      <ol className="recovery-codes mono" data-testid="recovery-codes">
        {codes.map((c) => (
          <li key={c}>{c}</li>
        ))}
      </ol>
      {stored ? (
        next && (
          <Link className="btn btn-primary" to={next}>
            Continue to the project
          </Link>
        )
      ) : (
        <button type="button" className="btn btn-primary" onClick={() => (next ? setStored(true) : onDone())}>
          I have stored them
        </button>
      )}
    </Card>
  );
}

export function TwoFactorPage() {
  const [params] = useSearchParams();
  const next = params.get("next") ? safeNext(params.get("next")) : null;
  const { status, setup, confirm, disable } = useTwoFactor();
  const [code, setCode] = useState("");
  const [off, setOff] = useState({ password: "", code: "" });
  /** Turning it off with a recovery code instead of the app's code (a lost phone). */
  const [offRecovery, setOffRecovery] = useState(false);
  /** The browser's own refusals of the turn-off form (empty fields), before any request. */
  const [offMissing, setOffMissing] = useState<{ password?: string; code?: string }>({});
  if (status.isPending) return <Loading label="Loading two-factor sign-in" />;
  if (status.isError) return <ErrorMessage error={status.error} retry={() => status.refetch()} />;
  const s = status.data;
  const confirmError = fieldMessage(confirm.error, "code");
  const offField = offRecovery ? "recoveryCode" : "code";
  const offCodeError = offMissing.code ?? fieldMessage(disable.error, offField);
  const offPasswordError = offMissing.password ?? fieldMessage(disable.error, "password");
  return (
    <div className="narrow">
      <PageHeader
        title="Two-factor sign-in"
        subtitle="A code from an authenticator app on your phone, asked for after your password."
      />
      {next && !s.enabled && (
        <Notice tone="warning">
          This project requires two-factor sign-in of its members. Turn it on to open the project.
        </Notice>
      )}
      {confirm.data ? (
        <RecoveryCodes codes={confirm.data.recoveryCodes} next={next} onDone={() => confirm.reset()} />
      ) : s.enabled ? (
        <Card title="Two-factor sign-in is on">
          <p>
            Each sign-in asks for a code of your app after your password. Recovery codes left:{" "}
            <strong>{s.recoveryCodesLeft}</strong> of 10.
          </p>
          <form
            className="form"
            noValidate
            onSubmit={(e) => {
              e.preventDefault();
              const missing = {
                password: off.password === "" ? "Enter your password." : undefined,
                code:
                  off.code.trim() === ""
                    ? offRecovery
                      ? "Enter one of your recovery codes."
                      : "Enter the 6-digit code your app shows now."
                    : undefined,
              };
              setOffMissing(missing);
              if (missing.password || missing.code) return;
              disable.mutate(
                offRecovery
                  ? { password: off.password, recoveryCode: off.code.trim() }
                  : { password: off.password, code: off.code.trim() },
              );
            }}
          >
            <h3>Turn it off</h3>
            <Field label="Password" error={offPasswordError}>
              {(p) => (
                <input
                  {...p}
                  type="password"
                  autoComplete="current-password"
                  value={off.password}
                  onChange={(e) => {
                    setOff({ ...off, password: e.target.value });
                    setOffMissing({ ...offMissing, password: undefined });
                    disable.reset();
                  }}
                />
              )}
            </Field>
            {offRecovery ? (
              <Field
                label="Recovery code"
                hint="One of the ten codes you stored when you turned it on. Each works once."
                error={offCodeError}
              >
                {(p) => (
                  <input
                    {...p}
                    autoComplete="off"
                    maxLength={40}
                    value={off.code}
                    onChange={(e) => {
                      setOff({ ...off, code: e.target.value });
                      setOffMissing({ ...offMissing, code: undefined });
                      disable.reset();
                    }}
                  />
                )}
              </Field>
            ) : (
              <CodeField
                label="Code from your app"
                value={off.code}
                onChange={(v) => {
                  setOff({ ...off, code: v });
                  setOffMissing({ ...offMissing, code: undefined });
                  disable.reset();
                }}
                error={offCodeError}
              />
            )}
            {disable.error && !offCodeError && !offPasswordError && <ErrorMessage error={disable.error} />}
            <div className="form-actions form-actions-left">
              <button type="submit" className="btn btn-secondary" disabled={disable.isPending}>
                Turn off two-factor sign-in
              </button>
              <button
                type="button"
                className="btn btn-link"
                onClick={() => {
                  setOffRecovery(!offRecovery);
                  setOff({ ...off, code: "" });
                  setOffMissing({});
                  disable.reset();
                }}
              >
                {offRecovery ? "Use a code of the app instead" : "Lost your phone? Use a recovery code"}
              </button>
            </div>
          </form>
        </Card>
      ) : setup.data ? (
        <Card title="Scan the QR code">
          <ol className="steps">
            <li>Open your authenticator app (any TOTP app: Google Authenticator, 1Password, Aegis…).</li>
            <li>Scan this code, or type the key below into the app.</li>
            <li>Enter the 6-digit code the app then shows.</li>
          </ol>
          <img
            className="qr"
            src={setup.data.qrCode}
            width={200}
            height={200}
            alt="QR code of your two-factor key, for your authenticator app"
          />
          <p className="small">
            Key: <code data-testid="totp-secret">{grouped(setup.data.secret)}</code>
          </p>
          <form
            className="form"
            noValidate
            onSubmit={(e) => {
              e.preventDefault();
              confirm.mutate(code);
            }}
          >
            <CodeField label="Code from your app" value={code} onChange={setCode} error={confirmError} />
            {confirm.error && !confirmError && <ErrorMessage error={confirm.error} />}
            <button type="submit" className="btn btn-primary" disabled={confirm.isPending}>
              Turn on two-factor sign-in
            </button>
          </form>
        </Card>
      ) : (
        <Card title="Two-factor sign-in is off">
          {disable.isSuccess && <Notice tone="success">Two-factor sign-in is off.</Notice>}
          <p>
            With it on, a stolen password is not enough to sign in: each sign-in also asks for a code that
            your phone makes every 30 seconds. You also get ten single-use recovery codes.
          </p>
          <ErrorMessage error={setup.error} />
          <button
            type="button"
            className="btn btn-primary"
            disabled={setup.isPending}
            onClick={() => setup.mutate()}
          >
            Set up two-factor sign-in
          </button>
        </Card>
      )}
    </div>
  );
}
