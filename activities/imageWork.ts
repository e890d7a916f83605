/**
 * The sharp work of an image job behind one interface: the base image read for a provider, the watermarked preview,
 * the thumbnail, and the local provider's edit and upscale. It runs either here, on the caller's thread
 * (`inProcessImageWork`), or in a thread of its own (activities/imageThread.ts, what the worker uses).
 *
 * Why a thread (issue 16): the work makes and drops tens of MB of image buffers per job. Each Buffer counts as
 * external memory of the isolate holding it, and that drives V8 into a full collection about once per job, which
 * marks the whole heap: in the worker, 49 MB of Temporal SDK, database and storage modules, against about 7 MB in a
 * thread that holds only sharp and this work. The bytes are the same either way: the same functions run.
 */
import { LocalImageEditProvider } from '../providers/local/imageEdit';
import { LocalUpscaleProvider } from '../providers/local/upscale';
import type { ImageEditProvider, UpscaleProvider } from '../providers/types';
import { imageThumbnail, readSourceImage, watermarkPreview } from './imageMedia';

export interface ImageWork {
  /** activities/imageMedia.ts readSourceImage: the file at `path` prepared for a provider */
  readSourceImage(path: string): Promise<Buffer>;
  /** activities/imageMedia.ts watermarkPreview */
  watermarkPreview(image: Buffer): Promise<{ data: Buffer; width: number; height: number }>;
  /** activities/imageMedia.ts imageThumbnail */
  imageThumbnail(image: Buffer): Promise<Buffer>;
  /** The local provider's edit and upscale; createProviders puts them behind its breakers (`localImage`). */
  imageEdit: ImageEditProvider;
  upscale: UpscaleProvider;
}

/** The work on the caller's own thread: what the worker does with IMAGE_THREAD=off, and tests that need no thread. */
export const inProcessImageWork: ImageWork = {
  readSourceImage,
  watermarkPreview,
  imageThumbnail,
  imageEdit: new LocalImageEditProvider(),
  upscale: new LocalUpscaleProvider(),
};

/** Every task the image thread runs, by name: the in-process functions themselves. */
export const imageTasks = {
  readSourceImage: (path: string) => inProcessImageWork.readSourceImage(path),
  watermarkPreview: (image: Buffer) => inProcessImageWork.watermarkPreview(image),
  imageThumbnail: (image: Buffer) => inProcessImageWork.imageThumbnail(image),
  edit: (request: Parameters<ImageEditProvider['edit']>[0]) => inProcessImageWork.imageEdit.edit(request),
  upscale: (request: Parameters<UpscaleProvider['upscale']>[0]) => inProcessImageWork.upscale.upscale(request),
};

export type ImageTasks = typeof imageTasks;
export type ImageTaskName = keyof ImageTasks;

/** Messages between the worker's thread and the image thread (activities/imageThreadEntry.ts). */
export type ImageThreadInbound = { id: number; task: ImageTaskName; arg: unknown } | { id: 0; close: true };
export type ImageThreadOutbound =
  | { id: 0; ready: true }
  | { id: number; result: unknown }
  | { id: number; error: { name: string; message: string; stack?: string; code?: string; httpStatus?: number } };

/**
 * A message's value with `map` applied to its bytes: a task's argument or result is bytes, or an object with bytes
 * one level down (`{ image }`, `{ data }`). Structured clone hands bytes over as plain Uint8Arrays, so the receiver
 * maps them back to Buffers.
 */
export function mapBytes<T>(value: T, map: (bytes: Uint8Array) => Uint8Array): T {
  if (value instanceof Uint8Array) return map(value) as T;
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const [key, field] of Object.entries(out)) if (field instanceof Uint8Array) out[key] = map(field);
  return out as T;
}

/** The bytes of a value as `mapBytes` sees them, for a transfer list. */
export function buffersOf(value: unknown): Uint8Array[] {
  if (value instanceof Uint8Array) return [value];
  if (value === null || typeof value !== 'object') return [];
  return Object.values(value as Record<string, unknown>).filter((field): field is Uint8Array => field instanceof Uint8Array);
}
