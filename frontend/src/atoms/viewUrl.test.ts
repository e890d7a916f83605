import { describe, expect, it } from '@jest/globals';
import { authTabFromSearch, hrefForLocation, hrefWithAuthTab, locationFromSearch } from './viewUrl';

describe('dashboard location in the URL', () => {
  it('reads the view and account tab, defaulting unknown values', () => {
    expect(locationFromSearch('?view=approvals')).toEqual({ view: 'approvals', accountTab: 'profile' });
    expect(locationFromSearch('?view=account&tab=security')).toEqual({ view: 'account', accountTab: 'security' });
    expect(locationFromSearch('?view=enhance-set&tab=nope')).toEqual({ view: 'projects', accountTab: 'profile' });
    expect(locationFromSearch('')).toEqual({ view: 'projects', accountTab: 'profile' });
    expect(locationFromSearch('?view=admin&tab=billing')).toEqual({ view: 'admin', accountTab: 'billing' });
  });

  it('writes view and tab while keeping other parameters, and removes both when signed out', () => {
    const href = 'http://app.test/?ref=mail&view=projects#top';
    expect(hrefForLocation(href, { view: 'account', accountTab: 'billing' })).toBe('/?ref=mail&view=account&tab=billing#top');
    expect(hrefForLocation(href, { view: 'approvals', accountTab: 'billing' })).toBe('/?ref=mail&view=approvals#top');
    expect(hrefForLocation(href, null)).toBe('/?ref=mail#top');
  });

  it('round-trips a location through its href', () => {
    const location = { view: 'account', accountTab: 'settings' } as const;
    expect(locationFromSearch(new URL(hrefForLocation('http://app.test/', location), 'http://app.test').search)).toEqual(location);
  });
});

describe('landing auth tab in the URL', () => {
  it('opens the form only for signup or signin', () => {
    expect(authTabFromSearch('?auth=signup')).toBe('signup');
    expect(authTabFromSearch('?auth=signin')).toBe('signin');
    expect(authTabFromSearch('?auth=admin')).toBeNull();
    expect(authTabFromSearch('')).toBeNull();
  });

  it('sets and clears ?auth=', () => {
    expect(hrefWithAuthTab('http://app.test/?x=1', 'signin')).toBe('/?x=1&auth=signin');
    expect(hrefWithAuthTab('http://app.test/?auth=signup', null)).toBe('/');
  });
});
