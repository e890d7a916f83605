import { useSetAtom } from 'jotai';
import { useCallback, useEffect, useId, useRef, useState, type FormEvent, type ReactElement } from 'react';
import { MSG } from '../../../../domain/messages';
import {
  fetchUserDetail,
  searchUsers,
  searchWorkspaces,
  type AdminAdjustResult,
  type AdminUserDetail,
  type AdminUserListItem,
  type AdminUserSearch,
  type AdminWorkspaceMatch,
} from '../../api/admin';
import { apiErrorMessage } from '../../api/client';
import { refreshCreditsAtom } from '../../atoms/credits';
import { LoadingState } from '../../components/Spinner';
import { TextField } from '../../components/TextField';
import { AdjustCreditsForm } from './AdjustCreditsForm';
import { CreditFacts, PurchaseList, TransactionList, WorkspaceList } from './AdminUserParts';
import { countText } from '../../components/countText';
import './admin.css';

type SearchState =
  | { status: 'idle' }
  | { status: 'loading'; query: string }
  | { status: 'done'; query: string; result: AdminUserSearch }
  | { status: 'error'; query: string; message: string };

type WorkspaceSearchState =
  | { status: 'idle' }
  | { status: 'loading'; query: string }
  | { status: 'done'; query: string; workspaces: AdminWorkspaceMatch[]; hasMore: boolean }
  | { status: 'error'; query: string; message: string };

type DetailState = { status: 'loading' } | { status: 'done'; detail: AdminUserDetail } | { status: 'error'; message: string };

const DATE_FORMAT = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });
/** where admin.css stacks the detail under the search */
const NARROW_LAYOUT = '(max-width: 1100px)';

/**
 * Admin (DESIGN.md "Billing"): find a user by e-mail, read their credits, purchases, ledger and workspaces, and
 * adjust a workspace's balance with a reason (DESIGN.md "Teams (workspaces)": credits belong to the workspace; a
 * workspace is found by a member's e-mail or by its name). Shown only to site admins; the API refuses everyone else
 * whatever this view does.
 */
