import { canCreate, pendingApprovalLimit, usageLimits } from './creditMath';
import { clipOrientation, aspectRatioLabel } from './orientation';

describe('pendingApprovalLimit', () => {
  it('clamps the whole available credits to 1..5', () => {
    expect([0, 1, 3, 5, 9].map(pendingApprovalLimit)).toEqual([1, 1, 3, 5, 5]);
  });
});

describe('usageLimits', () => {
  it('gives clips = floor(credits / 4) and images = credits', () => {
    expect(usageLimits(11)).toEqual({ clips: 2, images: 11 });
  });
});

describe('canCreate', () => {
  const base = { credits: 5, reservedCredits: 0, pendingCount: 0, pendingCost: 0, cooldownUntil: null, now: new Date('2026-01-01T00:00:00Z') };
  it('allows an image with 5 free credits', () => {
    expect(canCreate({ ...base, contentType: 'image' })).toMatchObject({ canCreate: true, reason: 'ok', limit: 5 });
  });
  it('refuses a clip when available credits are below 4', () => {
    expect(canCreate({ ...base, contentType: 'clip', reservedCredits: 2 }).reason).toBe('insufficient_credits');
  });
  it('counts each pending item once: a clip after one pending image on 5 credits is allowed', () => {
    expect(canCreate({ ...base, reservedCredits: 1, pendingCount: 1, pendingCost: 1, contentType: 'clip' })).toMatchObject({ canCreate: true, limit: 5 });
  });
  it('allows a fifth pending image on 5 credits and refuses a sixth', () => {
    expect(canCreate({ ...base, reservedCredits: 4, pendingCount: 4, pendingCost: 4, contentType: 'image' })).toMatchObject({ canCreate: true, limit: 5 });
    expect(canCreate({ ...base, reservedCredits: 5, pendingCount: 5, pendingCost: 5, contentType: 'image' }).canCreate).toBe(false);
  });
  it("says 'pending_cost' when the credits pending items hold would cover the cost, else 'insufficient_credits'", () => {
    expect(canCreate({ ...base, reservedCredits: 2, pendingCount: 2, pendingCost: 2, contentType: 'clip' }).reason).toBe('pending_cost');
    expect(canCreate({ ...base, credits: 3, reservedCredits: 1, pendingCount: 1, pendingCost: 1, contentType: 'clip' }).reason).toBe('insufficient_credits');
  });
  it('refuses at the pending-approval limit', () => {
    expect(canCreate({ ...base, credits: 20, reservedCredits: 2, pendingCount: 5, pendingCost: 2, contentType: 'image' }).reason).toBe('pending_limit');
  });
  it('refuses during a rejection cooldown and allows after it', () => {
    const until = new Date('2026-01-01T01:00:00Z');
    expect(canCreate({ ...base, contentType: 'image', cooldownUntil: until }).reason).toBe('cooldown');
    expect(canCreate({ ...base, contentType: 'image', cooldownUntil: until, now: new Date('2026-01-01T01:00:01Z') }).reason).toBe('ok');
  });
});

describe('clipOrientation', () => {
  it('reads the file name first, then analysis, then the ratio, defaulting to landscape', () => {
    expect(clipOrientation({ fileName: 'tour-vertical.mp4', analysisAspectRatio: '16:9' })).toBe('portrait');
    expect(clipOrientation({ fileName: 'a.mp4', analysisAspectRatio: '9:16' })).toBe('portrait');
    expect(clipOrientation({ fileName: 'a.mp4', aspectRatio: 0.5625 })).toBe('portrait');
    expect(clipOrientation({ fileName: 'a.mp4', aspectRatio: '4:3' })).toBe('landscape');
    expect(clipOrientation({ fileName: 'a.mp4', aspectRatio: '1:1' })).toBe('landscape');
  });
  it('labels stored dimensions with the nearest named ratio', () => {
    expect(aspectRatioLabel(1920, 1080)).toBe('16:9');
    expect(aspectRatioLabel(1080, 1920)).toBe('9:16');
    expect(aspectRatioLabel(1000, 1010)).toBe('1:1');
  });
});
