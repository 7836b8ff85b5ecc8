import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useMemo, useRef, useState } from "react";
import { NETWORK_ORDER, NETWORKS } from "../../../src/domain/networks";
import { PROVIDER_ORDER, PROVIDERS } from "../../../src/domain/providers";
import { ApiError, get, post, put } from "../api";
import type { CollisionException, DryRunAnswer, Network, Provider, Settings } from "../types";
import { Badge, Card, Empty, ErrorMessage, Loading, Notice, PageHeader, Switch } from "../ui";
import { useProject } from "./project";

export const providerLabel = (p: Provider) => `${PROVIDERS[p].label}`;
const NETWORK_LABELS: Record<Network, string> = {
  ETHEREUM: "Ethereum",
  POLYGON: "Polygon",
  BSC: "BNB Smart Chain",
  AURORA: "Aurora",
  SOLANA: "Solana",
};
export const networkLabel = (n: Network) => NETWORK_LABELS[n] ?? n;

/** Whether a network or provider is served under a settings object (enabled lists win). */
function isOn<T extends string>(toggle: { enabled?: T[]; disabled?: T[] } | undefined, v: T): boolean {
  if (toggle?.enabled) return toggle.enabled.includes(v);
  return !(toggle?.disabled ?? []).includes(v);
}

function setOn<T extends string>(
  order: readonly T[],
  toggle: { enabled?: T[]; disabled?: T[] } | undefined,
  v: T,
  on: boolean,
): { disabled?: T[] } | undefined {
  const disabled = order.filter((x) => (x === v ? !on : !isOn(toggle, x)));
  return disabled.length === 0 ? undefined : { disabled };
}

/** Settings without empty parts, so that an unchanged draft compares equal to what is saved. */
function clean(s: Settings): Settings {
  const out: Settings = {};
  if (s.networks && (s.networks.enabled || s.networks.disabled?.length)) out.networks = s.networks;
  if (s.providers && (s.providers.enabled || s.providers.disabled?.length)) out.providers = s.providers;
  if (s.providerPriority?.length) out.providerPriority = s.providerPriority;
  if (s.exceptions?.length) out.exceptions = s.exceptions;
  if (s.includeExpired) out.includeExpired = true;
  return out;
}

const same = (a: Settings, b: Settings) => JSON.stringify(clean(a)) === JSON.stringify(clean(b));

/**
 * The settings being edited: the saved ones, a draft kept in sessionStorage (so a sign-in after a
 * lost session brings the unsaved changes back), save, and a dry run of the draft.
 */
function useSettingsDraft(projectId: number) {
  const client = useQueryClient();
  const storageKey = `omniname:draft:settings:${projectId}`;
  const saved = useQuery({
    queryKey: ["settings", projectId],
    queryFn: () => get<Settings>(`/projects/${projectId}/settings`),
  });
  const [draft, setDraftState] = useState<Settings | null>(null);
  const [restored, setRestored] = useState(false);
  useEffect(() => {
    if (saved.data && draft === null) {
      const kept = sessionStorage.getItem(storageKey);
      if (kept) {
        try {
          const d = JSON.parse(kept) as Settings;
          if (!same(d, saved.data)) {
            setDraftState(d);
            setRestored(true);
            return;
          }
        } catch {
          // ignored: a damaged draft is dropped
        }
      }
      setDraftState(saved.data);
    }
  }, [saved.data, draft, storageKey]);
  const setDraft = (next: Settings) => {
    setDraftState(next);
    dry.reset();
    save.reset();
    if (saved.data && !same(next, saved.data)) sessionStorage.setItem(storageKey, JSON.stringify(next));
    else sessionStorage.removeItem(storageKey);
  };
  const save = useMutation({
    mutationFn: (s: Settings) => put<Settings>(`/projects/${projectId}/settings`, clean(s)),
    onSuccess: (s) => {
      sessionStorage.removeItem(storageKey);
      client.setQueryData(["settings", projectId], s);
      setDraftState(s);
      setRestored(false);
    },
  });
  const dry = useMutation({
    mutationFn: (s: Settings) =>
      post<DryRunAnswer>(`/projects/${projectId}/settings/dry-run`, { settings: clean(s) }),
  });
  const dirty = draft !== null && saved.data !== undefined && !same(draft, saved.data);
  const discard = () => {
    if (saved.data) setDraft(saved.data);
    setRestored(false);
  };
  return { saved, draft, setDraft, save, dry, dirty, discard, restored };
}

