/** Pure URL rules for the app's in-page navigation; the atoms in view.ts apply them to window.location. */

/** 'admin' is only shown to admins: the dashboard shell sends anyone else who opens it to the default view. */
export const DASHBOARD_VIEWS = ['projects', 'approvals', 'activity', 'account', 'clip-generation', 'image-generation', 'admin'] as const;
export type DashboardView = (typeof DASHBOARD_VIEWS)[number];

export const ACCOUNT_TABS = ['profile', 'billing', 'security', 'settings'] as const;
export type AccountTab = (typeof ACCOUNT_TABS)[number];

export interface DashboardLocation {
  view: DashboardView;
  /** only meaningful on the account view */
  accountTab: AccountTab;
}

export const DEFAULT_LOCATION: DashboardLocation = { view: 'projects', accountTab: 'profile' };

export type AuthTab = 'signin' | 'signup';

function oneOf<T extends string>(values: readonly T[], value: string | null): value is T {
  return value !== null && (values as readonly string[]).includes(value);
}

/** `?view=approvals`, `?view=account&tab=security`; anything unknown falls back to the defaults. */
export function locationFromSearch(search: string): DashboardLocation {
  const params = new URLSearchParams(search);
  const view = params.get('view');
  const tab = params.get('tab');
  return {
    view: oneOf(DASHBOARD_VIEWS, view) ? view : DEFAULT_LOCATION.view,
    accountTab: oneOf(ACCOUNT_TABS, tab) ? tab : DEFAULT_LOCATION.accountTab,
  };
}

/** The address for a dashboard location, keeping the path, the hash and unrelated parameters of `href`. */
export function hrefForLocation(href: string, location: DashboardLocation | null): string {
  const url = new URL(href);
  url.searchParams.delete('view');
  url.searchParams.delete('tab');
  if (location) {
    url.searchParams.set('view', location.view);
    if (location.view === 'account' && location.accountTab !== DEFAULT_LOCATION.accountTab) {
      url.searchParams.set('tab', location.accountTab);
    }
  }
  return `${url.pathname}${url.search}${url.hash}`;
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
