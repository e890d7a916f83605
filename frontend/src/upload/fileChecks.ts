import { DROP_ZONE_MAX_FILES, MAX_UPLOAD_BYTES, UPLOAD_MIME_TYPES } from '../../../domain/constants';

export const ACCEPTED_TYPES_LABEL = 'JPEG, JPG, PNG, GIF, WEBP';
export const ACCEPT_ATTRIBUTE = [...UPLOAD_MIME_TYPES, '.jpg', '.jpeg', '.png', '.gif', '.webp'].join(',');
const EXTENSIONS = ['jpg', 'jpeg', 'png', 'gif', 'webp'];

export interface FileLike {
  name: string;
  size: number;
  type: string;
}

function accepted(file: FileLike): boolean {
  if ((UPLOAD_MIME_TYPES as readonly string[]).includes(file.type)) return true;
  // some systems give no type: fall back to the name (the server checks the content anyway)
  const ext = /\.([a-z0-9]+)$/i.exec(file.name)?.[1]?.toLowerCase();
  return file.type === '' && ext !== undefined && EXTENSIONS.includes(ext);
}

/** The drop zone's checks (000 section 5): the first problem's message, or null when every file may go. */
export function dropZoneError(files: readonly FileLike[], maxFiles = DROP_ZONE_MAX_FILES, maxBytes = MAX_UPLOAD_BYTES): string | null {
  if (files.length > maxFiles) return `Maximum ${maxFiles} files allowed`;
  for (const file of files) {
    if (file.type.startsWith('video/')) return 'Video uploads are not supported. Please upload images only.';
    if (!accepted(file)) return `File "${file.name}" has invalid type. Accepted types: ${ACCEPTED_TYPES_LABEL}`;
    if (file.size > maxBytes) return `File "${file.name}" is too large. Maximum size: ${Math.round(maxBytes / (1024 * 1024))}MB`;
  }
  return null;
}
