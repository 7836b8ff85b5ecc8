import { useQuery, useQueryClient } from "@tanstack/react-query";
import { createContext, type ReactNode, useContext, useEffect } from "react";
import { Navigate, useLocation, useNavigate } from "react-router";
import { ApiError, get, setCsrfToken, setUnauthenticatedHandler } from "./api";
import type { Account, AccountAnswer } from "./types";
import { Loading } from "./ui";

interface SessionState {
  account: Account | null;
  loading: boolean;
}

const SessionContext = createContext<SessionState>({ account: null, loading: true });

export const ACCOUNT_KEY = ["account"] as const;

/** The signed-in account (GET /account), or null; its CSRF token goes to the API client. */
async function loadAccount(): Promise<Account | null> {
  try {
    const me = await get<AccountAnswer>("/account", { public: true });
    setCsrfToken(me.csrfToken);
    return me.account;
  } catch (e) {
    if (e instanceof ApiError && e.code === "UNAUTHENTICATED") {
      setCsrfToken(null);
      return null;
    }
    throw e;
  }
}

/** Where to come back to after signing in: only paths of this app. */
export function safeNext(next: string | null): string {
  return next !== null && /^\/(?!\/)[^\\]*$/.test(next) ? next : "/projects";
}

export function SessionProvider({ children }: { children: ReactNode }) {
  const client = useQueryClient();
  const navigate = useNavigate();
  const location = useLocation();
  const q = useQuery({ queryKey: ACCOUNT_KEY, queryFn: loadAccount, staleTime: 60_000, retry: 1 });

  // A signed-in call answered 401 (the session expired or was ended elsewhere): sign in, then back.
  useEffect(() => {
    setUnauthenticatedHandler(() => {
      client.setQueryData(ACCOUNT_KEY, null);
      const here = window.location.pathname.replace(/^\/console/, "") + window.location.search;
      if (!here.startsWith("/sign-in"))
        navigate(`/sign-in?expired=1&next=${encodeURIComponent(here)}`, { replace: true });
    });
    return () => setUnauthenticatedHandler(null);
  }, [client, navigate]);

  void location;
  return (
    <SessionContext.Provider value={{ account: q.data ?? null, loading: q.isPending }}>
      {children}
    </SessionContext.Provider>
  );
}

export function useSession(): SessionState {
  return useContext(SessionContext);
}

/** Pages that need a session: signed out, go to sign in and come back here afterwards. */
export function RequireAuth({ children }: { children: ReactNode }) {
  const { account, loading } = useSession();
  const location = useLocation();
  if (loading) return <Loading label="Loading your account" />;
  if (account === null)
    return (
      <Navigate to={`/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`} replace />
    );
  return <>{children}</>;
}
