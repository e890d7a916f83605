import { sniffFileKind } from '../../services/content/fileSignatures';

const bytes = (...parts: Array<string | number[]>): Buffer =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))).concat(Buffer.alloc(16)));

describe('sniffFileKind', () => {
  it.each([
    ['jpeg', bytes([0xff, 0xd8, 0xff, 0xe0]), 'image/jpeg'],
    ['png', bytes([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), 'image/png'],
    ['gif87a', bytes('GIF87a'), 'image/gif'],
    ['gif89a', bytes('GIF89a'), 'image/gif'],
    ['webp', bytes('RIFF', [1, 2, 3, 4], 'WEBPVP8 '), 'image/webp'],
  ])('types %s as an accepted image', (_name, head, mime) => {
    expect(sniffFileKind(head)).toMatchObject({ kind: 'image', mime });
  });

  it.each([
    ['mp4', bytes([0, 0, 0, 0x18], 'ftypmp42')],
    ['mov', bytes([0, 0, 0, 0x14], 'ftypqt  ')],
    ['webm/mkv', bytes([0x1a, 0x45, 0xdf, 0xa3])],
    ['avi', bytes('RIFF', [1, 2, 3, 4], 'AVI LIST')],
    ['mpeg', bytes([0, 0, 1, 0xba])],
    ['flv', bytes('FLV', [1])],
    ['wmv', bytes([0x30, 0x26, 0xb2, 0x75])],
  ])('types %s as a video', (_name, head) => {
    expect(sniffFileKind(head).kind).toBe('video');
  });

  it.each([
    ['heic', bytes([0, 0, 0, 0x18], 'ftypheic')],
    ['avif', bytes([0, 0, 0, 0x1c], 'ftypavif')],
    ['wav', bytes('RIFF', [1, 2, 3, 4], 'WAVEfmt ')],
    ['svg', bytes('<svg xmlns=')],
    ['jpeg cut short', Buffer.from([0xff, 0xd8])],
    ['nothing', Buffer.alloc(0)],
  ])('does not accept %s', (_name, head) => {
    expect(sniffFileKind(head).kind).toBe('unknown');
  });
});
