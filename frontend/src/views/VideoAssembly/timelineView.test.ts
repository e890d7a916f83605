import { describe, expect, it } from '@jest/globals';
import { secondsText, timelineView, transitionText, type ClipLookup } from './timelineView';

const lookup: ClipLookup = {
  byId: new Map([
    ['c1', 'Lobby'],
    ['c2', 'Pool'],
  ]),
  byFile: new Map([['/api/files/clips/u/terrace.mp4', 'Terrace']]),
};

const answer = {
  success: true,
  request: {
    timeline: {
      tracks: [
        { clips: [{ asset: { type: 'title', text: 'Harbour View' }, start: 0, length: 4.5 }] },
        {
          clips: [
            { asset: { type: 'video', src: 'https://cdn/x.mp4' }, clipId: 'c1', start: 0, length: 5, transition: { out: 'fade' } },
            { asset: { type: 'video', src: '/api/files/clips/u/terrace.mp4?expires=1&sig=x' }, start: 4.5, length: 5, transition: { in: 'fade', out: 'wipeLeft' } },
            { asset: { type: 'video', src: 'other.mp4' }, meta: { clipId: 'c2' }, start: 9, length: 5, transition: { in: 'wipeLeft' } },
            { asset: { type: 'video' }, start: 14, length: 0 },
          ],
        },
      ],
    },
    output: { format: 'mp4', size: { width: 1920, height: 1080 } },
  },
  preview: { totalDuration: 14 },
};

describe('dry run timeline', () => {
  it('reads tracks and clips with start, length and transitions, the output size and the total duration', () => {
    const view = timelineView(answer, lookup);
    expect(view).not.toBeNull();
    expect(view?.width).toBe(1920);
    expect(view?.height).toBe(1080);
    expect(view?.totalDuration).toBe(14);
    // the video track first, then captions; a clip of no length is left out
    expect(view?.tracks.map((t) => t.label)).toEqual(['Video', 'Captions']);
    expect(view?.tracks[0].clips.map((c) => [c.label, c.start, c.length, c.transitionIn, c.transitionOut])).toEqual([
      ['Lobby', 0, 5, null, 'fade'],
      ['Terrace', 4.5, 5, 'fade', 'wipeLeft'],
      ['Pool', 9, 5, 'wipeLeft', null],
    ]);
    expect(view?.tracks[1].clips[0]).toMatchObject({ kind: 'title', label: 'Harbour View' });
  });

  it('counts the total from the clips when the preview does not say, and names unknown clips by position', () => {
    const view = timelineView({ request: { timeline: { tracks: [{ clips: [{ asset: { type: 'video', src: 'a' }, start: 0, length: 5 }, { asset: { type: 'video', src: 'b' }, start: 4, length: 5 }] }] } } }, lookup);
    expect(view?.totalDuration).toBe(9);
    expect(view?.width).toBeNull();
    expect(view?.tracks[0].clips.map((c) => c.label)).toEqual(['Clip 1', 'Clip 2']);
  });

  it('answers null for an answer without a timeline', () => {
    expect(timelineView(null, lookup)).toBeNull();
    expect(timelineView({ request: {} }, lookup)).toBeNull();
  });

  it('writes seconds and transition names for people', () => {
    expect(secondsText(14)).toBe('14 s');
    expect(secondsText(4.4999)).toBe('4.5 s');
    expect(transitionText('wipeLeft')).toBe('wipe left');
    expect(transitionText('fade')).toBe('fade');
  });

  it('names the brand parts: the title card with its text, the logo with its corner, size and opacity, the end card', () => {
    const view = timelineView(
      {
        request: {
          timeline: {
            tracks: [
              {
                clips: [
                  { part: 'titleCard', asset: { type: 'title', text: 'Harbour View' }, start: 0, length: 2 },
                  { part: 'logo', asset: { type: 'image', src: '/api/files/images/brand/w/logo.png' }, start: 0, length: 8, position: 'bottom-left', opacity: 0.6, box: { x: 96, y: 900, width: 216, height: 108 } },
                  { part: 'endCard', asset: { type: 'card' }, start: 8, length: 4.5 },
                ],
              },
              { clips: [{ asset: { type: 'video', src: 'a.mp4' }, start: 0, length: 8 }] },
            ],
          },
        },
      },
      lookup,
    );
    const brand = view?.tracks.find((t) => t.label === 'Brand');
    expect(brand?.clips.map((c) => [c.label, c.start, c.length])).toEqual([
      ['Title card: Harbour View', 0, 2],
      ['Logo: bottom left, 216 × 108 px, 60% opacity', 0, 8],
      ['End card', 8, 4.5],
    ]);
  });
});
