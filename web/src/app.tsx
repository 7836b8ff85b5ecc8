import { lazy, type ReactNode, Suspense, useEffect } from "react";
import { Link, Navigate, NavLink, Outlet, Route, Routes, useLocation } from "react-router";
import { post, setCsrfToken } from "./api";
import { RequireAuth, SessionProvider, useSession } from "./session";
import { announceNextPage, announcePage, Loading, PageTitle } from "./ui";

// Route-level code splitting: the sign-in page loads only what it needs; charts load with the dashboard.
const Auth = {
  SignIn: lazy(() =>
    import("./features/auth/components/sign-in-page").then((m) => ({ default: m.SignInPage })),
  ),
  Register: lazy(() =>
    import("./features/auth/components/register-page").then((m) => ({ default: m.RegisterPage })),
  ),
  Verify: lazy(() =>
    import("./features/auth/components/verify-email-page").then((m) => ({ default: m.VerifyPage })),
  ),
  Forgot: lazy(() =>
    import("./features/auth/components/forgot-password-page").then((m) => ({ default: m.ForgotPage })),
  ),
  Reset: lazy(() =>
    import("./features/auth/components/reset-password-page").then((m) => ({ default: m.ResetPage })),
  ),
  Password: lazy(() =>
    import("./features/auth/components/change-password-page").then((m) => ({
      default: m.ChangePasswordPage,
    })),
  ),
};
const TwoFactor = lazy(() =>
  import("./features/two-factor/components/two-factor-page").then((m) => ({ default: m.TwoFactorPage })),
);
const Projects = lazy(() =>
  import("./features/projects/components/projects-page").then((m) => ({ default: m.ProjectsPage })),
);
const ProjectLayout = lazy(() =>
  import("./features/projects/components/project-layout").then((m) => ({ default: m.ProjectLayout })),
);
const Dashboard = lazy(() =>
  import("./features/projects/components/dashboard-page").then((m) => ({ default: m.DashboardPage })),
);
const Resolution = lazy(() =>
  import("./features/settings/components/resolution-page").then((m) => ({ default: m.ResolutionPage })),
);
const Collisions = lazy(() =>
  import("./features/settings/components/collisions-page").then((m) => ({ default: m.CollisionsPage })),
);
const Audit = lazy(() =>
  import("./features/audit/components/audit-page").then((m) => ({ default: m.AuditPage })),
);
const Webhooks = lazy(() =>
  import("./features/webhooks/components/webhooks-page").then((m) => ({ default: m.WebhooksPage })),
);
const TryIt = lazy(() => import("./features/try/components/try-page").then((m) => ({ default: m.TryPage })));
const Team = lazy(() =>
  import("./features/team/components/team-page").then((m) => ({ default: m.TeamPage })),
);
const Keys = lazy(() =>
  import("./features/keys/components/keys-page").then((m) => ({ default: m.KeysPage })),
);
const Security = lazy(() =>
  import("./features/security/components/security-page").then((m) => ({ default: m.SecurityPage })),
);

/**
 * Marks the page's announcement as due after each navigation (ui.tsx, `PageTitle`): its heading
 * names the page in the title and takes focus once it renders. A page whose heading was already
 * on screen (the same component at another address) is announced here after a moment.
 */
function RouteAnnouncer() {
  const location = useLocation();
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs on every navigation on purpose
  useEffect(() => {
    announceNextPage();
    const t = window.setTimeout(() => {
      if (document.querySelector("main .state-loading") === null)
        announcePage(document.querySelector<HTMLElement>("main h1"));
    }, 400);
    return () => window.clearTimeout(t);
  }, [location.pathname]);
  return null;
}

function TopBar() {
  const { account } = useSession();
  // A full page load after signing out: nothing of the account stays in memory (queries, the
  // CSRF token), and no page under way can send the person back where they were (clearing the
  // cache in place raced the sign-in page, which saw the old account and went on to /projects).
  const signOut = async () => {
    try {
      await post("/auth/logout");
    } finally {
      setCsrfToken(null);
      window.location.assign("/console/sign-in?signedOut=1");
    }
  };
  return (
    <header className="topbar">
      <Link to="/projects" className="brand" aria-label="omniname console, projects">
        <span className="brand-mark" aria-hidden="true">
          ◆
        </span>
        omniname <span className="brand-sub">console</span>
      </Link>
      {account && (
        <nav className="topnav" aria-label="Account">
          <NavLink to="/projects" end>
            Projects
          </NavLink>
          <NavLink to="/account/password">Password</NavLink>
          <NavLink to="/account/two-factor">Two-factor</NavLink>
          <span className="whoami" title={account.email}>
            {account.fullName}
          </span>
          <button type="button" className="btn btn-small btn-secondary" onClick={signOut}>
            Sign out
          </button>
        </nav>
      )}
    </header>
  );
}

function Shell() {
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <TopBar />
      <main id="main" className="main">
        <Suspense fallback={<Loading />}>
          <Outlet />
        </Suspense>
      </main>
      <RouteAnnouncer />
    </>
  );
}

function Authed({ children }: { children: ReactNode }) {
  return <RequireAuth>{children}</RequireAuth>;
}

function Home() {
  const { account, loading } = useSession();
  if (loading) return <Loading />;
  return <Navigate to={account ? "/projects" : "/sign-in"} replace />;
}

function NotFound() {
  return (
    <div className="narrow">
      <PageTitle>Page not found</PageTitle>
      <p>
        This address does not exist in the console. <Link to="/projects">Go to your projects</Link>.
      </p>
    </div>
  );
}

export function App() {
  return (
    <SessionProvider>
      <Routes>
        <Route element={<Shell />}>
          <Route index element={<Home />} />
          <Route path="sign-in" element={<Auth.SignIn />} />
          <Route path="register" element={<Auth.Register />} />
          <Route path="verify-email" element={<Auth.Verify />} />
          <Route path="forgot-password" element={<Auth.Forgot />} />
          <Route path="reset-password" element={<Auth.Reset />} />
          <Route
            path="account/password"
            element={
              <Authed>
                <Auth.Password />
              </Authed>
            }
          />
          <Route
            path="account/two-factor"
            element={
              <Authed>
                <TwoFactor />
              </Authed>
            }
          />
          <Route
            path="projects"
            element={
              <Authed>
                <Projects />
              </Authed>
            }
          />
          <Route
            path="projects/:projectId"
            element={
              <Authed>
                <ProjectLayout />
              </Authed>
            }
          >
            <Route index element={<Dashboard />} />
            <Route path="resolution" element={<Resolution />} />
            <Route path="collisions" element={<Collisions />} />
            <Route path="try" element={<TryIt />} />
            <Route path="team" element={<Team />} />
            <Route path="keys" element={<Keys />} />
            <Route path="security" element={<Security />} />
            <Route path="audit" element={<Audit />} />
            <Route path="webhooks" element={<Webhooks />} />
          </Route>
          <Route path="*" element={<NotFound />} />
        </Route>
      </Routes>
    </SessionProvider>
  );
}
