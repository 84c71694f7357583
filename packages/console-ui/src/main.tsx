import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, setSession } from './api';
import { Loading } from './components';
import { EnvironmentsPage } from './pages/environments-page';
import { EventEndpointPage, EventEndpointsPage } from './pages/event-endpoints-page';
import { IdentitiesPage } from './pages/identities-page';
import { IntegrationsPage } from './pages/integrations-page';
import { OverviewPage } from './pages/overview-page';
import { RunPage } from './pages/run-page';
import { RunsPage } from './pages/runs-page';
import { SchedulePage, SchedulesPage } from './pages/schedules-page';
import { SecretsPage } from './pages/secrets-page';
import { SignInPage } from './pages/sign-in-page';
import { WebhookLogPage } from './pages/webhook-log-page';
import { WebhooksPage } from './pages/webhooks-page';
import { WorkersPage } from './pages/workers-page';
import { Link, navigate, useLocation } from './router';
import type { Session } from './types';

function Page({ path, session }: { path: string; session: Session }) {
  const parts = path.split('/').slice(2).map(decodeURIComponent); // ['runs', '<id>'] from /console/runs/<id>
  const [section, id, sub, subId] = parts;
  const isAdmin = session.role === 'ADMIN';
  if (section === 'runs' && id) return <RunPage runId={id} />;
  if (section === 'webhooks' && id && sub === 'webhooks' && subId)
    return <WebhookLogPage factoryId={id} webhookUid={subId} isAdmin={isAdmin} />;
  if (section === 'webhooks') return <WebhooksPage isAdmin={isAdmin} />;
  if (section === 'events' && id) return <EventEndpointPage endpointId={id} isAdmin={isAdmin} />;
  if (section === 'events') return <EventEndpointsPage isAdmin={isAdmin} />;
  if (section === 'environments') return <EnvironmentsPage session={session} />;
  if (section === 'secrets') return <SecretsPage isAdmin={isAdmin} />;
  if (section === 'identities') return <IdentitiesPage isAdmin={isAdmin} />;
  if (section === 'integrations') return <IntegrationsPage isAdmin={isAdmin} />;
  if (section === 'workers') return <WorkersPage />;
  if (section === 'overview' || section === undefined) return <OverviewPage />;
  if (section === 'schedules' && id) return <SchedulePage scheduleId={id} />;
  if (section === 'schedules') return <SchedulesPage />;
  return <RunsPage />;
}

/** The main navigation: each page's path segment and name. */
const NAV = [
  ['overview', 'Overview'],
  ['runs', 'Runs'],
  ['webhooks', 'Webhooks'],
  ['integrations', 'Integrations'],
  ['schedules', 'Schedules'],
  ['events', 'Events'],
  ['environments', 'Environments'],
  ['secrets', 'Secrets'],
  ['identities', 'Identities'],
  ['workers', 'Workers'],
] as const;

function App() {
  const { path } = useLocation();
  const [session, setState] = useState<Session | null | undefined>(undefined);
  const signedIn = (s: Session | null) => {
    setSession(s?.csrf_token ?? '', () => setState(null));
    setState(s);
  };
  useEffect(() => {
    api<Session>('/session').then(signedIn, () => signedIn(null));
  }, []);
  useEffect(() => {
    if (session && path === '/console/sign-in') navigate('/console/overview', true);
  }, [session, path]);

  if (session === undefined) return <Loading />;
  if (session === null) return <SignInPage onSignedIn={signedIn} />;
  const signOut = async () => {
    await api('/session', { method: 'DELETE' }).catch(() => undefined);
    signedIn(null);
  };
  const who = session.display_name ?? session.email ?? session.principal_id;
  const current = (prefix: string) => (path.startsWith(prefix) ? 'page' : undefined);
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Conveyor</span>
        <nav aria-label="Main">
          {NAV.map(([section, label]) => (
            <Link key={section} href={`/console/${section}`} aria-current={current(`/console/${section}`)}>
              {label}
            </Link>
          ))}
        </nav>
        <span class="who">
          {who} <span class="role">({session.role.toLowerCase()})</span>
        </span>
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        <Page path={path} session={session} />
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
