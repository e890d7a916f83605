import { atom } from 'jotai';
import {
  DEFAULT_LOCATION,
  hrefForLocation,
  hrefWithParams,
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
    if (current.view === next.view && current.accountTab === next.accountTab && !to.params) return;
    set(locationAtom, next);
    const href = to.params ? hrefWithParams(window.location.href, to.params) : window.location.href;
    window.history.pushState(null, '', hrefForLocation(href, next));
  },
);

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

/** After sign-out: back to the default view, and the address loses `?view=` (no new history entry). */
export const resetViewAtom = atom(null, (_get, set) => {
  set(locationAtom, DEFAULT_LOCATION);
  window.history.replaceState(null, '', hrefForLocation(window.location.href, null));
});
