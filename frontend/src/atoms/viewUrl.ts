/** Pure URL rules for the app's in-page navigation; the atoms in view.ts apply them to window.location. */
import { WORKSPACE_ADDRESS_PARAM } from '../api/workspaceAddress';

/** 'admin' is only shown to admins: the dashboard shell sends anyone else who opens it to the default view. */
export const DASHBOARD_VIEWS = ['projects', 'approvals', 'activity', 'account', 'clip-generation', 'image-generation', 'video-assembly', 'admin', 'enhance-set', 'members', 'webhooks', 'review-links', 'brand-kit', 'music'] as const;
export type DashboardView = (typeof DASHBOARD_VIEWS)[number];

export const ACCOUNT_TABS = ['profile', 'billing', 'security', 'settings'] as const;
export type AccountTab = (typeof ACCOUNT_TABS)[number];

export interface DashboardLocation {
  view: DashboardView;
  /** only meaningful on the account view */
  accountTab: AccountTab;
  /** `?view=` named no view this app has: the default view is kept, and the screen says the page does not exist */
  unknownView?: string;
}

/**
 * The spec's name (000 section 2) for the project detail in the address: `?view=overview&project=<id>`. Inside
 * the app it is the Projects view with a project open, so old `?project=<id>` links still open the project.
 */
export const PROJECT_DETAIL_VIEW = 'overview';

/** Parameters that belong to a signed-in user's dashboard: a sign-out (or sign-in) takes them out of the address. */
export const DASHBOARD_PARAMS = ['view', 'tab', 'project', 'render', 'image', 'bust', WORKSPACE_ADDRESS_PARAM, 'token'] as const;

/** What belongs to one workspace's screens (an open project, an item, a draft): a workspace switch drops them. */
const WORKSPACE_STATE_PARAMS = ['project', 'render', 'image', 'bust', 'draft', 'mode', 'token'] as const;

/** Views about one item of a workspace: after a switch there is no such item, so the switch lands on Projects. */
const ITEM_VIEWS: readonly DashboardView[] = ['clip-generation', 'image-generation'];

/**
 * The address after switching to `workspaceId` (null: the personal workspace): the same view when it is a list
 * (Approvals stays Approvals), Projects after an item's view, and nothing of the previous workspace's screens.
 */
export function hrefForWorkspace(href: string, workspaceId: string | null, view: DashboardView): string {
  const url = new URL(href);
  for (const name of WORKSPACE_STATE_PARAMS) url.searchParams.delete(name);
  if (workspaceId) url.searchParams.set(WORKSPACE_ADDRESS_PARAM, workspaceId);
  else url.searchParams.delete(WORKSPACE_ADDRESS_PARAM);
  const next = ITEM_VIEWS.includes(view) ? DEFAULT_LOCATION.view : view;
  url.searchParams.set('view', next);
  if (next !== 'account') url.searchParams.delete('tab');
  return `${url.pathname}${url.search}${url.hash}`;
}

export const DEFAULT_LOCATION: DashboardLocation = { view: 'projects', accountTab: 'profile' };

export type AuthTab = 'signin' | 'signup';

function oneOf<T extends string>(values: readonly T[], value: string | null): value is T {
  return value !== null && (values as readonly string[]).includes(value);
}

/** `?view=approvals`, `?view=account&tab=security`; an unknown view falls back to the default and is named in `unknownView`. */
export function locationFromSearch(search: string): DashboardLocation {
  const params = new URLSearchParams(search);
  const view = params.get('view');
  const tab = params.get('tab');
  const accountTab = oneOf(ACCOUNT_TABS, tab) ? tab : DEFAULT_LOCATION.accountTab;
  if (oneOf(DASHBOARD_VIEWS, view)) return { view, accountTab };
  if (view === PROJECT_DETAIL_VIEW) return { view: 'projects', accountTab };
  if (view) return { view: DEFAULT_LOCATION.view, accountTab, unknownView: view };
  return { view: DEFAULT_LOCATION.view, accountTab };
}

/** The address for a dashboard location, keeping the path, the hash and unrelated parameters of `href`. */
export function hrefForLocation(href: string, location: DashboardLocation | null): string {
  const url = new URL(href);
  url.searchParams.delete('view');
  url.searchParams.delete('tab');
  if (location) {
    url.searchParams.set('view', location.view === 'projects' && url.searchParams.has('project') ? PROJECT_DETAIL_VIEW : location.view);
    if (location.view === 'account' && location.accountTab !== DEFAULT_LOCATION.accountTab) {
      url.searchParams.set('tab', location.accountTab);
    }
  }
  return `${url.pathname}${url.search}${url.hash}`;
}

/** `href` without the dashboard's parameters and without a landing section (`#pricing`): where a new session starts. */
export function hrefWithoutDashboardState(href: string): string {
  const url = new URL(href);
  for (const name of DASHBOARD_PARAMS) url.searchParams.delete(name);
  url.searchParams.delete('auth');
  return `${url.pathname}${url.search}`;
}

/** `href` with each parameter set to its value, or removed when the value is null. */
export function hrefWithParams(href: string, params: Readonly<Record<string, string | null>>): string {
  const url = new URL(href);
  for (const [key, value] of Object.entries(params)) {
    if (value === null) url.searchParams.delete(key);
    else url.searchParams.set(key, value);
  }
  return url.toString();
}

/** `?auth=signup|signin` opens the landing page's auth form on that tab; anything else leaves it closed. */
export function authTabFromSearch(search: string): AuthTab | null {
  const auth = new URLSearchParams(search).get('auth');
  return auth === 'signup' || auth === 'signin' ? auth : null;
}

export function hrefWithAuthTab(href: string, tab: AuthTab | null): string {
  const url = new URL(href);
  if (tab) url.searchParams.set('auth', tab);
  else url.searchParams.delete('auth');
  return `${url.pathname}${url.search}${url.hash}`;
}
