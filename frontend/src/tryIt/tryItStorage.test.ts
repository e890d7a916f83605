import { describe, expect, it } from '@jest/globals';
import { TRY_IT_MESSAGES } from '../../../domain/tryIt';
import { TRY_IT_KEYS, TRY_IT_STORAGE_FULL, TryItStorageError, TryItStore, tryItImageType, type KeyValueStore, type TryItFile } from './tryItStorage';

/** localStorage as a Map; `quotaChars` makes setItem throw like a full storage when the total would pass it. */
class MemoryStorage implements KeyValueStore {
  readonly items = new Map<string, string>();
  constructor(private readonly quotaChars = Infinity) {}
  getItem(key: string): string | null {
    return this.items.get(key) ?? null;
  }
  setItem(key: string, value: string): void {
    let total = value.length;
    for (const [k, v] of this.items) if (k !== key) total += v.length;
    if (total > this.quotaChars) throw new Error('QuotaExceededError');
    this.items.set(key, value);
  }
  removeItem(key: string): void {
    this.items.delete(key);
  }
}

const HOUR = 60 * 60 * 1000;

function setup(quotaChars?: number) {
  const storage = new MemoryStorage(quotaChars);
  const clock = { now: 1_800_000_000_000 };
  let n = 0;
  const store = new TryItStore({ storage, now: () => clock.now, newId: () => `img-${++n}` });
  return { storage, clock, store };
}

function file(name: string, data = 'data:image/png;base64,iVBORw0KGgo='): TryItFile {
  return { name, size: 2048, type: 'image/png', data };
}

describe('TryItStore images', () => {
  it('keeps an image with name, size, type, data and when it was saved, and gives the latest back', () => {
    const { store, storage, clock } = setup();
    store.saveImage(file('first.png'));
    clock.now += 1000;
    const second = store.saveImage({ name: 'second.jpg', size: 512_000, type: 'image/jpeg', data: 'data:image/jpeg;base64,/9j/' });
    expect(second).toEqual({ id: 'img-2', name: 'second.jpg', size: 512_000, type: 'image/jpeg', data: 'data:image/jpeg;base64,/9j/', timestamp: clock.now });
    expect(store.latestImage()).toEqual(second);
    expect(JSON.parse(storage.getItem(TRY_IT_KEYS.images)!)).toHaveLength(2);
  });

  it('allows at most 3 images, at the pick and at the save', () => {
    const { store } = setup();
    for (const name of ['a.png', 'b.png', 'c.png']) {
      expect(store.checkPick({ name, size: 100, type: 'image/png' })).toBeNull();
      store.saveImage(file(name));
    }
    expect(store.checkPick({ name: 'd.png', size: 100, type: 'image/png' })).toBe('Maximum 3 images allowed. Please clear existing images first.');
    expect(() => store.saveImage(file('d.png'))).toThrow(new TryItStorageError(TRY_IT_MESSAGES.maxImages));
    store.removeImage('img-2');
    expect(store.images().map((i) => i.name)).toEqual(['a.png', 'c.png']);
    expect(store.checkPick({ name: 'd.png', size: 100, type: 'image/png' })).toBeNull();
    store.clearImages();
    expect(store.images()).toEqual([]);
  });

  it('lets images expire after 2 hours (7,200,000 ms) and drops them from storage', () => {
    const { store, storage, clock } = setup();
    store.saveImage(file('old.png'));
    clock.now += 7_200_000 - 1;
    expect(store.latestImage()?.name).toBe('old.png');
    clock.now += 1;
    expect(store.latestImage()).toBeNull();
    expect(store.pending()).toBeNull();
    expect(storage.getItem(TRY_IT_KEYS.images)).toBeNull();
  });

  it('reports a full storage with its own text and keeps what was stored before', () => {
    const big = `data:image/png;base64,${'A'.repeat(3000)}`;
    const { store } = setup(7000);
    store.saveImage(file('one.png', big));
    store.saveImage(file('two.png', big));
    expect(() => store.saveImage(file('three.png', big))).toThrow(TRY_IT_STORAGE_FULL);
    expect(store.images().map((i) => i.name)).toEqual(['one.png', 'two.png']);
  });

  it('ignores unreadable or foreign entries instead of failing', () => {
    const { store, storage } = setup();
    storage.setItem(TRY_IT_KEYS.images, '{not json');
    expect(store.images()).toEqual([]);
    storage.setItem(TRY_IT_KEYS.images, JSON.stringify([{ name: 'x.png', data: 'http://example.com/x.png' }]));
    expect(store.images()).toEqual([]);
    expect(storage.getItem(TRY_IT_KEYS.images)).toBeNull();
  });
});

