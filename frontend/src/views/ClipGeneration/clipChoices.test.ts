import { describe, expect, it } from '@jest/globals';
import { clipSourceFromSearch, projectFromSearch } from '../../atoms/clipUrl';
import { hrefWithParams } from '../../atoms/viewUrl';
import { durationText } from '../ContentLibrary/libraryItems';
import { canCreate } from '../../../../domain/creditMath';
import { EFFECT_CHOICES, PLATFORM_CHOICES, aspectLabel, clampProgress, clipOriginalPrompt, clipStatusPollMs, clipWaitText, creditNotice } from './clipChoices';

const ID = '0f8fad5b-d9cb-469f-a165-70867728950e';
const check = { canCreate: false, cost: 4, available: 5, limit: 5, pendingCount: 0, pendingCost: 0 };

describe('Generate Clip choices', () => {
  it('offers the main screen effects and the four social platforms, each with its aspect', () => {
    expect(EFFECT_CHOICES).toEqual(['Bring to Life', 'Walk Through', 'Day to Night', 'Drone Shot']);
    expect(PLATFORM_CHOICES.map(aspectLabel)).toEqual(['16:9 Landscape', '16:9 Landscape', '9:16 Portrait', '9:16 Portrait']);
  });

  it('words each effect as the originalPrompt of its clip start', () => {
    expect(clipOriginalPrompt('Day to Night')).toBe('Day to Night: Daylight fades into a blue evening');
    expect(new Set(EFFECT_CHOICES.map(clipOriginalPrompt)).size).toBe(EFFECT_CHOICES.length);
  });

  it('turns the server start rule into the notice to show', () => {
    expect(creditNotice({ ...check, canCreate: true, reason: 'ok' })).toEqual({ kind: 'none' });
    expect(creditNotice({ ...check, reason: 'pending_limit', limit: 3, pendingCount: 3 })).toEqual({ kind: 'pending-limit', limit: 3, pendingCount: 3 });
    expect(creditNotice({ ...check, reason: 'pending_cost', pendingCost: 4, available: 4 })).toEqual({ kind: 'pending-cost', pendingCost: 4, available: 4 });
    expect(creditNotice({ ...check, reason: 'insufficient_credits', available: -1 })).toEqual({ kind: 'insufficient', available: 0 });
    expect(creditNotice({ ...check, reason: 'cooldown' })).toEqual({ kind: 'cooldown' });
  });

  it('shows the amber pending-cost notice, not "Not enough credits", when pending approvals hold credits the balance has', () => {
    // 5 credits, two pending images holding 2 of them: 3 available for a 4-credit clip
    const rule = canCreate({ contentType: 'clip', credits: 5, reservedCredits: 2, pendingCount: 2, pendingCost: 2, cooldownUntil: null, now: new Date() });
    expect(creditNotice({ ...rule, pendingCost: 2 })).toEqual({ kind: 'pending-cost', pendingCost: 2, available: 3 });
    // 3 credits in all cannot pay for a clip whatever is decided in Approvals
    const poor = canCreate({ contentType: 'clip', credits: 3, reservedCredits: 1, pendingCount: 1, pendingCost: 1, cooldownUntil: null, now: new Date() });
    expect(creditNotice({ ...poor, pendingCost: 1 })).toEqual({ kind: 'insufficient', available: 2 });
  });

  it('keeps progress in 0..100', () => {
    expect([clampProgress(-3), clampProgress(42.6), clampProgress(140), clampProgress(Number.NaN)]).toEqual([0, 43, 100, 0]);
  });

  it('shows durations as m:ss', () => {
    expect([durationText(5), durationText(4.96), durationText(75), durationText(0)]).toEqual(['0:05', '0:05', '1:15', '0:00']);
  });
});

describe('Generate Clip address', () => {
  it('reads one source and the project from the address, never both sources', () => {
    expect(clipSourceFromSearch(`?view=clip-generation&project=${ID}&render=${ID}`)).toEqual({ kind: 'render', id: ID });
    expect(clipSourceFromSearch(`?image=${ID}`)).toEqual({ kind: 'image', id: ID });
    expect(clipSourceFromSearch(`?render=${ID}&image=${ID}`)).toBeNull();
    expect(clipSourceFromSearch('?render=../../etc')).toBeNull();
    expect(projectFromSearch(`?project=${ID}`)).toBe(ID);
    expect(projectFromSearch('?project=x')).toBeNull();
  });

  it('sets and removes parameters, keeping the others', () => {
    const href = hrefWithParams(`https://app.test/?view=projects&project=${ID}&render=old#top`, { render: null, image: ID });
    const url = new URL(href);
    expect(url.searchParams.get('project')).toBe(ID);
    expect(url.searchParams.get('render')).toBeNull();
    expect(url.searchParams.get('image')).toBe(ID);
    expect(url.hash).toBe('#top');
  });

  it('polls a running job only at the spec fallback cadence: 60 s portrait and square, 90 s landscape', () => {
    expect(clipStatusPollMs('9:16')).toBe(60_000);
    expect(clipStatusPollMs('1:1')).toBe(60_000);
    expect(clipStatusPollMs('16:9')).toBe(90_000);
  });

  it('says the spec’s 7 to 15 minutes for a hosted provider or an unknown one, and this server’s own time when it makes clips itself', () => {
    expect(clipWaitText({ maker: 'hosted', typicalSeconds: { min: 420, max: 900 } })).toBe('Generation typically takes 7 to 15 minutes.');
    expect(clipWaitText(null)).toBe('Generation typically takes 7 to 15 minutes.');
    expect(clipWaitText({ maker: 'local', typicalSeconds: { min: 10, max: 60 } })).toBe('Generation typically takes under a minute on this server.');
    expect(clipWaitText({ maker: 'local', typicalSeconds: { min: 20, max: 90 } })).toBe('Generation typically takes 20 to 90 seconds on this server.');
  });
});
