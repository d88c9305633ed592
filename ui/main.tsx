// The policy console (docs/console.md): log in as an admin, then the matrix, the policies,
// explain, try as and policy tests. A non-admin is told the console is for admins only.

import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { call, errorOf, setToken, type Action, type Caller, type Matrix } from './api.js';
import { ExplainView, type ExplainRequest } from './explain-view.js';
import { MatrixView } from './matrix-view.js';
import { PoliciesView } from './policies-view.js';
import { TestsView } from './tests-view.js';
import { TryView } from './try-view.js';

type Screen = 'login' | 'admins-only' | 'console';
const TABS = ['Matrix', 'Policies', 'Explain', 'Try as', 'Tests'] as const;
type Tab = (typeof TABS)[number];

function Login(props: { readonly onLoggedIn: (screen: Screen, matrix?: Matrix) => void }) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | undefined>();
  const first = useRef<HTMLInputElement>(null);
  useEffect(() => first.current?.focus(), []);
  const submit = async (): Promise<void> => {
    const reply = await call<{ token: string }>('POST', '/auth/login', { username, password });
    if (reply.status !== 200) {
      setError(errorOf(reply).message);
      return;
    }
    setToken(reply.body.token);
    setPassword('');
    // The console's API answers admins only: 403 is a logged-in non-admin. The answer to an admin is
    // the first screen's matrix (the anonymous caller's), handed to it rather than asked again.
    const probe = await call<Matrix>('POST', '/_/api/matrix', { caller: { kind: 'anonymous' } });
    if (probe.status === 403) props.onLoggedIn('admins-only');
    else if (probe.status === 200) props.onLoggedIn('console', probe.body);
    else {
      setToken(undefined);
      setError(errorOf(probe).message);
    }
  };
  return (
    <main class="login">
      <h1>rest console</h1>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <label for="login-username">Username</label>
        <input
          id="login-username"
          autocomplete="username"
          ref={first}
          value={username}
          onInput={(e) => setUsername(e.currentTarget.value)}
        />
        <label for="login-password">Password</label>
        <input
          id="login-password"
          type="password"
          autocomplete="current-password"
          value={password}
          onInput={(e) => setPassword(e.currentTarget.value)}
        />
        <button type="submit">Log in</button>
        {error === undefined ? null : (
          <p class="error" role="alert">
            {error}
          </p>
        )}
      </form>
    </main>
  );
}

function Console(props: { readonly first: Matrix | undefined; readonly onLogout: () => void }) {
  const [tab, setTab] = useState<Tab>('Matrix');
  const [matrix, setMatrix] = useState<Matrix | undefined>(props.first);
  const [request, setRequest] = useState<ExplainRequest | undefined>();
  const tables = matrix?.tables.map((t) => t.table) ?? [];
  const hasColumns =
    matrix?.tables.find((t) => t.table === 'auth_policies')?.columns.includes('columns') ?? false;
  const explain = (table: string, action: Action, caller: Caller): void => {
    setRequest({ table, action, caller });
    setTab('Explain');
  };
  return (
    <>
      <header>
        <h1>rest console</h1>
        <nav aria-label="Console">
          {TABS.map((t) => (
            <button
              type="button"
              key={t}
              aria-current={tab === t ? 'page' : undefined}
              onClick={() => {
                if (t === 'Explain') setRequest(undefined);
                setTab(t);
              }}
            >
              {t}
            </button>
          ))}
        </nav>
        <button type="button" class="logout" onClick={props.onLogout}>
          Log out
        </button>
      </header>
      <main>
        <div hidden={tab !== 'Matrix'}>
          <MatrixView first={props.first} onLoaded={setMatrix} onExplain={explain} />
        </div>
        {tab === 'Policies' ? <PoliciesView tables={tables} hasColumns={hasColumns} /> : null}
        {tab === 'Explain' ? (
          <ExplainView key={JSON.stringify(request)} tables={tables} request={request} />
        ) : null}
        {tab === 'Try as' ? <TryView tables={tables} /> : null}
        {tab === 'Tests' ? <TestsView /> : null}
      </main>
    </>
  );
}

function App() {
  const [screen, setScreen] = useState<Screen>('login');
  const [first, setFirst] = useState<Matrix | undefined>();
  const logout = (): void => {
    void call('POST', '/auth/logout');
    setToken(undefined);
    setScreen('login');
  };
  switch (screen) {
    case 'login':
      return (
        <Login
          onLoggedIn={(next, matrix) => {
            setFirst(matrix);
            setScreen(next);
          }}
        />
      );
    case 'admins-only':
      return (
        <main class="login">
          <h1>Admins only</h1>
          <p role="alert">The console is for admins only: this account is not an admin.</p>
          <button type="button" onClick={logout}>
            Log out
          </button>
        </main>
      );
    case 'console':
      return <Console first={first} onLogout={logout} />;
  }
}

const root = document.getElementById('app');
if (root !== null) render(<App />, root);
