import { Link } from "react-router";
import { Card, ErrorMessage, Loading, Notice, Switch } from "../../../ui";
import { useTwoFactorRule } from "../api/two-factor.api";

/** The project's rule: members without two-factor sign-in are stopped until they turn it on. */
export function TwoFactorRuleCard({ projectId, editable }: { projectId: number; editable: boolean }) {
  const { rule, save } = useTwoFactorRule(projectId);
  return (
    <Card title="Two-factor sign-in">
      {rule.isPending ? (
        <Loading label="Loading the two-factor rule" />
      ) : rule.isError ? (
        <ErrorMessage error={rule.error} retry={() => rule.refetch()} />
      ) : (
        <>
          <Switch
            label="Require two-factor sign-in of every member"
            description="A member without it is asked to turn it on before seeing this project."
            checked={rule.data.required}
            disabled={!editable || save.isPending}
            onChange={(on) => save.mutate(on)}
          />
          <ErrorMessage error={save.error} />
          {save.error && (
            <p className="small">
              <Link to="/account/two-factor">Set up two-factor sign-in for your account</Link>
            </p>
          )}
          {save.isSuccess && (
            <Notice tone="success">
              {rule.data.required
                ? "Saved. Members without two-factor sign-in are stopped from now on."
                : "Saved. Two-factor sign-in is no longer required."}
            </Notice>
          )}
          {!editable && <p className="muted small">Owners and admins can change this rule.</p>}
        </>
      )}
    </Card>
  );
}
