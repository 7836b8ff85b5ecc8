import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { ApiError, fieldName, get, post, put } from "../../../api";
import type { RecoveryCodesAnswer, TwoFactorRule, TwoFactorSetup, TwoFactorStatus } from "../../../types";

export const TWO_FACTOR_KEY = ["two-factor"] as const;
const ruleKey = (projectId: number) => ["two-factor-rule", projectId] as const;

/** The account's two-factor sign-in: status, set-up, the first code, turning it off. */
export function useTwoFactor() {
  const client = useQueryClient();
  const status = useQuery({
    queryKey: TWO_FACTOR_KEY,
    queryFn: () => get<TwoFactorStatus>("/account/two-factor"),
  });
  const refresh = () => client.invalidateQueries({ queryKey: TWO_FACTOR_KEY });
  const setup = useMutation({ mutationFn: () => post<TwoFactorSetup>("/account/two-factor/setup") });
  const confirm = useMutation({
    mutationFn: (code: string) => post<RecoveryCodesAnswer>("/account/two-factor/confirm", { code }),
    onSuccess: refresh,
  });
  const disable = useMutation({
    /** The password and either a code of the app or a recovery code. */
    mutationFn: (v: { password: string; code?: string; recoveryCode?: string }) =>
      post("/account/two-factor/disable", v),
    onSuccess: () => {
      setup.reset();
      confirm.reset();
      return refresh();
    },
  });
  return { status, setup, confirm, disable };
}

/** A project's rule: whether it requires two-factor sign-in of every member. */
export function useTwoFactorRule(projectId: number) {
  const client = useQueryClient();
  const rule = useQuery({
    queryKey: ruleKey(projectId),
    queryFn: () => get<TwoFactorRule>(`/projects/${projectId}/two-factor`),
  });
  const save = useMutation({
    mutationFn: (required: boolean) => put<TwoFactorRule>(`/projects/${projectId}/two-factor`, { required }),
    onSuccess: (r) => client.setQueryData(ruleKey(projectId), r),
  });
  return { rule, save };
}

/**
 * The server's message about one field (`code: …`, `recoveryCode: …`, `The field "password" …`),
 * as a sentence without the field's name in front (messages.ts words the others).
 */
export function fieldMessage(error: unknown, field: string): string | null {
  if (!(error instanceof ApiError) || fieldName(error) !== field) return null;
  if (error.field !== field) return error.message;
  return error.serverMessage.replace(/^[^:]+:\s*/, "").replace(/^./, (c) => c.toUpperCase());
}
