import { describe, expect, it } from '@jest/globals';
import { ASSEMBLY_STORAGE_PREFIX, SAVED_SELECTION_MAX_AGE_MS, parseSavedSelection, selectionKey, serializeSelection } from './selectionStorage';

const now = Date.UTC(2026, 10, 24, 12);

describe('saved clip selection', () => {
  it('keeps one record per user under an rs:assembly: key', () => {
    expect(selectionKey('u1')).toBe('rs:assembly:selection:u1');
    expect(selectionKey('u1').startsWith(ASSEMBLY_STORAGE_PREFIX)).toBe(true);
    expect(selectionKey('u2')).not.toBe(selectionKey('u1'));
  });

  it('writes selected, order and ts, and reads the same selection and project back', () => {
    const raw = serializeSelection(['c', 'a', 'b'], 'project-1', now);
    expect(JSON.parse(raw)).toEqual({ selected: ['c', 'a', 'b'], order: ['c', 'a', 'b'], ts: now, projectId: 'project-1' });
    expect(parseSavedSelection(raw, now + 1000)).toEqual({ order: ['c', 'a', 'b'], projectId: 'project-1' });
  });

  it('reads the selectedClips / clipOrder form too, clips given as ids or as objects with an id', () => {
    const raw = JSON.stringify({ selectedClips: [{ id: 'a' }, 'b', { id: 'c' }], clipOrder: ['c', 'a'], ts: now });
    // b was selected but missing from the order: it goes last
    expect(parseSavedSelection(raw, now)).toEqual({ order: ['c', 'a', 'b'], projectId: null });
  });

  it('drops ids in the order that are not selected, and duplicates', () => {
    const raw = JSON.stringify({ selected: ['a', 'b', 'a'], order: ['x', 'b', 'a', 'b'], ts: now });
    expect(parseSavedSelection(raw, now)).toEqual({ order: ['b', 'a'], projectId: null });
  });

  it('restores nothing from a missing, unreadable, timeless or too old record', () => {
    expect(parseSavedSelection(null, now)).toBeNull();
    expect(parseSavedSelection('{not json', now)).toBeNull();
    expect(parseSavedSelection('"text"', now)).toBeNull();
    expect(parseSavedSelection(JSON.stringify({ selected: 'a', ts: now }), now)).toBeNull();
    expect(parseSavedSelection(JSON.stringify({ selected: ['a'] }), now)).toBeNull();
    expect(parseSavedSelection(JSON.stringify({ selected: ['a'], ts: now - SAVED_SELECTION_MAX_AGE_MS - 1 }), now)).toBeNull();
    expect(parseSavedSelection(JSON.stringify({ selected: ['a'], ts: now - SAVED_SELECTION_MAX_AGE_MS + 1 }), now)).toEqual({ order: ['a'], projectId: null });
  });
});
