import { NETWORK_ORDER, NETWORKS } from "@omniname/wire/networks";
import { PROVIDER_ORDER, PROVIDERS } from "@omniname/wire/providers";
import { useProject } from "../../../project-context";
import type { Network, Provider, Settings } from "../../../types";
import { Badge, Card, ErrorMessage, Loading, Notice, Switch } from "../../../ui";
import { isOn, setOn, useServerError, useSettingsDraft } from "../api/settings-draft";
import { networkLabel, providerLabel } from "./labels";
import { SaveBar, SettingsHeader } from "./save-bar";

/** The namespace–network pairs a settings object serves. */
function servedPairs(s: Settings): { p: Provider; n: Network }[] {
  return PROVIDER_ORDER.filter((p) => !PROVIDERS[p].comingSoon && isOn(s.providers, p)).flatMap((p) =>
    (PROVIDERS[p].networks as readonly Network[])
      .filter((n) => !NETWORKS[n].comingSoon && isOn(s.networks, n))
      .map((n) => ({ p, n })),
  );
}
const pairKey = (x: { p: Provider; n: Network }) => `${x.p}:${x.n}`;

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
      <SettingsHeader
        d={d}
        title="Resolution settings"
        subtitle="Choose which networks and naming providers this project's API keys resolve."
        error={serverError}
      />
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
        <Switch
          label="Look up offchain ENS names"
          description="ENS names under wildcard or CCIP-Read resolvers are asked of their resolver and gateway; off, they answer from the index alone, tagged offchain-not-resolved."
          checked={s.liveLookups !== false}
          disabled={!editable}
          onChange={(on) => d.setDraft({ ...s, liveLookups: on ? undefined : false })}
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
      <SaveBar d={d} editable={editable} what="settings" errorElsewhere={serverError !== null} />
    </div>
  );
}
