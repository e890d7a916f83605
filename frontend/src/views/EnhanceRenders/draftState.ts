/**
 * The Enhance Renders tool's browser storage (spec 001 sections 3 and 7): the local draft state autosaved per
 * draft, and the intro-seen and access flags. Pure: the store is given, so jest runs the same rules as the page.
 */
import { DRAFT_LIMITS } from '../../../../domain/enhanceRenders';
import type { KeyValueStore } from '../../tryIt/tryItStorage';

export type { KeyValueStore };

export const ENHANCE_KEYS = {
  access: 'rs:enhance:access',
  introSeen: 'rs:enhance:introSeen',
  draftPrefix: 'rs:enhance:draft:',
} as const;

/** Autosave waits this long after the last change (001 section 9). */
export const AUTOSAVE_DEBOUNCE_MS = DRAFT_LIMITS.autosaveDebounceMs;

export type Scope = 'all' | 'selected' | 'first selected';
export const SCOPES: readonly Scope[] = ['all', 'selected', 'first selected'];

export interface StyleProfile {
  aspect_ratio: 'keep';
  locks: { background: boolean; lighting: boolean; materials: boolean; geometry: boolean };
  seed_mode: 'shared';
  artifact_guard: boolean;
}

/** The spec's defaults: keep the aspect ratio, every lock on, one shared seed, the artifact guard on. */
export function defaultStyleProfile(): StyleProfile {
  return {
    aspect_ratio: 'keep',
    locks: { background: true, lighting: true, materials: true, geometry: true },
    seed_mode: 'shared',
    artifact_guard: true,
  };
}

export interface Attachment {
  id: string;
  type: 'reference';
  url: string;
  name: string;
  useForLook: boolean;
  placements: string[];
}

/** What the browser remembers of an image between visits: the server's fields it showed, and its own extras. */
export interface LocalDraftImage {
  id: string;
  name: string;
  url: string;
  selected: boolean;
  showPrevious: boolean;
  prompt: string;
}

export interface LocalDraftState {
  id: string;
  name: string;
  images: LocalDraftImage[];
  styleProfile: StyleProfile;
  scope: Scope;
  briefText: string;
  enhancedBrief: string;
  attachments: Attachment[];
  selectedAttachmentId: string | null;
}

export function emptyDraftState(id: string, name: string): LocalDraftState {
  return {
    id,
    name,
    images: [],
    styleProfile: defaultStyleProfile(),
    scope: 'selected',
    briefText: '',
    enhancedBrief: '',
    attachments: [],
    selectedAttachmentId: null,
  };
}

export function serializeDraftState(state: LocalDraftState): string {
  return JSON.stringify(state);
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown, fallback = ''): string {
  return typeof value === 'string' ? value : fallback;
}

function bool(value: unknown, fallback: boolean): boolean {
  return typeof value === 'boolean' ? value : fallback;
}

function readStyleProfile(value: unknown): StyleProfile {
  const defaults = defaultStyleProfile();
  if (!isObject(value)) return defaults;
  const locks = isObject(value.locks) ? value.locks : {};
  return {
    aspect_ratio: 'keep',
    locks: {
      background: bool(locks.background, true),
      lighting: bool(locks.lighting, true),
      materials: bool(locks.materials, true),
      geometry: bool(locks.geometry, true),
    },
    seed_mode: 'shared',
    artifact_guard: bool(value.artifact_guard, true),
  };
}

function readAttachment(value: unknown): Attachment | null {
  if (!isObject(value) || typeof value.id !== 'string' || typeof value.url !== 'string' || !value.url) return null;
  return {
    id: value.id,
    type: 'reference',
    url: value.url,
    name: text(value.name, 'reference'),
    useForLook: bool(value.useForLook, true),
    placements: Array.isArray(value.placements) ? value.placements.filter((p): p is string => typeof p === 'string') : [],
  };
}

function readImage(value: unknown): LocalDraftImage | null {
  if (!isObject(value) || typeof value.id !== 'string') return null;
  return {
    id: value.id,
    name: text(value.name),
    url: text(value.url),
    selected: bool(value.selected, false),
    showPrevious: bool(value.showPrevious, false),
    prompt: text(value.prompt),
  };
}

