import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { ApiError, get, put } from "../../../api";
import type { Security } from "../../../types";
import { Card, ErrorMessage, Field, formatDateTime, Loading, Notice, nf, PageHeader } from "../../../ui";
import { TwoFactorRuleCard } from "../../two-factor/components/two-factor-rule-card";
import { useProject } from "../../../project-context";

const lines = (s: string) =>
  s
    .split(/[\n,]+/)
    .map((x) => x.trim())
    .filter(Boolean);

/**
 * The browser's check before sending, worded as messages.ts words the server's (the server's
 * check is the authority): IPv4 numbers 0 to 255, a prefix length within the address's bits.
 */
function checkIp(v: string): string | null {
  const notIp = `"${v}" is not an IP address or range. Write one such as 203.0.113.7 or 10.0.0.0/8.`;
  const [addr, prefix, extra] = v.split("/");
  if (extra !== undefined) return notIp;
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(addr);
  if (v4) {
    if (v4.slice(1).some((n) => Number(n) > 255))
      return `${v}: each number of an IPv4 address is between 0 and 255.`;
  } else if (!(addr.includes(":") && /^[0-9a-fA-F:.]+$/.test(addr))) return notIp;
  const bits = v4 ? 32 : 128;
  if (prefix !== undefined && (!/^\d{1,3}$/.test(prefix) || Number(prefix) > bits))
    return `${v}: the prefix length after "/" must be between 0 and ${bits}.`;
  return null;
}

function checkOrigin(v: string): string | null {
  return /^https?:\/\/(\*\.)?[A-Za-z0-9.-]+(:\d+)?$/.test(v)
    ? null
    : `"${v}" is not an origin. Write it as https://app.example.com (a port is optional).`;
}

export function SecurityPage() {
  const { project, can } = useProject();
  const client = useQueryClient();
  const key = ["security", project.id];
  const q = useQuery({ queryKey: key, queryFn: () => get<Security>(`/projects/${project.id}/security`) });
  const editable = can("security.write");
  const [ips, setIps] = useState("");
  const [origins, setOrigins] = useState("");
  useEffect(() => {
    if (q.data) {
      setIps(q.data.allowedIps.join("\n"));
      setOrigins(q.data.allowedOrigins.join("\n"));
    }
  }, [q.data]);
  const save = useMutation({
    mutationFn: (v: { allowedIps: string[]; allowedOrigins: string[] }) =>
      put<Security>(`/projects/${project.id}/security`, v),
    onSuccess: (s) => client.setQueryData(key, s),
  });
  const ipErrors = lines(ips).map(checkIp).filter(Boolean);
  const originErrors = lines(origins).map(checkOrigin).filter(Boolean);
  const err = save.error;
  const serverIpErr =
    err instanceof ApiError &&
    /ip|cidr|address/i.test(err.serverMessage) &&
    !/origin/i.test(err.serverMessage)
      ? err.message
      : null;
  const serverOriginErr = err instanceof ApiError && /origin/i.test(err.serverMessage) ? err.message : null;
  if (q.isPending) return <Loading label="Loading security settings" />;
  if (q.isError) return <ErrorMessage error={q.error} retry={() => q.refetch()} />;
  const l = q.data.limits;
  return (
    <div>
      <PageHeader title="Security" subtitle="Restrict where your API keys may be used from." />
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (ipErrors.length === 0 && originErrors.length === 0)
            save.mutate({ allowedIps: lines(ips), allowedOrigins: lines(origins) });
        }}
      >
        <div className="grid-2">
          <Card title="Allowed IP addresses">
            <Field
              label="IP addresses and CIDR ranges, one per line"
              hint="Empty: any address. IPv4 and IPv6, up to 100 entries."
              error={ipErrors[0] ?? serverIpErr}
            >
              {(p) => (
                <textarea
                  {...p}
                  rows={6}
                  className="mono"
                  value={ips}
                  readOnly={!editable}
                  placeholder={"203.0.113.7\n198.51.100.0/24"}
                  onChange={(e) => {
                    setIps(e.target.value);
                    save.reset();
                  }}
                />
              )}
            </Field>
          </Card>
          <Card title="Allowed origins">
            <Field
              label="Browser origins, one per line"
              hint="Empty: any origin. A wildcard allows subdomains: https://*.example.com."
              error={originErrors[0] ?? serverOriginErr}
            >
              {(p) => (
                <textarea
                  {...p}
                  rows={6}
                  className="mono"
                  value={origins}
                  readOnly={!editable}
                  placeholder={"https://app.example.com"}
                  onChange={(e) => {
                    setOrigins(e.target.value);
                    save.reset();
                  }}
                />
              )}
            </Field>
          </Card>
        </div>
        {err && !serverIpErr && !serverOriginErr && <ErrorMessage error={err} />}
        {save.isSuccess && <Notice tone="success">Saved. The allowlists apply within seconds.</Notice>}
        {editable ? (
          <div className="form-actions form-actions-left">
            <button type="submit" className="btn btn-primary" disabled={save.isPending}>
              Save allowlists
            </button>
            <span className="muted small">Last changed {formatDateTime(q.data.updatedAt)}</span>
          </div>
        ) : (
          <p className="muted small">Owners and admins can change the allowlists.</p>
        )}
      </form>
      <TwoFactorRuleCard projectId={project.id} editable={editable} />
      <Card title={`Plan limits (${l.name})`}>
        <dl className="deflist deflist-row">
          <dt>Requests per second per key</dt>
          <dd>{nf.format(l.requestsPerSecond)}</dd>
          <dt>Monthly quota</dt>
          <dd>{nf.format(l.monthlyQuota)}</dd>
          <dt>Projects an owner may have</dt>
          <dd>{nf.format(l.maxProjects)}</dd>
          <dt>API keys</dt>
          <dd>{nf.format(l.maxKeys)}</dd>
          <dt>Members</dt>
          <dd>{nf.format(l.maxMembers)}</dd>
        </dl>
      </Card>
    </div>
  );
}
