import { describe, expect, it } from '@jest/globals';
import { authTabFromSearch, hrefForLocation, hrefForWorkspace, hrefWithAuthTab, hrefWithoutDashboardState, locationFromSearch } from './viewUrl';

describe('dashboard location in the URL', () => {
  it('reads the view and account tab, defaulting unknown values', () => {
    expect(locationFromSearch('?view=approvals')).toEqual({ view: 'approvals', accountTab: 'profile' });
    expect(locationFromSearch('?view=account&tab=security')).toEqual({ view: 'account', accountTab: 'security' });
    expect(locationFromSearch('?view=no-such-view&tab=nope')).toEqual({ view: 'projects', accountTab: 'profile', unknownView: 'no-such-view' });
    expect(locationFromSearch('?view=enhance-set')).toEqual({ view: 'enhance-set', accountTab: 'profile' });
    expect(locationFromSearch('')).toEqual({ view: 'projects', accountTab: 'profile' });
    expect(locationFromSearch('?view=admin&tab=billing')).toEqual({ view: 'admin', accountTab: 'billing' });
  });

  it('writes view and tab while keeping other parameters, and removes both when signed out', () => {
    const href = 'http://app.test/?ref=mail&view=projects#top';
    expect(hrefForLocation(href, { view: 'account', accountTab: 'billing' })).toBe('/?ref=mail&view=account&tab=billing#top');
    expect(hrefForLocation(href, { view: 'approvals', accountTab: 'billing' })).toBe('/?ref=mail&view=approvals#top');
    expect(hrefForLocation(href, null)).toBe('/?ref=mail#top');
  });

  it("names the project detail 'overview' in the address, and still reads old ?project= links", () => {
    expect(locationFromSearch('?view=overview&project=p1')).toEqual({ view: 'projects', accountTab: 'profile' });
    expect(locationFromSearch('?project=p1')).toEqual({ view: 'projects', accountTab: 'profile' });
    expect(hrefForLocation('http://app.test/?project=p1', { view: 'projects', accountTab: 'profile' })).toBe('/?project=p1&view=overview');
    expect(hrefForLocation('http://app.test/?view=overview', { view: 'projects', accountTab: 'profile' })).toBe('/?view=projects');
  });

  it('drops the previous session\'s dashboard state and the landing section from the address', () => {
    expect(hrefWithoutDashboardState('http://app.test/?view=overview&project=p1&render=r1&ref=mail&auth=signup#pricing')).toBe('/?ref=mail');
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

describe('workspace in the URL', () => {
  const team = '5b0f3c1e-2a44-4c1b-9d7e-0c6f7a1b2c3d';

  it('switches keeping a list view and dropping what belonged to the previous workspace', () => {
    expect(hrefForWorkspace('http://app.test/?view=approvals&ref=mail', team, 'approvals')).toBe(`/?view=approvals&ref=mail&workspace=${team}`);
    expect(hrefForWorkspace(`http://app.test/?view=overview&project=${team}&workspace=${team}`, null, 'projects')).toBe('/?view=projects');
    expect(hrefForWorkspace('http://app.test/?view=account&tab=billing', team, 'account')).toBe(`/?view=account&tab=billing&workspace=${team}`);
  });

  it("lands on Projects after an item's view, whose item the other workspace does not have", () => {
    const href = `http://app.test/?view=clip-generation&project=${team}&render=${team}`;
    expect(hrefForWorkspace(href, team, 'clip-generation')).toBe(`/?view=projects&workspace=${team}`);
  });

  it('leaves the address with the session: a sign-out or sign-up starts in the personal workspace', () => {
    expect(hrefWithoutDashboardState(`http://app.test/?workspace=${team}&view=members`)).toBe('/');
    expect(locationFromSearch(`?view=members&workspace=${team}`)).toEqual({ view: 'members', accountTab: 'profile' });
  });
});