/**
 * Reads a saved state back for draft `id`. Anything unreadable (another draft's state, a damaged or older
 * shape) gives null or falls back field by field to the defaults, so a bad entry never breaks the view.
 */
export function parseDraftState(raw: string | null, id: string): LocalDraftState | null {
  if (!raw) return null;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return null;
  }
  if (!isObject(value) || value.id !== id) return null;
  const attachments = Array.isArray(value.attachments) ? value.attachments.map(readAttachment).filter((a): a is Attachment => a !== null) : [];
  const selectedAttachmentId = typeof value.selectedAttachmentId === 'string' && attachments.some((a) => a.id === value.selectedAttachmentId) ? value.selectedAttachmentId : null;
  return {
    id,
    name: text(value.name),
    images: Array.isArray(value.images) ? value.images.map(readImage).filter((i): i is LocalDraftImage => i !== null) : [],
    styleProfile: readStyleProfile(value.styleProfile),
    scope: SCOPES.includes(value.scope as Scope) ? (value.scope as Scope) : 'selected',
    briefText: text(value.briefText),
    enhancedBrief: text(value.enhancedBrief),
    attachments,
    selectedAttachmentId,
  };
}

export function loadDraftState(store: KeyValueStore, id: string): LocalDraftState | null {
  try {
    return parseDraftState(store.getItem(ENHANCE_KEYS.draftPrefix + id), id);
  } catch {
    return null;
  }
}

/** Saves the state; a full or blocked storage only loses the autosave, never the page. */
export function saveDraftState(store: KeyValueStore, state: LocalDraftState): boolean {
  try {
    store.setItem(ENHANCE_KEYS.draftPrefix + state.id, serializeDraftState(state));
    return true;
  } catch {
    return false;
  }
}

export function forgetDraftState(store: KeyValueStore, id: string): void {
  try {
    store.removeItem(ENHANCE_KEYS.draftPrefix + id);
  } catch {
    // storage blocked: nothing to forget
  }
}

function flag(store: KeyValueStore, key: string): boolean {
  try {
    return store.getItem(key) === '1';
  } catch {
    return false;
  }
}

function setFlag(store: KeyValueStore, key: string, on: boolean): void {
  try {
    if (on) store.setItem(key, '1');
    else store.removeItem(key);
  } catch {
    // storage blocked: the flag lasts for this page only
  }
}

export const accessFlag = {
  read: (store: KeyValueStore) => flag(store, ENHANCE_KEYS.access),
  write: (store: KeyValueStore, on: boolean) => setFlag(store, ENHANCE_KEYS.access, on),
};

export const introSeenFlag = {
  read: (store: KeyValueStore) => flag(store, ENHANCE_KEYS.introSeen),
  write: (store: KeyValueStore, on: boolean) => setFlag(store, ENHANCE_KEYS.introSeen, on),
};

/** The intro tour opens on the first visit, or whenever the address says `?intro=1`. */
export function shouldShowIntro(store: KeyValueStore, search: string): boolean {
  return new URLSearchParams(search).get('intro') === '1' || !introSeenFlag.read(store);
}

/**
 * Calls `save` once, `ms` after the last of a burst of `schedule` calls; `flush` saves a pending change now
 * (leaving the draft), `cancel` drops it. The timer functions are given so tests control time.
 */
export function debouncedSaver<T>(
  save: (value: T) => void,
  ms: number = AUTOSAVE_DEBOUNCE_MS,
  timers: { set: (fn: () => void, ms: number) => unknown; clear: (handle: unknown) => void } = {
    set: (fn, delay) => setTimeout(fn, delay),
    clear: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  },
): { schedule: (value: T) => void; flush: () => void; cancel: () => void } {
  let handle: unknown = null;
  let pending: { value: T } | null = null;
  const run = () => {
    handle = null;
    if (!pending) return;
    const { value } = pending;
    pending = null;
    save(value);
  };
  return {
    schedule: (value) => {
      pending = { value };
      if (handle !== null) timers.clear(handle);
      handle = timers.set(run, ms);
    },
    flush: () => {
      if (handle !== null) timers.clear(handle);
      run();
    },
    cancel: () => {
      if (handle !== null) timers.clear(handle);
      handle = null;
      pending = null;
    },
  };
}
