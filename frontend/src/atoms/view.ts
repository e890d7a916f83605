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
 * The workspace named in the address (`?workspace=<id>`), null for the personal one, and how often the address has
 * moved under the app (Back, Forward, a workspace switch). The HTTP client reads the address itself on every call;
 * these atoms follow it so that resources re-read when it changes.
 */
const addressBaseAtom = atom<{ workspace: string | null; epoch: number }>({ workspace: workspaceFromSearch(window.location.search), epoch: 0 });
addressBaseAtom.onMount = (setAddress) => {
  const onPopState = () => setAddress((current) => ({ workspace: workspaceFromSearch(window.location.search), epoch: current.epoch + 1 }));
  window.addEventListener('popstate', onPopState);
  return () => window.removeEventListener('popstate', onPopState);
};

export const workspaceParamAtom = atom((get) => get(addressBaseAtom).workspace);

/** Bumped whenever the address moved under the app: state taken from the address (the open project) is read again. */
export const addressEpochAtom = atom((get) => get(addressBaseAtom).epoch);

/**
 * The address has changed under the app (a workspace switch, entering a workspace from an invitation): every
 * address-following atom re-reads it, as after Back, and state kept for the previous workspace (the open project)
 * is void.
 */
export const followAddressAtom = atom(null, (_get, set) => {
  set(addressBaseAtom, (current) => ({ workspace: workspaceFromSearch(window.location.search), epoch: current.epoch + 1 }));
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
  window.history.replaceState(null, '', hrefWithoutDashboardState(window.location.href));
  set(locationAtom, DEFAULT_LOCATION);
  set(addressBaseAtom, (current) => ({ workspace: null, epoch: current.epoch + 1 }));
  set(viewResetsAtom, (n) => n + 1);
});

/** After a sign-in: the landing page's `?auth=` and section (`#pricing`) leave the address; a deep link's view stays. */
export const clearLandingStateAtom = atom(null, () => {
  window.history.replaceState(null, '', hrefWithAuthTab(window.location.href, null).replace(/#.*$/, ''));
});
