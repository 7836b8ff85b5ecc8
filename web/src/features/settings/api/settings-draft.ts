import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { ApiError, get, post, put } from "../../../api";
import type { DryRunAnswer, Settings } from "../../../types";

/** Whether a network or provider is served under a settings object (enabled lists win). */
export function isOn<T extends string>(toggle: { enabled?: T[]; disabled?: T[] } | undefined, v: T): boolean {
  if (toggle?.enabled) return toggle.enabled.includes(v);
  return !(toggle?.disabled ?? []).includes(v);
}

export function setOn<T extends string>(
  order: readonly T[],
  toggle: { enabled?: T[]; disabled?: T[] } | undefined,
  v: T,
  on: boolean,
): { disabled?: T[] } | undefined {
  const disabled = order.filter((x) => (x === v ? !on : !isOn(toggle, x)));
  return disabled.length === 0 ? undefined : { disabled };
}

/** Settings without empty parts, so that an unchanged draft compares equal to what is saved. */
export function clean(s: Settings): Settings {
  const out: Settings = {};
  if (s.networks && (s.networks.enabled || s.networks.disabled?.length)) out.networks = s.networks;
  if (s.providers && (s.providers.enabled || s.providers.disabled?.length)) out.providers = s.providers;
  if (s.providerPriority?.length) out.providerPriority = s.providerPriority;
  if (s.exceptions?.length) out.exceptions = s.exceptions;
  if (s.includeExpired) out.includeExpired = true;
  if (s.liveLookups === false) out.liveLookups = false;
  return out;
}

export const same = (a: Settings, b: Settings) => JSON.stringify(clean(a)) === JSON.stringify(clean(b));

/**
 * The settings being edited: the saved ones, a draft kept in sessionStorage (so a sign-in after a
 * lost session brings the unsaved changes back), save, and a dry run of the draft.
 */
export function useSettingsDraft(projectId: number) {
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

export type Draft = ReturnType<typeof useSettingsDraft>;

/** A validation error of the settings (the server names the field), shown beside that field. */
export function useServerError(d: Draft): ApiError | null {
  const e = d.save.error ?? d.dry.error;
  return e instanceof ApiError && e.code === "INVALID_PARAMETER" ? e : null;
}
