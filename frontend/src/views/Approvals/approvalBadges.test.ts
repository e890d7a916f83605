import { describe, expect, it } from '@jest/globals';
import { approvalTypeBadge, deadlineBadge, saveCostLabel } from './approvalBadges';

const NOW = Date.parse('2026-11-22T12:00:00Z');
const at = (ms: number) => new Date(NOW + ms).toISOString();
const HOUR = 3_600_000;

describe('approval card badges', () => {
  it('reads Expired at or past the deadline, hours under a day, days otherwise', () => {
    expect(deadlineBadge(at(-1), NOW)).toBe('Expired');
    expect(deadlineBadge(at(0), NOW)).toBe('Expired');
    expect(deadlineBadge(at(10 * 60_000), NOW)).toBe('1 hour left');
    expect(deadlineBadge(at(5.5 * HOUR), NOW)).toBe('5 hours left');
    expect(deadlineBadge(at(24 * HOUR - 1), NOW)).toBe('23 hours left');
    expect(deadlineBadge(at(24 * HOUR), NOW)).toBe('1 day left');
    expect(deadlineBadge(at(36 * HOUR - 1), NOW)).toBe('1 day left');
    expect(deadlineBadge(at(7 * 24 * HOUR - 60_000), NOW)).toBe('7 days left');
    expect(deadlineBadge(at(7 * 24 * HOUR), NOW)).toBe('7 days left');
    expect(deadlineBadge('not a date', NOW)).toBe('Expired');
  });

  it('names the type: clip aspect label, AI Generated Image, Assembled Video', () => {
    expect(approvalTypeBadge({ content_type: 'clip', aspect_ratio: '9:16' })).toBe('Clip 9:16');
    expect(approvalTypeBadge({ content_type: 'clip', aspect_ratio: null })).toBe('Clip');
    expect(approvalTypeBadge({ content_type: 'image', aspect_ratio: '1:1' })).toBe('AI Generated Image');
    expect(approvalTypeBadge({ content_type: 'assembly', aspect_ratio: '16:9' })).toBe('Assembled Video');
  });

  it("labels Save with the remaining cost, or 'Free'", () => {
    expect(saveCostLabel(0)).toBe('Free');
    expect(saveCostLabel(1)).toBe('1 credit');
    expect(saveCostLabel(4)).toBe('4 credits');
  });
});
