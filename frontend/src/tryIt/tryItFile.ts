/** Browser side of the try-it storage: the page's localStorage and clock, and turning files into data URLs and back. */
import { compressForUpload } from '../upload/canvasCompression';
import { TRY_IT_STORAGE_FULL, TRY_IT_STORED_IMAGE_MAX_BYTES, TryItStorageError, TryItStore, tryItImageType, type KeyValueStore, type TryItFile } from './tryItStorage';

/** Compressed results stay well under this; anything bigger (an undecodable file, a large GIF) cannot fit localStorage. */
const STORABLE_MAX_BYTES = 3 * TRY_IT_STORED_IMAGE_MAX_BYTES;

/** Storage that does nothing, for browsers where localStorage is disabled (reading it throws there). */
const NO_STORAGE: KeyValueStore = {
  getItem: () => null,
  setItem: () => {
    throw new Error('localStorage is not available');
  },
  removeItem: () => undefined,
};

function pageStorage(): KeyValueStore {
  try {
    return window.localStorage;
  } catch {
    return NO_STORAGE;
  }
}

export function browserTryItStore(): TryItStore {
  return new TryItStore({ storage: pageStorage(), now: () => Date.now() });
}

function readDataUrl(blob: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => (typeof reader.result === 'string' ? resolve(reader.result) : reject(new Error('Could not read the image')));
    reader.onerror = () => reject(reader.error ?? new Error('Could not read the image'));
    reader.readAsDataURL(blob);
  });
}

/**
 * A picked file made ready for localStorage: images of 1 MB and more are redrawn smaller with the upload
 * compression (its progressive steps), then the result is read as a data URL.
 */
export async function prepareTryItImage(file: File): Promise<TryItFile> {
  const prepared = await compressForUpload(file, TRY_IT_STORED_IMAGE_MAX_BYTES);
  if (prepared.size > STORABLE_MAX_BYTES) throw new TryItStorageError(TRY_IT_STORAGE_FULL);
  const type = tryItImageType(prepared) ?? 'image/jpeg';
  // a file without a declared type would read as application/octet-stream: label it by its name instead
  const data = await readDataUrl(prepared.type === type ? prepared : new Blob([prepared], { type }));
  return { name: prepared.name, size: prepared.size, type, data };
}

/** The stored image back as a File, for POST /api/upload/renders. FileReader always writes base64 data URLs. */
export function tryItImageFile(image: TryItFile): File {
  const comma = image.data.indexOf(',');
  const header = image.data.slice(0, comma);
  const payload = image.data.slice(comma + 1);
  if (!header.endsWith(';base64')) return new File([decodeURIComponent(payload)], image.name, { type: image.type });
  const binary = atob(payload);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return new File([bytes], image.name, { type: image.type });
}