export function AdminView(): ReactElement {
  const [query, setQuery] = useState('');
  const [queryError, setQueryError] = useState<string | null>(null);
  const [search, setSearch] = useState<SearchState>({ status: 'idle' });
  const [selectedId, setSelectedId] = useState<string | null>(null);
  const [selectedWorkspaceId, setSelectedWorkspaceId] = useState<string | null>(null);
  const [workspaceQuery, setWorkspaceQuery] = useState('');
  const [workspaceQueryError, setWorkspaceQueryError] = useState<string | null>(null);
  const [workspaceSearch, setWorkspaceSearch] = useState<WorkspaceSearchState>({ status: 'idle' });
  const searchSeq = useRef(0);
  const workspaceSeq = useRef(0);
  const detailRef = useRef<HTMLDivElement>(null);

  // one column (phones, narrow windows): bring the chosen user's detail into view below the results
  useEffect(() => {
    if (selectedId && window.matchMedia(NARROW_LAYOUT).matches) detailRef.current?.scrollIntoView({ block: 'start' });
  }, [selectedId]);

  const runSearch = useCallback(async (text: string) => {
    const seq = ++searchSeq.current;
    setSearch({ status: 'loading', query: text });
    try {
      const result = await searchUsers(text);
      if (seq !== searchSeq.current) return;
      setSearch({ status: 'done', query: text, result });
      // one match: open it straight away
      if (result.users.length === 1) setSelectedId(result.users[0].id);
    } catch (error) {
      if (seq !== searchSeq.current) return;
      setSearch({ status: 'error', query: text, message: apiErrorMessage(error, MSG.somethingWentWrong) });
    }
  }, []);

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const text = query.trim();
    if (!text) {
      setQueryError('Enter an e-mail address, or the start of one');
      return;
    }
    setQueryError(null);
    setSelectedId(null);
    setSelectedWorkspaceId(null);
    void runSearch(text);
  }

  const runWorkspaceSearch = useCallback(async (text: string) => {
    const seq = ++workspaceSeq.current;
    setWorkspaceSearch({ status: 'loading', query: text });
    try {
      const { workspaces, hasMore } = await searchWorkspaces(text);
      if (seq !== workspaceSeq.current) return;
      setWorkspaceSearch({ status: 'done', query: text, workspaces, hasMore });
    } catch (error) {
      if (seq !== workspaceSeq.current) return;
      setWorkspaceSearch({ status: 'error', query: text, message: apiErrorMessage(error, MSG.somethingWentWrong) });
    }
  }, []);

  function onWorkspaceSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const text = workspaceQuery.trim();
    if (!text) {
      setWorkspaceQueryError('Enter the name of a workspace');
      return;
    }
    setWorkspaceQueryError(null);
    void runWorkspaceSearch(text);
  }

  /** A workspace found by name opens its (first) owner's detail with that workspace chosen for adjustments. */
  function openWorkspace(match: AdminWorkspaceMatch) {
    const owner = match.owners[0];
    if (!owner) return;
    setSelectedWorkspaceId(match.id);
    setSelectedId(owner.id);
  }

  /** Keeps the result list's numbers in step with an adjustment made in the detail panel. */
  function onAdjusted(result: AdminAdjustResult) {
    setSearch((current) =>
      current.status !== 'done'
        ? current
        : {
            ...current,
            result: {
              ...current.result,
              users: current.result.users.map((u) =>
                u.id === result.userId
                  ? { ...u, credits: result.credits.credits, reservedCredits: result.credits.reservedCredits, availableCredits: result.credits.availableCredits }
                  : u,
              ),
            },
          },
    );
  }

  return (
    <section className="view admin-view" aria-labelledby="admin-title">
      <header className="view-header">
        <h1 id="admin-title">Admin</h1>
        <p className="muted admin-lede">
          Find a user by e-mail, or a workspace by name, to see its credits and adjust them. Every change is recorded with your e-mail.
        </p>
      </header>

      <div className="admin-layout">
        <div className="admin-search">
          <form className="panel admin-search-form" role="search" aria-label="Find a user" onSubmit={onSubmit} noValidate>
            <TextField
              label="User e-mail"
              type="search"
              name="email"
              autoComplete="off"
              spellCheck={false}
              placeholder="name@example.com"
              value={query}
              maxLength={254}
              hint="The whole address or its start; upper and lower case match alike."
              error={queryError}
              onChange={(e) => setQuery(e.target.value)}
            />
            <button type="submit" className="button button-primary" disabled={search.status === 'loading'}>
              {search.status === 'loading' ? 'Searching...' : 'Search'}
            </button>
          </form>
          <SearchResults
            state={search}
            selectedId={selectedId}
            onSelect={(id) => {
              setSelectedWorkspaceId(null);
              setSelectedId(id);
            }}
            onRetry={(text) => void runSearch(text)}
          />
          <form className="panel admin-search-form" role="search" aria-label="Find a workspace" onSubmit={onWorkspaceSubmit} noValidate>
            <TextField
              label="Workspace name"
              type="search"
              name="workspace"
              autoComplete="off"
              value={workspaceQuery}
              maxLength={100}
              hint="The whole name; upper and lower case match alike."
              error={workspaceQueryError}
              onChange={(e) => setWorkspaceQuery(e.target.value)}
            />
            <button type="submit" className="button button-secondary" disabled={workspaceSearch.status === 'loading'}>
              {workspaceSearch.status === 'loading' ? 'Searching...' : 'Find workspace'}
            </button>
          </form>
          <WorkspaceResults state={workspaceSearch} selectedId={selectedWorkspaceId} onSelect={openWorkspace} onRetry={(text) => void runWorkspaceSearch(text)} />
        </div>

        <div className="admin-detail" ref={detailRef}>
          {selectedId ? (
            <UserDetailPanel key={`${selectedId}/${selectedWorkspaceId ?? ''}`} userId={selectedId} workspaceId={selectedWorkspaceId} onAdjusted={onAdjusted} />
          ) : (
            <div className="empty-state admin-placeholder">
              <h2>No user selected</h2>
              <p>Search for a user, then pick them from the results to see their credits.</p>
            </div>
          )}
        </div>
      </div>
    </section>
  );
}

