import { describe, expect, it } from '@jest/globals';
import { cannotMixMessage } from '../../../../domain/assembly';
import type { Orientation } from '../../../../domain/orientation';
import { MAX_ASSEMBLY_CLIPS, aspectForFamily, assembleBlocker, moveClip, orientationOf, restoreSelection, selectionFamily, toggleClip } from './clipSelection';

const families = new Map<string, Orientation>([
  ['l1', 'landscape'],
  ['l2', 'landscape'],
  ['l3', 'landscape'],
  ['l4', 'landscape'],
  ['l5', 'landscape'],
  ['l6', 'landscape'],
  ['p1', 'portrait'],
  ['p2', 'portrait'],
]);
const familyOf = (id: string) => families.get(id);

describe('clip selection rules', () => {
  it('selects clips in the order they are clicked and deselects one without disturbing the others', () => {
    let selected: string[] = [];
    for (const id of ['l2', 'l1', 'l3']) selected = toggleClip(selected, id, familyOf).selected;
    expect(selected).toEqual(['l2', 'l1', 'l3']);
    expect(toggleClip(selected, 'l1', familyOf)).toEqual({ selected: ['l2', 'l3'], error: null });
  });

  it("refuses a sixth clip with 'Maximum 5 clips allowed', leaving the selection as it was", () => {
    const five = ['l1', 'l2', 'l3', 'l4', 'l5'];
    expect(five).toHaveLength(MAX_ASSEMBLY_CLIPS);
    expect(toggleClip(five, 'l6', familyOf)).toEqual({ selected: five, error: 'Maximum 5 clips allowed' });
    // deselecting is always possible at the cap
    expect(toggleClip(five, 'l5', familyOf).selected).toEqual(['l1', 'l2', 'l3', 'l4']);
  });

  it('lets the first selected clip fix the family, with the spec text naming both families, until the selection is cleared', () => {
    const landscape = toggleClip([], 'l1', familyOf).selected;
    expect(toggleClip(landscape, 'p1', familyOf)).toEqual({
      selected: ['l1'],
      error: 'Cannot mix landscape and portrait clips. Please select clips of the same aspect ratio.',
    });
    const portrait = toggleClip([], 'p1', familyOf).selected;
    expect(toggleClip(portrait, 'l1', familyOf).error).toBe(cannotMixMessage('portrait', 'landscape'));
    expect(toggleClip(portrait, 'p2', familyOf)).toEqual({ selected: ['p1', 'p2'], error: null });
    // cleared (the last clip removed): any family may start again
    const cleared = toggleClip(landscape, 'l1', familyOf).selected;
    expect(cleared).toEqual([]);
    expect(toggleClip(cleared, 'p1', familyOf)).toEqual({ selected: ['p1'], error: null });
  });

  it("names the selection's family by its first clip, and none when empty", () => {
    expect(selectionFamily([], familyOf)).toBeNull();
    expect(selectionFamily(['p2', 'p1'], familyOf)).toBe('portrait');
    expect(selectionFamily(['gone', 'l3'], familyOf)).toBe('landscape');
  });

  it('moves a clip to where it was dropped, both ways, and ignores unknown ids', () => {
    expect(moveClip(['a', 'b', 'c', 'd'], 'a', 'c')).toEqual(['b', 'c', 'a', 'd']);
    expect(moveClip(['a', 'b', 'c', 'd'], 'd', 'b')).toEqual(['a', 'd', 'b', 'c']);
    expect(moveClip(['a', 'b'], 'a', 'a')).toEqual(['a', 'b']);
    expect(moveClip(['a', 'b'], 'x', 'a')).toEqual(['a', 'b']);
  });

  it('assembles portrait at 9:16 and landscape at 16:9', () => {
    expect(aspectForFamily('portrait')).toBe('9:16');
    expect(aspectForFamily('landscape')).toBe('16:9');
  });

  it('asks for a clip first, then for the project, with the spec texts', () => {
    expect(assembleBlocker([], 'p')).toBe('Please select at least one clip to assemble');
    expect(assembleBlocker([], null)).toBe('Please select at least one clip to assemble');
    expect(assembleBlocker(['l1'], null)).toBe('Please select a project to save the assembled video');
    expect(assembleBlocker(['l1'], 'p')).toBeNull();
  });

  it('restores a saved selection against the clips listed now: gone ids and duplicates dropped, the rules applied again', () => {
    expect(restoreSelection(['l3', 'gone', 'l1', 'l3'], families)).toEqual(['l3', 'l1']);
    // a stored mix (written by an older version, or edited by hand) keeps the first clip's family
    expect(restoreSelection(['p1', 'l1', 'p2'], families)).toEqual(['p1', 'p2']);
    expect(restoreSelection(['l1', 'l2', 'l3', 'l4', 'l5', 'l6'], families)).toEqual(['l1', 'l2', 'l3', 'l4', 'l5']);
  });
});

describe('orientation of a listed clip', () => {
  const clip = (file_name: string, aspect_ratio: string | null, analysis: Record<string, unknown> = {}) => ({ file_name, aspect_ratio, analysis_data: analysis });

  it("uses the domain's rule: file name first, then analysis aspectRatio, then aspect_ratio, else landscape", () => {
    expect(orientationOf(clip('lobby-vertical.mp4', '16:9', { aspectRatio: '16:9' }))).toBe('portrait');
    expect(orientationOf(clip('lobby.mp4', null, { aspectRatio: '9:16' }))).toBe('portrait');
    expect(orientationOf(clip('lobby.mp4', '9:16', { aspectRatio: '4:3' }))).toBe('landscape');
    expect(orientationOf(clip('lobby.mp4', '2:3'))).toBe('portrait');
    // 4:5 is 0.8 exactly: not below 0.8, so the default
    expect(orientationOf(clip('lobby.mp4', '4:5'))).toBe('landscape');
    expect(orientationOf(clip('lobby.mp4', '1:1'))).toBe('landscape');
    expect(orientationOf(clip('lobby.mp4', null, { aspectRatio: 0.5 }))).toBe('landscape');
  });
});