type Draft = ReturnType<typeof useSettingsDraft>;

/** The namespace–network pairs a settings object serves. */
function servedPairs(s: Settings): { p: Provider; n: Network }[] {
  return PROVIDER_ORDER.filter((p) => !PROVIDERS[p].comingSoon && isOn(s.providers, p)).flatMap((p) =>
    (PROVIDERS[p].networks as readonly Network[])
      .filter((n) => !NETWORKS[n].comingSoon && isOn(s.networks, n))
      .map((n) => ({ p, n })),
  );
}
const pairKey = (x: { p: Provider; n: Network }) => `${x.p}:${x.n}`;

function Winner({ w }: { w: DryRunAnswer["names"][number]["before"] }) {
  if (w === null) return <span className="muted">not served</span>;
  return (
    <span>
      {providerLabel(w.namespace)} <span className="muted">on {networkLabel(w.network)}</span>
      <br />
      <code className="addr">{w.owner}</code>
    </span>
  );
}

function DryRunResult({ r }: { r: DryRunAnswer }) {
  const ref = useRef<HTMLElement>(null);
  // The answer appears below the settings: bring it into view.
  useEffect(() => {
    ref.current?.scrollIntoView({ block: "nearest" });
  }, []);
  return (
    <section ref={ref} className="card dryrun" aria-label="Dry run result" aria-live="polite">
      <h3>
        {r.changed === 0
          ? `No name changes winner (${r.scanned.toLocaleString("en-US")} names checked).`
          : r.changed === 1
            ? "1 name changes winner"
            : `${r.changed.toLocaleString("en-US")} names change winner`}
      </h3>
      {r.changed > 0 && (
        <>
          <p className="muted small">
            Out of {r.scanned.toLocaleString("en-US")} {r.scanned === 1 ? "name" : "names"} checked (the names
            this change can affect).
            {r.truncated ? ` The first ${r.names.length} are listed.` : ""}
          </p>
          <div className="table-wrap">
            <table className="table">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Winner now</th>
                  <th scope="col">Winner after saving</th>
                </tr>
              </thead>
              <tbody>
                {r.names.map((n) => (
                  <tr key={n.name}>
                    <td>
                      <strong>{n.name}</strong>
                    </td>
                    <td>
                      <Winner w={n.before} />
                    </td>
                    <td>
                      <Winner w={n.after} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}

/** Preview (dry run) and save, shown while the draft differs from what is saved. */
function SaveBar({ d, errorElsewhere }: { d: Draft; errorElsewhere: boolean }) {
  if (!d.dirty && !d.save.isSuccess) return null;
  return (
    <>
      {d.dry.data && d.dirty && <DryRunResult r={d.dry.data} />}
      <section className="savebar" aria-label="Unsaved changes">
        {d.save.isSuccess && !d.dirty ? (
          <Notice tone="success">Saved. The API applies the new settings within seconds.</Notice>
        ) : (
          <>
            {d.dry.error && !errorElsewhere && <ErrorMessage error={d.dry.error} />}
            {d.save.error && !errorElsewhere && <ErrorMessage error={d.save.error} />}
            <div className="savebar-actions">
              <span className="muted">You have unsaved changes.</span>
              <button type="button" className="btn btn-secondary" onClick={d.discard}>
                Discard
              </button>
              <button
                type="button"
                className="btn btn-secondary"
                disabled={d.dry.isPending}
                onClick={() => d.draft && d.dry.mutate(d.draft)}
              >
                {d.dry.isPending ? "Computing…" : "Preview impact (dry run)"}
              </button>
              <button
                type="button"
                className="btn btn-primary"
                disabled={d.save.isPending}
                onClick={() => d.draft && d.save.mutate(d.draft)}
              >
                {d.save.isPending ? "Saving…" : "Save changes"}
              </button>
            </div>
          </>
        )}
      </section>
    </>
  );
}

function useServerError(d: Draft): ApiError | null {
  const e = d.save.error ?? d.dry.error;
  return e instanceof ApiError && e.code === "INVALID_PARAMETER" ? e : null;
}

export function ResolutionPage() {
  const { project, can } = useProject();
  const d = useSettingsDraft(project.id);
  const editable = can("settings.write");
  const serverError = useServerError(d);
  if (d.saved.isPending || (d.draft === null && !d.saved.isError))
    return <Loading label="Loading settings" />;
  if (d.saved.isError) return <ErrorMessage error={d.saved.error} retry={() => d.saved.refetch()} />;
  const s = d.draft!;
  const activeProviders = PROVIDER_ORDER.filter((p) => !PROVIDERS[p].comingSoon && isOn(s.providers, p));
  const activeNetworks = NETWORK_ORDER.filter((n) => !NETWORKS[n].comingSoon && isOn(s.networks, n));
  const served = servedPairs(s);
  // The choice creates collisions when it serves a namespace on a network that was not served and
  // other namespaces or networks are served too: a name present in both now collides.
  const savedPairs = new Set(servedPairs(d.saved.data ?? {}).map(pairKey));
  const added = served.filter((x) => !savedPairs.has(pairKey(x)));
  const createsCollisions = added.length > 0 && served.length > 1;
  return (
    <div>
      <PageHeader
        title="Resolution settings"
        subtitle="Choose which networks and naming providers this project's API keys resolve."
      />
      {d.restored && (
        <Notice tone="warning">
          Your unsaved changes from before you signed in again are restored below.
        </Notice>
      )}
      {serverError && <ErrorMessage error={serverError} />}
      <div className="grid-2">
        <Card title="Networks">
          {NETWORK_ORDER.map((n) => (
            <Switch
              key={n}
              label={networkLabel(n)}
              description={NETWORKS[n].comingSoon ? <Badge tone="soon">Coming soon</Badge> : <code>{n}</code>}
              checked={!NETWORKS[n].comingSoon && isOn(s.networks, n)}
              disabled={!editable || NETWORKS[n].comingSoon}
              onChange={(on) => d.setDraft({ ...s, networks: setOn(NETWORK_ORDER, s.networks, n, on) })}
            />
          ))}
        </Card>
        <Card title="Providers">
          {PROVIDER_ORDER.map((p) => (
            <Switch
              key={p}
              label={providerLabel(p)}
              description={
                PROVIDERS[p].comingSoon ? (
                  <Badge tone="soon">Coming soon</Badge>
                ) : (
                  <>
                    <code>{p}</code> · {PROVIDERS[p].networks.map(networkLabel).join(", ")}
                  </>
                )
              }
              checked={!PROVIDERS[p].comingSoon && isOn(s.providers, p)}
              disabled={!editable || PROVIDERS[p].comingSoon}
              onChange={(on) => d.setDraft({ ...s, providers: setOn(PROVIDER_ORDER, s.providers, p, on) })}
            />
          ))}
        </Card>
      </div>
      <Card title="Options">
        <Switch
          label="Serve expired names"
          description="Expired names are tagged expired and rank below live ones."
          checked={Boolean(s.includeExpired)}
          disabled={!editable}
          onChange={(on) => d.setDraft({ ...s, includeExpired: on || undefined })}
        />
      </Card>
      {activeProviders.length === 0 && (
        <Notice tone="warning">No provider is enabled: every resolve answers "not found".</Notice>
      )}
      {activeNetworks.length === 0 && (
        <Notice tone="warning">No network is enabled: every resolve answers "not found".</Notice>
      )}
      {createsCollisions ? (
        <Notice tone="warning">
          <strong>This choice creates collisions.</strong> Turning on{" "}
          {added.map((x) => `${providerLabel(x.p)} on ${networkLabel(x.n)}`).join(", ")} serves names that may
          also exist in the {served.length - added.length} other namespace–network pair
          {served.length - added.length === 1 ? "" : "s"} you serve. The score, your provider priority and
          exceptions decide which one is answered (Collisions tab). “Preview impact” lists the names whose
          winner changes.
        </Notice>
      ) : (
        served.length > 1 && (
          <p className="muted small">
            You serve {served.length} namespace–network pairs; a name present in several is a collision,
            settled by the score, your provider priority and exceptions (Collisions tab).
          </p>
        )
      )}
      {editable ? (
        <SaveBar d={d} errorElsewhere={serverError !== null} />
      ) : (
        <p className="muted small">
          Your role can view these settings; owners, admins and developers can change them.
        </p>
      )}
    </div>
  );
}

type Kind = "domain" | "tld";

function fieldOf(e: ApiError | null, index: number, field: string): string | null {
  if (!e) return null;
  const f = e.field;
  if (f === `exceptions[${index}].${field}`) return e.serverMessage.replace(/^[^:]+:\s*/, "");
  return null;
}

function rowError(e: ApiError | null, index: number): string | null {
  if (!e) return null;
  return e.field === `exceptions[${index}]` ? e.serverMessage.replace(/^[^:]+:\s*/, "") : null;
}

function ExceptionRow({
  ex,
  index,
  editable,
  error,
  onChange,
  onRemove,
}: {
  ex: CollisionException;
  index: number;
  editable: boolean;
  error: ApiError | null;
  onChange: (e: CollisionException) => void;
  onRemove: () => void;
}) {
  const kind: Kind = ex.tld !== undefined ? "tld" : "domain";
  const value = kind === "tld" ? (ex.tld ?? "") : (ex.domain ?? "");
  const valueErr = fieldOf(error, index, kind);
  const providerErr = fieldOf(error, index, "provider");
  const networkErr = fieldOf(error, index, "network");
  const rowErr = rowError(error, index);
  const n = index + 1;
  const networks = PROVIDERS[ex.provider].networks as readonly Network[];
  return (
    <tr className={valueErr || providerErr || networkErr || rowErr ? "row-invalid" : undefined}>
      <td>
        <select
          aria-label={`Exception ${n}: applies to`}
          value={kind}
          disabled={!editable}
          onChange={(e) => {
            const { domain: _d, tld: _t, ...rest } = ex;
            onChange(e.target.value === "tld" ? { ...rest, tld: value } : { ...rest, domain: value });
          }}
        >
          <option value="domain">Domain</option>
          <option value="tld">TLD</option>
        </select>
      </td>
      <td>
        <input
          aria-label={`Exception ${n}: ${kind === "tld" ? "top-level label" : "domain name"}`}
          aria-invalid={Boolean(valueErr)}
          aria-describedby={valueErr ? `ex-${index}-value-err` : undefined}
          value={value}
          placeholder={kind === "tld" ? "wallet" : "alice.wallet"}
          readOnly={!editable}
          onChange={(e) =>
            onChange(kind === "tld" ? { ...ex, tld: e.target.value } : { ...ex, domain: e.target.value })
          }
        />
        {valueErr && (
          <div className="field-error" id={`ex-${index}-value-err`} role="alert">
            {valueErr}
          </div>
        )}
        {rowErr && (
          <div className="field-error" role="alert">
            {rowErr}
          </div>
        )}
      </td>
      <td>
        <select
          aria-label={`Exception ${n}: preferred namespace`}
          aria-invalid={Boolean(providerErr)}
          value={ex.provider}
          disabled={!editable}
          onChange={(e) => {
            const provider = e.target.value as Provider;
            const keep =
              ex.network && (PROVIDERS[provider].networks as readonly string[]).includes(ex.network);
            onChange({ ...ex, provider, network: keep ? ex.network : undefined });
          }}
        >
          {PROVIDER_ORDER.filter((p) => !PROVIDERS[p].comingSoon).map((p) => (
            <option key={p} value={p}>
              {providerLabel(p)}
            </option>
          ))}
        </select>
        {providerErr && (
          <div className="field-error" role="alert">
            {providerErr}
          </div>
        )}
      </td>
      <td>
        <select
          aria-label={`Exception ${n}: network`}
          aria-invalid={Boolean(networkErr)}
          value={ex.network ?? ""}
          disabled={!editable}
          onChange={(e) => onChange({ ...ex, network: (e.target.value || undefined) as Network | undefined })}
        >
          <option value="">Any network</option>
          {networks.map((nw) => (
            <option key={nw} value={nw}>
              {networkLabel(nw)}
            </option>
          ))}
        </select>
        {networkErr && (
          <div className="field-error" role="alert">
            {networkErr}
          </div>
        )}
      </td>
      <td className="actions">
        {editable && (
          <button type="button" className="btn btn-small btn-ghost-danger" onClick={onRemove}>
            Remove<span className="sr-only"> exception {n}</span>
          </button>
        )}
      </td>
    </tr>
  );
}

export function CollisionsPage() {
  const { project, can } = useProject();
  const d = useSettingsDraft(project.id);
  const editable = can("settings.write");
  const serverError = useServerError(d);
  const s = d.draft;
  const order = useMemo(() => {
    const active = PROVIDER_ORDER.filter((p) => !PROVIDERS[p].comingSoon);
    const listed = (s?.providerPriority ?? []).filter((p) => active.includes(p));
    return [...listed, ...active.filter((p) => !listed.includes(p))];
  }, [s]);
  if (d.saved.isPending || (s === null && !d.saved.isError))
    return <Loading label="Loading collision rules" />;
  if (d.saved.isError || s === null)
    return <ErrorMessage error={d.saved.error} retry={() => d.saved.refetch()} />;
  const move = (i: number, by: number) => {
    const next = [...order];
    const [p] = next.splice(i, 1);
    next.splice(i + by, 0, p);
    d.setDraft({ ...s, providerPriority: next });
    // Keep the keyboard focus on the moved item's button.
    window.setTimeout(() => document.getElementById(`prio-${p}-${by < 0 ? "up" : "down"}`)?.focus(), 0);
  };
  const exceptions = s.exceptions ?? [];
  const setExceptions = (list: CollisionException[]) => d.setDraft({ ...s, exceptions: list });
  const generalError =
    serverError && !/^exceptions\[\d+\]/.test(serverError.field ?? "") ? serverError : null;
  return (
    <div>
      <PageHeader
        title="Collision management"
        subtitle="When a name exists in several namespaces, decide which one your API keys get."
      />
      {d.restored && (
        <Notice tone="warning">
          Your unsaved changes from before you signed in again are restored below.
        </Notice>
      )}
      {generalError && <ErrorMessage error={generalError} />}
      <div className="grid-2 grid-2-wide">
        <Card title="Provider priority">
          <p className="muted small">
            Most preferred first. Each place ahead adds to the score, so a preferred provider wins collisions.
          </p>
          <ol className="priority" aria-label="Provider priority, most preferred first">
            {order.map((p, i) => (
              <li key={p} className="priority-item">
                <span className="priority-rank" aria-hidden="true">
                  {i + 1}
                </span>
                <span className="priority-name">
                  {providerLabel(p)} <code>{p}</code>
                </span>
                {editable && (
                  <span className="priority-moves">
                    <button
                      id={`prio-${p}-up`}
                      type="button"
                      className="btn btn-icon"
                      disabled={i === 0}
                      aria-label={`Move ${providerLabel(p)} up`}
                      onClick={() => move(i, -1)}
                    >
                      ↑
                    </button>
                    <button
                      id={`prio-${p}-down`}
                      type="button"
                      className="btn btn-icon"
                      disabled={i === order.length - 1}
                      aria-label={`Move ${providerLabel(p)} down`}
                      onClick={() => move(i, 1)}
                    >
                      ↓
                    </button>
                  </span>
                )}
              </li>
            ))}
          </ol>
        </Card>
        <Card title="How collisions are decided">
          <ol className="explain-list">
            <li>An exception for the name (or its TLD) wins outright.</li>
            <li>Otherwise the highest score wins: age, records, expiry and your provider priority.</li>
            <li>Ties go to the earlier registration.</li>
          </ol>
        </Card>
      </div>
      <Card
        title="Exceptions"
        actions={
          editable && (
            <button
              type="button"
              className="btn btn-small btn-secondary"
              onClick={() => {
                setExceptions([...exceptions, { domain: "", provider: order[0] ?? "NAMESPACE_A" }]);
                window.setTimeout(() => {
                  const inputs = document.querySelectorAll<HTMLInputElement>(".exceptions input");
                  inputs[inputs.length - 1]?.focus();
                }, 0);
              }}
            >
              Add exception
            </button>
          )
        }
      >
        <p className="muted small">
          A domain (alice.wallet) or a whole TLD (wallet) always resolves to the namespace you choose.
        </p>
        {exceptions.length === 0 ? (
          <Empty title="No exceptions">
            <p>Without exceptions, the score and the priority above decide every collision.</p>
          </Empty>
        ) : (
          <div className="table-wrap">
            <table className="table exceptions">
              <thead>
                <tr>
                  <th scope="col">Applies to</th>
                  <th scope="col">Name or TLD</th>
                  <th scope="col">Preferred namespace</th>
                  <th scope="col">Network</th>
                  <th scope="col">
                    <span className="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {exceptions.map((ex, i) => (
                  <ExceptionRow
                    // biome-ignore lint/suspicious/noArrayIndexKey: rows have no identity but their place
                    key={i}
                    ex={ex}
                    index={i}
                    editable={editable}
                    error={serverError}
                    onChange={(e) => setExceptions(exceptions.map((x, j) => (j === i ? e : x)))}
                    onRemove={() => setExceptions(exceptions.filter((_, j) => j !== i))}
                  />
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Card>
      {editable ? (
        <SaveBar d={d} errorElsewhere={serverError !== null} />
      ) : (
        <p className="muted small">
          Your role can view these rules; owners, admins and developers can change them.
        </p>
      )}
    </div>
  );
}