describe('TryItStore pick checks', () => {
  it('allows 5 picks per minute, remembered 5 minutes', () => {
    const { store, storage, clock } = setup();
    const pick = () => store.checkPick({ name: 'house.png', size: 1000, type: 'image/png' });
    for (let i = 0; i < 5; i++) {
      expect(pick()).toBeNull();
      clock.now += 10_000;
    }
    // 5 picks in the last 50 s
    expect(pick()).toBe('Upload rate limit exceeded. Please wait before uploading again.');
    // a minute after the first pick, one slot is free again
    clock.now += 10_000;
    expect(pick()).toBeNull();
    expect(pick()).toBe(TRY_IT_MESSAGES.rateLimited);
    expect(JSON.parse(storage.getItem(TRY_IT_KEYS.attempts)!)).toHaveLength(6);
    // after 5 minutes the attempts are forgotten
    clock.now += 5 * 60 * 1000;
    expect(pick()).toBeNull();
    expect(JSON.parse(storage.getItem(TRY_IT_KEYS.attempts)!)).toHaveLength(1);
  });

  it('counts picks with a wrong type too, so the limit cannot be dodged', () => {
    const { store, clock } = setup();
    for (let i = 0; i < 5; i++) expect(store.checkPick({ name: 'notes.pdf', size: 10, type: 'application/pdf' })).toBe(TRY_IT_MESSAGES.invalidType);
    clock.now += 59_000;
    expect(store.checkPick({ name: 'house.png', size: 10, type: 'image/png' })).toBe(TRY_IT_MESSAGES.rateLimited);
  });

  it('accepts JPG, PNG, GIF and WebP, refuses other types with a message naming them, and refuses videos and files over 150 MB', () => {
    const { store } = setup();
    expect(TRY_IT_MESSAGES.invalidType).toMatch(/JPG, PNG, GIF or WebP/);
    expect(store.checkPick({ name: 'a.jpg', size: 10, type: 'image/jpeg' })).toBeNull();
    expect(store.checkPick({ name: 'b.webp', size: 10, type: 'image/webp' })).toBeNull();
    expect(store.checkPick({ name: 'c.gif', size: 10, type: 'image/gif' })).toBeNull();
    expect(store.checkPick({ name: 'd.heic', size: 10, type: 'image/heic' })).toBe(TRY_IT_MESSAGES.invalidType);
    expect(store.checkPick({ name: 'e.mp4', size: 10, type: 'video/mp4' })).toBe('Video uploads are not supported. Please upload images only.');
  });

  it('refuses files over 150 MB with the size in the message', () => {
    const { store } = setup();
    expect(store.checkPick({ name: 'huge.png', size: 157_286_400, type: 'image/png' })).toBeNull();
    expect(store.checkPick({ name: 'huge.png', size: 200 * 1024 * 1024, type: 'image/png' })).toBe('File too large: 200.0MB. Maximum size is 150MB.');
  });

  it('takes the type from the name when the system gives none', () => {
    expect(tryItImageType({ name: 'House.PNG', type: '' })).toBe('image/png');
    expect(tryItImageType({ name: 'house.jpeg', type: '' })).toBe('image/jpeg');
    expect(tryItImageType({ name: 'house.tiff', type: '' })).toBeNull();
    expect(tryItImageType({ name: 'house.png', type: 'text/plain' })).toBeNull();
  });
});

describe('TryItStore selection and welcome', () => {
  it('keeps selectedPlatform, selectedEffect and timestamp, merging changes', () => {
    const { store, storage, clock } = setup();
    store.saveSelection({ selectedEffect: 'Drone Shot' });
    clock.now += 5000;
    store.saveSelection({ selectedPlatform: 'TikTok' });
    expect(JSON.parse(storage.getItem(TRY_IT_KEYS.selection)!)).toEqual({ selectedPlatform: 'TikTok', selectedEffect: 'Drone Shot', timestamp: clock.now });
    expect(store.selection()).toEqual({ selectedPlatform: 'TikTok', selectedEffect: 'Drone Shot', timestamp: clock.now });
  });

  it('lets the selection expire after 24 hours', () => {
    const { store, storage, clock } = setup();
    store.saveSelection({ selectedEffect: 'Zoom In', selectedPlatform: 'Square' });
    clock.now += 24 * HOUR - 1;
    expect(store.selection()?.selectedPlatform).toBe('Square');
    clock.now += 1;
    expect(store.selection()).toBeNull();
    expect(storage.getItem(TRY_IT_KEYS.selection)).toBeNull();
  });

  it('drops unknown platforms and effects from a stored selection', () => {
    const { store, storage, clock } = setup();
    storage.setItem(TRY_IT_KEYS.selection, JSON.stringify({ selectedPlatform: 'MySpace', selectedEffect: 'Pan Left', timestamp: clock.now }));
    expect(store.selection()).toEqual({ selectedPlatform: null, selectedEffect: 'Pan Left', timestamp: clock.now });
  });

  it('hands over the latest image with the selection after signup, and nothing without an image', () => {
    const { store, clock } = setup();
    store.saveSelection({ selectedEffect: 'Walk Through', selectedPlatform: 'Instagram' });
    expect(store.pending()).toBeNull();
    store.saveImage(file('first.png'));
    clock.now += 1;
    store.saveImage(file('chosen.png'));
    expect(store.pending()).toEqual({
      image: expect.objectContaining({ name: 'chosen.png' }),
      selection: { selectedPlatform: 'Instagram', selectedEffect: 'Walk Through', timestamp: clock.now - 1 },
    });
  });

  it('shows the welcome only in its project and for 24 hours, and forgets it with the selection once answered', () => {
    const { store, clock } = setup();
    store.saveSelection({ selectedEffect: 'Day to Night', selectedPlatform: 'YouTube' });
    store.saveWelcome({ projectId: 'p-1', projectName: 'harbour view', renderId: 'r-1', fileName: 'harbour-view.png', fileSize: 2048 });
    expect(store.welcomeFor('p-2')).toBeNull();
    expect(store.welcomeFor('p-1')).toEqual({
      welcome: { projectId: 'p-1', projectName: 'harbour view', renderId: 'r-1', fileName: 'harbour-view.png', fileSize: 2048, timestamp: clock.now },
      selection: { selectedPlatform: 'YouTube', selectedEffect: 'Day to Night', timestamp: clock.now },
    });
    store.finishWelcome();
    expect(store.welcomeFor('p-1')).toBeNull();
    expect(store.selection()).toBeNull();

    store.saveWelcome({ projectId: 'p-1', projectName: 'harbour view', renderId: null, fileName: 'a.png', fileSize: 1 });
    clock.now += 24 * HOUR;
    expect(store.welcomeFor('p-1')).toBeNull();
  });
});
