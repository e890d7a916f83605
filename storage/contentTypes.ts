/** The type a stored file is served with, from its extension (stored paths carry the extension of their content). */
const CONTENT_TYPES: Record<string, string> = {
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  png: 'image/png',
  gif: 'image/gif',
  webp: 'image/webp',
  mp4: 'video/mp4',
  webm: 'video/webm',
  mov: 'video/quicktime',
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  m4a: 'audio/mp4',
  aac: 'audio/aac',
  flac: 'audio/flac',
  zip: 'application/zip',
};

export function contentTypeOf(path: string): string {
  const ext = /\.([a-z0-9]+)$/i.exec(path)?.[1]?.toLowerCase() ?? '';
  return CONTENT_TYPES[ext] ?? 'application/octet-stream';
}

/** A zip (the data export) downloads under its own name instead of opening; everything else shows inline. */
export function downloadsAsAttachment(path: string): boolean {
  return contentTypeOf(path) === 'application/zip';
}

/** `attachment; filename="..."` as the API's file route sends it; for other characters an ASCII fallback and the RFC 5987 form. */
export function attachmentDisposition(fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return ascii === fileName ? `attachment; filename="${fileName}"` : `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName)}`;
}

/** Spec 000 section 5: stored files are cached for 3600 s. */
export const OBJECT_CACHE_SECONDS = 3600;
