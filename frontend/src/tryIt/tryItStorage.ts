/**
 * The try-it flow's local storage rules (spec 000 sections 3, 5 and 9): what a visitor picked on the landing page
 * before signing up. Pure: the storage and the clock are given, so the rules run in jest as they run in the page.
 */
import { MAX_UPLOAD_BYTES, PLATFORMS, UPLOAD_MIME_TYPES, VIDEO_EFFECTS, type Platform, type VideoEffect } from '../../../domain/constants';
import { MSG } from '../../../domain/messages';
import {
  TRY_IT_ATTEMPT_MEMORY_MS,
  TRY_IT_IMAGE_TTL_MS,
  TRY_IT_MAX_IMAGES,
  TRY_IT_MESSAGES,
  TRY_IT_RATE_WINDOW_MS,
  TRY_IT_SELECTION_TTL_MS,
  TRY_IT_UPLOADS_PER_MINUTE,
} from '../../../domain/tryIt';

/** The part of the Web Storage API used here (window.localStorage in the page, a Map in tests). */
export interface KeyValueStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

export const TRY_IT_KEYS = {
  selection: 'tryit_selection',
  images: 'tryit_images',
  attempts: 'tryit_upload_attempts',
  welcome: 'tryit_welcome',
} as const;

/** A stored image's data URL must fit next to two others in localStorage (about 5 million characters per site). */
export const TRY_IT_STORED_IMAGE_MAX_BYTES = 1_048_576;

export const TRY_IT_STORAGE_FULL = 'Your browser could not keep this image. Please choose a smaller image or clear existing images.';

/** The try-it selection entity: the chosen platform and effect, and when they were chosen. */
export interface TryItSelection {
  selectedPlatform: Platform | null;
  selectedEffect: VideoEffect | null;
  timestamp: number;
}

/** A picked file as the browser keeps it: name, size, type and the image itself as a data URL. */
export interface TryItFile {
  name: string;
  size: number;
  type: string;
  data: string;
}

export interface StoredTryItImage extends TryItFile {
  id: string;
  timestamp: number;
}

/** Written once onboarding made the project: what its welcome dialog shows. */
export interface TryItWelcome {
  projectId: string;
  projectName: string;
  /** the uploaded try-it image, or null when its upload failed */
  renderId: string | null;
  fileName: string;
  fileSize: number;
  timestamp: number;
}

export interface PendingTryIt {
  image: StoredTryItImage;
  selection: TryItSelection | null;
}

export class TryItStorageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TryItStorageError';
  }
}

export interface TryItStoreDeps {
  storage: KeyValueStore;
  now: () => number;
  newId?: () => string;
}

const EXTENSION_TYPES: Record<string, string> = { jpg: 'image/jpeg', jpeg: 'image/jpeg', png: 'image/png', gif: 'image/gif', webp: 'image/webp' };

/** The file's image type: its declared type, or from the name when the system gave none; null when not accepted. */
export function tryItImageType(file: { name: string; type: string }): string | null {
  if ((UPLOAD_MIME_TYPES as readonly string[]).includes(file.type)) return file.type;
  if (file.type !== '') return null;
  const ext = /\.([a-z0-9]+)$/i.exec(file.name)?.[1]?.toLowerCase();
  return ext ? (EXTENSION_TYPES[ext] ?? null) : null;
}

function isPlatform(value: unknown): value is Platform {
  return typeof value === 'string' && (PLATFORMS as readonly string[]).includes(value);
}

