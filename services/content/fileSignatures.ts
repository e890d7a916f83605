/** What an upload is, judged by its first bytes (magic numbers), never by its name or declared type. */
export type UploadImageMime = 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp';

export type SniffedKind =
  | { kind: 'image'; mime: UploadImageMime; extension: 'jpg' | 'png' | 'gif' | 'webp' }
  | { kind: 'video'; format: string }
  | { kind: 'unknown' };

/** Bytes needed to tell every format below apart. */
export const SIGNATURE_BYTES = 16;

const ISO_IMAGE_BRANDS = new Set(['heic', 'heix', 'heim', 'heis', 'hevc', 'hevx', 'mif1', 'msf1', 'avif', 'avis']);

function ascii(head: Buffer, start: number, end: number): string {
  return head.subarray(start, end).toString('latin1');
}

export function sniffFileKind(head: Buffer): SniffedKind {
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return { kind: 'image', mime: 'image/jpeg', extension: 'jpg' };
  if (head.length >= 8 && head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) {
    return { kind: 'image', mime: 'image/png', extension: 'png' };
  }
  if (head.length >= 6 && (ascii(head, 0, 6) === 'GIF87a' || ascii(head, 0, 6) === 'GIF89a')) return { kind: 'image', mime: 'image/gif', extension: 'gif' };
  if (head.length >= 12 && ascii(head, 0, 4) === 'RIFF') {
    const form = ascii(head, 8, 12);
    if (form === 'WEBP') return { kind: 'image', mime: 'image/webp', extension: 'webp' };
    if (form === 'AVI ') return { kind: 'video', format: 'avi' };
    return { kind: 'unknown' };
  }
  if (head.length >= 12 && ascii(head, 4, 8) === 'ftyp') {
    // ISO base media: MP4, MOV, 3GP, M4V ... are videos; HEIF/AVIF are still images we do not accept
    const brand = ascii(head, 8, 12).toLowerCase();
    return ISO_IMAGE_BRANDS.has(brand) ? { kind: 'unknown' } : { kind: 'video', format: `iso-${brand.trim()}` };
  }
  if (head.length >= 4 && head[0] === 0x1a && head[1] === 0x45 && head[2] === 0xdf && head[3] === 0xa3) return { kind: 'video', format: 'matroska' };
  if (head.length >= 4 && head[0] === 0x00 && head[1] === 0x00 && head[2] === 0x01 && (head[3] === 0xba || head[3] === 0xb3)) return { kind: 'video', format: 'mpeg' };
  if (head.length >= 3 && ascii(head, 0, 3) === 'FLV') return { kind: 'video', format: 'flv' };
  if (head.length >= 4 && head[0] === 0x30 && head[1] === 0x26 && head[2] === 0xb2 && head[3] === 0x75) return { kind: 'video', format: 'asf' };
  return { kind: 'unknown' };
}