function SearchResults({
  state,
  selectedId,
  onSelect,
  onRetry,
}: {
  state: SearchState;
  selectedId: string | null;
  onSelect: (id: string) => void;
  onRetry: (query: string) => void;
}): ReactElement | null {
  if (state.status === 'idle') return null;
  if (state.status === 'loading') return <LoadingState label="Searching users..." />;
  if (state.status === 'error') {
    return (
      <div className="panel admin-message" role="alert">
        <p>Could not search users: {state.message}</p>
        <button type="button" className="button button-secondary" onClick={() => onRetry(state.query)}>
          Retry
        </button>
      </div>
    );
  }
  const { users, hasMore } = state.result;
  if (users.length === 0) {
    return (
      <div className="panel admin-message" role="status">
        <p className="admin-break">No users with an e-mail starting with “{state.query}”.</p>
      </div>
    );
  }
  return (
    <div className="admin-results">
      <h2 className="admin-results-title" id="admin-results-title">
        {users.length === 1 ? '1 user' : `${users.length} users`}
      </h2>
      <ul className="admin-result-list" aria-labelledby="admin-results-title">
        {users.map((user) => (
          <li key={user.id}>
            <ResultButton user={user} selected={user.id === selectedId} onSelect={() => onSelect(user.id)} />
          </li>
        ))}
      </ul>
      {hasMore && <p className="muted admin-small">More users match: type more of the address.</p>}
    </div>
  );
}

function WorkspaceResults({
  state,
  selectedId,
  onSelect,
  onRetry,
}: {
  state: WorkspaceSearchState;
  selectedId: string | null;
  onSelect: (match: AdminWorkspaceMatch) => void;
  onRetry: (query: string) => void;
}): ReactElement | null {
  if (state.status === 'idle') return null;
  if (state.status === 'loading') return <LoadingState label="Searching workspaces..." />;
  if (state.status === 'error') {
    return (
      <div className="panel admin-message" role="alert">
        <p>Could not search workspaces: {state.message}</p>
        <button type="button" className="button button-secondary" onClick={() => onRetry(state.query)}>
          Retry
        </button>
      </div>
    );
  }
  if (state.workspaces.length === 0) {
    return (
      <div className="panel admin-message" role="status">
        <p className="admin-break">No workspace is named “{state.query}”.</p>
      </div>
    );
  }
  return (
    <div className="admin-results">
      <h2 className="admin-results-title" id="admin-workspace-results-title">
        {countText(state.workspaces.length, 'workspace')}
      </h2>
      <ul className="admin-result-list" aria-labelledby="admin-workspace-results-title">
        {state.workspaces.map((w) => (
          <li key={w.id}>
            <button type="button" className="admin-result" aria-pressed={w.id === selectedId} disabled={w.owners.length === 0} onClick={() => onSelect(w)}>
              <span className="admin-result-email">{w.name}</span>
              <span className="admin-result-meta">
                {w.personal ? 'Personal · ' : ''}
                {countText(w.memberCount, 'member')} · {w.availableCredits} available
                <span className="admin-match-owners">Owner: {w.owners.map((o) => o.email).join(', ') || 'none'}</span>
              </span>
            </button>
          </li>
        ))}
      </ul>
      {state.hasMore && <p className="muted admin-small">More workspaces have this name; the oldest are shown.</p>}
    </div>
  );
}