function isEffect(value: unknown): value is VideoEffect {
  return typeof value === 'string' && (VIDEO_EFFECTS as readonly string[]).includes(value);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isStoredImage(value: unknown): value is StoredTryItImage {
  return (
    isRecord(value) &&
    typeof value.id === 'string' &&
    typeof value.name === 'string' &&
    typeof value.size === 'number' &&
    typeof value.type === 'string' &&
    typeof value.data === 'string' &&
    value.data.startsWith('data:') &&
    typeof value.timestamp === 'number'
  );
}

function isWelcome(value: unknown): value is TryItWelcome {
  return (
    isRecord(value) &&
    typeof value.projectId === 'string' &&
    typeof value.projectName === 'string' &&
    (value.renderId === null || typeof value.renderId === 'string') &&
    typeof value.fileName === 'string' &&
    typeof value.fileSize === 'number' &&
    typeof value.timestamp === 'number'
  );
}

function defaultId(): string {
  return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
}

/** The try-it data of this browser. Expired or unreadable entries are dropped as they are read. */
export class TryItStore {
  private readonly storage: KeyValueStore;
  private readonly now: () => number;
  private readonly newId: () => string;

  constructor(deps: TryItStoreDeps) {
    this.storage = deps.storage;
    this.now = deps.now;
    this.newId = deps.newId ?? defaultId;
  }

  // ---------- images ----------

  /** The stored images that have not expired (2 hours), oldest first. */
  images(): StoredTryItImage[] {
    const raw = this.read(TRY_IT_KEYS.images);
    const all = Array.isArray(raw) ? raw : [];
    const now = this.now();
    const live = all.filter((image): image is StoredTryItImage => isStoredImage(image) && now - image.timestamp < TRY_IT_IMAGE_TTL_MS);
    if (live.length !== all.length || (raw !== null && !Array.isArray(raw))) this.writeImages(live);
    return live;
  }

  latestImage(): StoredTryItImage | null {
    const images = this.images();
    return images.length ? images[images.length - 1] : null;
  }

  /**
   * The checks before a picked file is read: the 3-image cap, 5 picks per minute, then type and size. An allowed
   * pick is remembered (5 minutes) as an upload attempt. Answers the message to show, or null to go on.
   */
  checkPick(file: { name: string; size: number; type: string }): string | null {
    if (this.images().length >= TRY_IT_MAX_IMAGES) return TRY_IT_MESSAGES.maxImages;
    const now = this.now();
    const attempts = this.attempts();
    if (attempts.filter((at) => now - at < TRY_IT_RATE_WINDOW_MS).length >= TRY_IT_UPLOADS_PER_MINUTE) return TRY_IT_MESSAGES.rateLimited;
    this.writeAttempts([...attempts, now]);
    if (file.type.startsWith('video/')) return MSG.videoUploadsNotSupported;
    if (!tryItImageType(file)) return TRY_IT_MESSAGES.invalidType;
    if (file.size > MAX_UPLOAD_BYTES) return MSG.fileTooLarge((file.size / (1024 * 1024)).toFixed(1));
    return null;
  }

  /** Keeps a prepared (compressed) image. Throws TryItStorageError with the text to show when it cannot. */
  saveImage(file: TryItFile): StoredTryItImage {
    const images = this.images();
    if (images.length >= TRY_IT_MAX_IMAGES) throw new TryItStorageError(TRY_IT_MESSAGES.maxImages);
    if (!file.data.startsWith('data:')) throw new TryItStorageError(TRY_IT_MESSAGES.invalidType);
    const image: StoredTryItImage = { id: this.newId(), name: file.name, size: file.size, type: file.type, data: file.data, timestamp: this.now() };
    try {
      this.storage.setItem(TRY_IT_KEYS.images, JSON.stringify([...images, image]));
    } catch {
      // QuotaExceededError: the earlier images stay as they were
      throw new TryItStorageError(TRY_IT_STORAGE_FULL);
    }
    return image;
  }

  removeImage(id: string): void {
    this.writeImages(this.images().filter((image) => image.id !== id));
  }

  clearImages(): void {
    this.remove(TRY_IT_KEYS.images);
  }

  // ---------- selection ----------

  /** The chosen platform and effect, unless older than 24 hours. */
  selection(): TryItSelection | null {
    const raw = this.read(TRY_IT_KEYS.selection);
    if (!isRecord(raw) || typeof raw.timestamp !== 'number' || this.now() - raw.timestamp >= TRY_IT_SELECTION_TTL_MS) {
      if (raw !== null) this.remove(TRY_IT_KEYS.selection);
      return null;
    }
    return {
      selectedPlatform: isPlatform(raw.selectedPlatform) ? raw.selectedPlatform : null,
      selectedEffect: isEffect(raw.selectedEffect) ? raw.selectedEffect : null,
      timestamp: raw.timestamp,
    };
  }

  /** Changes the platform and/or the effect; the timestamp restarts the 24 hours. */
  saveSelection(change: Partial<Pick<TryItSelection, 'selectedPlatform' | 'selectedEffect'>>): TryItSelection {
    const current = this.selection();
    const next: TryItSelection = {
      selectedPlatform: change.selectedPlatform !== undefined ? change.selectedPlatform : (current?.selectedPlatform ?? null),
      selectedEffect: change.selectedEffect !== undefined ? change.selectedEffect : (current?.selectedEffect ?? null),
      timestamp: this.now(),
    };
    this.write(TRY_IT_KEYS.selection, next);
    return next;
  }

  clearSelection(): void {
    this.remove(TRY_IT_KEYS.selection);
  }

  // ---------- after signup ----------

  /** What onboarding turns into a first project: the latest live image and the selection, or null without an image. */
  pending(): PendingTryIt | null {
    const image = this.latestImage();
    return image ? { image, selection: this.selection() } : null;
  }

  saveWelcome(welcome: Omit<TryItWelcome, 'timestamp'>): TryItWelcome {
    const stored: TryItWelcome = { ...welcome, timestamp: this.now() };
    this.write(TRY_IT_KEYS.welcome, stored);
    return stored;
  }

  /** The welcome dialog's data for this project, while the selection it shows is live (24 hours). */
  welcomeFor(projectId: string): { welcome: TryItWelcome; selection: TryItSelection | null } | null {
    const raw = this.read(TRY_IT_KEYS.welcome);
    if (!isWelcome(raw) || this.now() - raw.timestamp >= TRY_IT_SELECTION_TTL_MS) {
      if (raw !== null) this.remove(TRY_IT_KEYS.welcome);
      return null;
    }
    return raw.projectId === projectId ? { welcome: raw, selection: this.selection() } : null;
  }

  /** The dialog was answered (or skipped): it and the choices it showed are done with. */
  finishWelcome(): void {
    this.remove(TRY_IT_KEYS.welcome);
    this.remove(TRY_IT_KEYS.selection);
  }

  // ---------- storage ----------

  private attempts(): number[] {
    const raw = this.read(TRY_IT_KEYS.attempts);
    const now = this.now();
    return (Array.isArray(raw) ? raw : []).filter((at): at is number => typeof at === 'number' && now - at < TRY_IT_ATTEMPT_MEMORY_MS && at <= now);
  }

  private writeAttempts(attempts: number[]): void {
    try {
      this.storage.setItem(TRY_IT_KEYS.attempts, JSON.stringify(attempts));
    } catch {
      // a full storage must not block a pick: the images' own write reports it
    }
  }

  private writeImages(images: StoredTryItImage[]): void {
    if (images.length === 0) this.remove(TRY_IT_KEYS.images);
    else this.write(TRY_IT_KEYS.images, images);
  }

  private read(key: string): unknown {
    try {
      const text = this.storage.getItem(key);
      return text === null ? null : (JSON.parse(text) as unknown);
    } catch {
      // storage disabled, or not our JSON
      return undefined;
    }
  }

  private write(key: string, value: unknown): void {
    try {
      this.storage.setItem(key, JSON.stringify(value));
    } catch {
      // a selection or welcome record is small: a full or disabled storage loses it, the page still works
    }
  }

  private remove(key: string): void {
    try {
      this.storage.removeItem(key);
    } catch {
      // storage disabled
    }
  }
}
