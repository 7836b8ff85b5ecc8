import { useQuery, useQueryClient } from "@tanstack/react-query";
import { createContext, type ReactNode, useContext, useEffect, useState } from "react";
import { Navigate, useLocation } from "react-router";
import { get, setCsrfToken, setUnauthenticatedHandler } from "./api";
import type { Account, SessionProbeAnswer } from "./types";
import { Loading } from "./ui";

interface SessionState {
  account: Account | null;
  loading: boolean;
  /** The session ended under a signed-in page (a 401): the sign-in page says so. */
  expired: boolean;
}

const SessionContext = createContext<SessionState>({ account: null, loading: true, expired: false });

export const ACCOUNT_KEY = ["account"] as const;

/**
 * The signed-in account, or null (GET /session: signed out is a 200, so a signed-out page logs no
 * failed request); its CSRF token (the session's, or a pre-session one) goes to the API client.
 */
async function loadAccount(): Promise<Account | null> {
  const me = await get<SessionProbeAnswer>("/session", { public: true });
  setCsrfToken(me.csrfToken, me.account === null);
  return me.account;
}

/** Where to come back to after signing in: only paths of this app. */
export function safeNext(next: string | null): string {
  return next !== null && /^\/(?!\/)[^\\]*$/.test(next) ? next : "/projects";
}

export function SessionProvider({ children }: { children: ReactNode }) {
  const client = useQueryClient();
  const [expired, setExpired] = useState(false);
  const q = useQuery({ queryKey: ACCOUNT_KEY, queryFn: loadAccount, staleTime: 60_000, retry: 1 });

  // A signed-in call answered 401 (the session expired or was ended elsewhere): no account any
  // more, so RequireAuth sends the person to sign in and back to this page.
  useEffect(() => {
    setUnauthenticatedHandler(() => {
      setExpired(true);
      client.setQueryData(ACCOUNT_KEY, null);
    });
    return () => setUnauthenticatedHandler(null);
  }, [client]);
  useEffect(() => {
    if (q.data) setExpired(false);
  }, [q.data]);

  return (
    <SessionContext.Provider value={{ account: q.data ?? null, loading: q.isPending, expired }}>
      {children}
    </SessionContext.Provider>
  );
}

export function useSession(): SessionState {
  return useContext(SessionContext);
}

/** Pages that need a session: signed out, go to sign in and come back here afterwards. */
export function RequireAuth({ children }: { children: ReactNode }) {
  const { account, loading, expired } = useSession();
  const location = useLocation();
  if (loading) return <Loading label="Loading your account" />;
  if (account === null)
    return (
      <Navigate
        to={`/sign-in?${expired ? "expired=1&" : ""}next=${encodeURIComponent(location.pathname + location.search)}`}
        replace
      />
    );
  return <>{children}</>;
}
