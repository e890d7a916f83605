import { atom } from 'jotai';
import { workspaceFromSearch } from '../api/workspaceAddress';
import {
  DEFAULT_LOCATION,
  hrefWithAuthTab,
  hrefForLocation,
  hrefWithParams,
  hrefWithoutDashboardState,
  locationFromSearch,
  type AccountTab,
  type DashboardLocation,
  type DashboardView,
} from './viewUrl';

const locationAtom = atom<DashboardLocation>(locationFromSearch(window.location.search));

// Back and Forward move through pushed views: follow them while anything reads the location
locationAtom.onMount = (setLocation) => {
  const onPopState = () => setLocation(locationFromSearch(window.location.search));
  window.addEventListener('popstate', onPopState);
  return () => window.removeEventListener('popstate', onPopState);
};

/**
 * Goes to a view (and account tab), pushing a history entry so Back returns. `params` sets (or, when null,
 * removes) other parameters of the view's address, such as the clip source of `?view=clip-generation`.
 */
export const navigateAtom = atom(
  null,
  (get, set, to: { view: DashboardView; accountTab?: AccountTab; params?: Readonly<Record<string, string | null>> }) => {
    const next: DashboardLocation = { view: to.view, accountTab: to.accountTab ?? DEFAULT_LOCATION.accountTab };
    const current = get(locationAtom);
    if (current.view === next.view && current.accountTab === next.accountTab && !to.params && !current.unknownView) return;
    set(locationAtom, next);
    const href = to.params ? hrefWithParams(window.location.href, to.params) : window.location.href;
    window.history.pushState(null, '', hrefForLocation(href, next));
  },
);

/**
 * The workspace named in the address (`?workspace=<id>`), null for the personal one. The HTTP client reads the
 * address itself on every call; this atom follows it so that resources re-read when it changes.
 */
const workspaceParamBaseAtom = atom<string | null>(workspaceFromSearch(window.location.search));
workspaceParamBaseAtom.onMount = (setWorkspace) => {
  const onPopState = () => setWorkspace(workspaceFromSearch(window.location.search));
  window.addEventListener('popstate', onPopState);
  return () => window.removeEventListener('popstate', onPopState);
};

export const workspaceParamAtom = atom((get) => get(workspaceParamBaseAtom));

/**
 * The address has changed under the app (a workspace switch, entering a workspace from an invitation): every
 * address-following atom re-reads it, as after Back, and state kept for the previous workspace (the open project)
 * is void.
 */
export const followAddressAtom = atom(null, (_get, set) => {
  set(workspaceParamBaseAtom, workspaceFromSearch(window.location.search));
  set(locationAtom, locationFromSearch(window.location.search));
  set(viewResetsAtom, (n) => n + 1);
  window.dispatchEvent(new PopStateEvent('popstate'));
});

/** The dashboard's current view, kept in `?view=` so reload and Back work. */
export const viewAtom = atom(
  (get) => get(locationAtom).view,
  (_get, set, view: DashboardView) => set(navigateAtom, { view }),
);

/** The Account Settings tab, kept in `?tab=`; switching tabs replaces the entry rather than adding one. */
export const accountTabAtom = atom(
  (get) => get(locationAtom).accountTab,
  (get, set, accountTab: AccountTab) => {
    const next = { ...get(locationAtom), accountTab };
    set(locationAtom, next);
    window.history.replaceState(null, '', hrefForLocation(window.location.href, next));
  },
);

/** Bumped by resetViewAtom: state kept for the previous session (the open project) is void after it. */
export const viewResetsAtom = atom(0);

/** The name in `?view=` when it is no view of this app (the Projects view then says the page does not exist). */
export const unknownViewAtom = atom((get) => get(locationAtom).unknownView ?? null);

/**
 * After sign-out, and after a sign-in or sign-up: back to the default view, and the address loses the previous
 * session's state (`?view=`, `?project=` ...) and any landing section (`#pricing`), without a new history entry.
 */
export const resetViewAtom = atom(null, (_get, set) => {
  set(locationAtom, DEFAULT_LOCATION);
  set(workspaceParamBaseAtom, null);
  set(viewResetsAtom, (n) => n + 1);
  window.history.replaceState(null, '', hrefWithoutDashboardState(window.location.href));
});

/** After a sign-in: the landing page's `?auth=` and section (`#pricing`) leave the address; a deep link's view stays. */
export const clearLandingStateAtom = atom(null, () => {
  window.history.replaceState(null, '', hrefWithAuthTab(window.location.href, null).replace(/#.*$/, ''));
});
