import { describe, expect, it } from '@jest/globals';
import type { DraftImage } from '../../api/enhanceSet';
import { failedSince, runningJobIds, scopedSelection, toWorkspaceImage } from './draftImages';
import { draftVersions, versionLabel } from './draftVersions';

function image(id: string, extra: Partial<DraftImage> = {}): DraftImage {
  return {
    id,
    name: `${id}.png`,
    source_url: `/files/drafts/u/${id}.png`,
    resolved_url: `/files/drafts/u/v2-${id}.png?sig=1`,
    metadata: {
      previous_url: `/files/drafts/u/${id}.png?sig=2`,
      history: [
        { url: `/files/drafts/u/v2-${id}.png`, signed_url: `/files/drafts/u/v2-${id}.png?sig=1` },
        { url: `/files/drafts/u/${id}.png`, signed_url: `/files/drafts/u/${id}.png?sig=2` },
      ],
    },
    order_index: 0,
    source_type: 'uploaded',
    job: null,
    last_job: null,
    ...extra,
  };
}

describe('history versions', () => {
  it('labels Current, Previous, then Back N', () => {
    expect([0, 1, 2, 7].map(versionLabel)).toEqual(['Current', 'Previous', 'Back 2', 'Back 7']);
  });

  it('lists at most 8 versions, newest first, without repeats', () => {
    const history = Array.from({ length: 10 }, (_, i) => ({ url: `/v${9 - i}.png` }));
    const versions = draftVersions('/v9.png', history);
    expect(versions).toHaveLength(8);
    expect(versions.map((v) => v.url)).toEqual(['/v9.png', '/v8.png', '/v7.png', '/v6.png', '/v5.png', '/v4.png', '/v3.png', '/v2.png']);
    expect(versions.map((v) => v.label).slice(0, 3)).toEqual(['Current', 'Previous', 'Back 2']);
    expect(versions.filter((v) => v.current)).toHaveLength(1);
  });
});

describe('toWorkspaceImage', () => {
  it('shows the current version, restores by stable address, and offers Redo only with a previous version', () => {
    const view = toWorkspaceImage(image('a'));
    expect(view.displayUrl).toBe('/files/drafts/u/v2-a.png?sig=1');
    expect(view.currentUrl).toBe('/files/drafts/u/v2-a.png');
    expect(view.previousUrl).toBe('/files/drafts/u/a.png?sig=2');
    expect(view.history.map((h) => h.displayUrl)).toEqual(['/files/drafts/u/v2-a.png?sig=1', '/files/drafts/u/a.png?sig=2']);
    const fresh = toWorkspaceImage(image('b', { metadata: { previous_url: null, history: [{ url: '/files/drafts/u/b.png', signed_url: '/s/b' }] } }));
    expect(fresh.previousUrl).toBeNull();
    expect(fresh.currentUrl).toBe('/files/drafts/u/b.png');
  });
});

describe('scopedSelection', () => {
  const images = ['a', 'b', 'c', 'd'].map((id) => toWorkspaceImage(image(id)));

  it('goes to all images, the selected ones, or the first selected one, never the pinned style image', () => {
    const selected = new Set(['c', 'b']);
    expect(scopedSelection('all', images, selected, null)).toEqual(['a', 'b', 'c', 'd']);
    expect(scopedSelection('all', images, selected, 'a')).toEqual(['b', 'c', 'd']);
    expect(scopedSelection('selected', images, selected, null)).toEqual(['b', 'c']);
    expect(scopedSelection('selected', images, selected, 'b')).toEqual(['c']);
    expect(scopedSelection('first selected', images, selected, null)).toEqual(['b']);
    expect(scopedSelection('selected', images, new Set(), null)).toEqual([]);
  });
});

describe('job states', () => {
  it("reads 'Processing…' from the server's unfinished job", () => {
    const images = [image('a', { job: { id: 'j1', status: 'processing' } }), image('b', { job: { id: 'j2', status: 'pending' } }), image('c')];
    expect([...runningJobIds(images)]).toEqual(['a', 'b']);
  });

  it('tells which jobs ended in failure since the last read', () => {
    const now = [image('a', { last_job: { id: 'j1', status: 'failed', error: 'The edit failed. Please try again.' } }), image('b', { last_job: { id: 'j2', status: 'completed' } }), image('c', { last_job: { id: 'j3', status: 'failed' } })];
    expect(failedSince(new Set(['a', 'b']), now)).toEqual([{ id: 'a', name: 'a.png', error: 'The edit failed. Please try again.' }]);
  });
});