function ResultButton({ user, selected, onSelect }: { user: AdminUserListItem; selected: boolean; onSelect: () => void }): ReactElement {
  return (
    <button type="button" className="admin-result" aria-pressed={selected} onClick={onSelect}>
      <span className="admin-result-email">{user.email}</span>
      <span className="admin-result-meta">
        {user.name ? `${user.name} · ` : ''}
        {user.availableCredits} available{user.reservedCredits > 0 ? ` (${user.credits} balance)` : ''}
        {user.role === 'admin' ? ' · admin' : ''}
      </span>
    </button>
  );
}

function UserDetailPanel({
  userId,
  workspaceId,
  onAdjusted,
}: {
  userId: string;
  /** the workspace the adjust form starts with (one found by name); the personal one when absent */
  workspaceId: string | null;
  onAdjusted: (result: AdminAdjustResult) => void;
}): ReactElement {
  const [state, setState] = useState<DetailState>({ status: 'loading' });
  const [version, setVersion] = useState(0);
  const refreshOwnCredits = useSetAtom(refreshCreditsAtom);
  const titleId = useId();

  useEffect(() => {
    let current = true;
    fetchUserDetail(userId).then(
      (detail) => {
        if (current) setState({ status: 'done', detail });
      },
      (error: unknown) => {
        if (current) setState({ status: 'error', message: apiErrorMessage(error, MSG.somethingWentWrong) });
      },
    );
    return () => {
      current = false;
    };
  }, [userId, version]);

  if (state.status === 'loading') return <LoadingState label="Loading user..." />;
  if (state.status === 'error') {
    return (
      <div className="panel admin-message" role="alert">
        <p>Could not load this user: {state.message}</p>
        <button
          type="button"
          className="button button-secondary"
          onClick={() => {
            setState({ status: 'loading' });
            setVersion((v) => v + 1);
          }}
        >
          Retry
        </button>
      </div>
    );
  }

  const { detail } = state;
  function adjusted(result: AdminAdjustResult) {
    // the numbers change at once; the ledger list follows from a re-read (kept on screen meanwhile)
    // the facts at the top are the personal workspace's: they change only when it was the one adjusted
    if (result.workspace.personal && result.workspace.id === detail.user.id) {
      setState((current) => (current.status === 'done' ? { status: 'done', detail: { ...current.detail, credits: result.credits } } : current));
    }
    setVersion((v) => v + 1);
    onAdjusted(result);
    refreshOwnCredits();
  }

  return (
    <article className="admin-user" aria-labelledby={titleId}>
      <div className="panel">
        <header className="admin-user-header">
          <h2 id={titleId} className="admin-break">
            {detail.user.email}
          </h2>
          {detail.user.role === 'admin' && <span className="pill admin-pill">Admin</span>}
        </header>
        <p className="muted admin-small">
          {detail.user.name ? `${detail.user.name} · ` : ''}Member since {DATE_FORMAT.format(new Date(detail.user.createdAt))}
        </p>
        <CreditFacts credits={detail.credits} />
        {!detail.ledger.ok && (
          <p className="hint-banner" role="alert">
            The ledger does not match this balance (ledger sum {detail.ledger.ledgerSum}, active reservations {detail.ledger.activeReservationsSum}).
          </p>
        )}
      </div>

      <div className="panel">
        <h3>Workspaces</h3>
        <WorkspaceList workspaces={detail.workspaces} />
      </div>

      <div className="panel">
        <h3>Adjust credits</h3>
        <AdjustCreditsForm user={detail.user} credits={detail.credits} workspaces={detail.workspaces} initialWorkspaceId={workspaceId} onAdjusted={adjusted} />
      </div>

      <div className="panel">
        <h3>Purchases</h3>
        <PurchaseList purchases={detail.purchases} />
      </div>

      <div className="panel">
        <h3>Recent transactions</h3>
        <TransactionList transactions={detail.transactions} total={detail.transactionsTotal} />
      </div>
    </article>
  );
}
