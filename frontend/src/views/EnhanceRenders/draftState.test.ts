import { describe, expect, it } from '@jest/globals';
import {
  AUTOSAVE_DEBOUNCE_MS,
  ENHANCE_KEYS,
  accessFlag,
  debouncedSaver,
  defaultStyleProfile,
  emptyDraftState,
  forgetDraftState,
  introSeenFlag,
  loadDraftState,
  parseDraftState,
  saveDraftState,
  serializeDraftState,
  shouldShowIntro,
  type KeyValueStore,
  type LocalDraftState,
} from './draftState';

function memoryStore(): KeyValueStore & { data: Map<string, string> } {
  const data = new Map<string, string>();
  return { data, getItem: (k) => data.get(k) ?? null, setItem: (k, v) => void data.set(k, v), removeItem: (k) => void data.delete(k) };
}

const DRAFT = 'b1c2d3e4-0000-4000-8000-000000000001';

function sample(): LocalDraftState {
  return {
    ...emptyDraftState(DRAFT, 'Harbour towers'),
    images: [{ id: 'img-1', name: 'tower.png', url: '/files/drafts/a.png', selected: true, showPrevious: false, prompt: 'dusk' }],
    scope: 'first selected',
    briefText: 'a snowy evening',
    enhancedBrief: 'A snowy evening. Keep the geometry.',
    attachments: [{ id: 'att-1', type: 'reference', url: '/files/drafts/ref.png', name: 'ref.png', useForLook: false, placements: ['sky'] }],
    selectedAttachmentId: 'att-1',
  };
}

describe('local draft state', () => {
  it("starts from the spec's style profile: keep aspect, every lock on, shared seed, artifact guard on", () => {
    expect(defaultStyleProfile()).toEqual({
      aspect_ratio: 'keep',
      locks: { background: true, lighting: true, materials: true, geometry: true },
      seed_mode: 'shared',
      artifact_guard: true,
    });
    expect(emptyDraftState(DRAFT, 'x')).toMatchObject({ scope: 'selected', briefText: '', enhancedBrief: '', attachments: [], selectedAttachmentId: null, images: [] });
  });

  it('reads back exactly what it wrote', () => {
    const state = sample();
    expect(parseDraftState(serializeDraftState(state), DRAFT)).toEqual(state);
  });

  it("refuses another draft's state and anything unreadable", () => {
    expect(parseDraftState(serializeDraftState(sample()), 'another-draft')).toBeNull();
    expect(parseDraftState('{not json', DRAFT)).toBeNull();
    expect(parseDraftState('[]', DRAFT)).toBeNull();
    expect(parseDraftState(null, DRAFT)).toBeNull();
  });

  it('falls back field by field for a damaged or older shape', () => {
    const raw = JSON.stringify({
      id: DRAFT,
      name: 7,
      images: [{ id: 'ok', selected: 'yes' }, { noId: true }],
      styleProfile: { locks: { lighting: false }, artifact_guard: 'no' },
      scope: 'everything',
      briefText: 'kept',
      attachments: [{ id: 'a', url: '' }, { id: 'b', url: '/r.png' }],
      selectedAttachmentId: 'a',
    });
    expect(parseDraftState(raw, DRAFT)).toEqual({
      id: DRAFT,
      name: '',
      images: [{ id: 'ok', name: '', url: '', selected: false, showPrevious: false, prompt: '' }],
      styleProfile: { ...defaultStyleProfile(), locks: { background: true, lighting: false, materials: true, geometry: true } },
      scope: 'selected',
      briefText: 'kept',
      enhancedBrief: '',
      attachments: [{ id: 'b', type: 'reference', url: '/r.png', name: 'reference', useForLook: true, placements: [] }],
      selectedAttachmentId: null,
    });
  });

  it('is kept per draft in storage and forgotten with the draft', () => {
    const store = memoryStore();
    expect(saveDraftState(store, sample())).toBe(true);
    expect(store.data.has(ENHANCE_KEYS.draftPrefix + DRAFT)).toBe(true);
    expect(loadDraftState(store, DRAFT)).toEqual(sample());
    forgetDraftState(store, DRAFT);
    expect(loadDraftState(store, DRAFT)).toBeNull();
  });

  it('survives a full or blocked storage', () => {
    const blocked: KeyValueStore = {
      getItem: () => {
        throw new Error('SecurityError');
      },
      setItem: () => {
        throw new Error('QuotaExceededError');
      },
      removeItem: () => {
        throw new Error('SecurityError');
      },
    };
    expect(saveDraftState(blocked, sample())).toBe(false);
    expect(loadDraftState(blocked, DRAFT)).toBeNull();
    expect(accessFlag.read(blocked)).toBe(false);
    expect(() => accessFlag.write(blocked, true)).not.toThrow();
  });
});

describe('access and intro flags', () => {
  it('keeps the unlock and the intro-seen flag in storage', () => {
    const store = memoryStore();
    expect(accessFlag.read(store)).toBe(false);
    accessFlag.write(store, true);
    expect(accessFlag.read(store)).toBe(true);
    accessFlag.write(store, false);
    expect(store.data.has(ENHANCE_KEYS.access)).toBe(false);
  });

  it('shows the intro on the first visit and whenever ?intro=1 asks for it', () => {
    const store = memoryStore();
    expect(shouldShowIntro(store, '?view=enhance-set')).toBe(true);
    introSeenFlag.write(store, true);
    expect(shouldShowIntro(store, '?view=enhance-set')).toBe(false);
    expect(shouldShowIntro(store, '?view=enhance-set&intro=1')).toBe(true);
    expect(shouldShowIntro(store, '?intro=0')).toBe(false);
  });
});

describe('debouncedSaver', () => {
  function fakeTimers() {
    let now = 0;
    const pending: Array<{ at: number; fn: () => void; id: number }> = [];
    let nextId = 1;
    return {
      timers: {
        set: (fn: () => void, ms: number) => {
          const id = nextId++;
          pending.push({ at: now + ms, fn, id });
          return id;
        },
        clear: (id: unknown) => {
          const i = pending.findIndex((p) => p.id === id);
          if (i >= 0) pending.splice(i, 1);
        },
      },
      advance(ms: number) {
        now += ms;
        for (const p of pending.filter((x) => x.at <= now)) {
          pending.splice(pending.indexOf(p), 1);
          p.fn();
        }
      },
    };
  }

  it('saves once, 800 ms after the last change, with the latest value', () => {
    const clock = fakeTimers();
    const saved: string[] = [];
    const saver = debouncedSaver<string>((v) => saved.push(v), AUTOSAVE_DEBOUNCE_MS, clock.timers);
    expect(AUTOSAVE_DEBOUNCE_MS).toBe(800);
    saver.schedule('a');
    clock.advance(500);
    saver.schedule('ab');
    clock.advance(799);
    expect(saved).toEqual([]);
    clock.advance(1);
    expect(saved).toEqual(['ab']);
    clock.advance(5000);
    expect(saved).toEqual(['ab']);
  });

  it('saves a pending change at once on flush, and nothing on cancel', () => {
    const clock = fakeTimers();
    const saved: string[] = [];
    const saver = debouncedSaver<string>((v) => saved.push(v), 800, clock.timers);
    saver.schedule('leaving');
    saver.flush();
    expect(saved).toEqual(['leaving']);
    saver.flush();
    expect(saved).toEqual(['leaving']);
    saver.schedule('dropped');
    saver.cancel();
    clock.advance(2000);
    expect(saved).toEqual(['leaving']);
  });
});
