import { describe, expect, it } from '@jest/globals';
import { resumeFingerprint, shouldRetryStatus } from './sendRenderResumable';
import { uploadInBatches } from './uploadQueue';

describe('resumable uploads in the browser', () => {
  it('tries again after a dropped connection, a server error, a conflict or a lock, never after a refusal', () => {
    expect(shouldRetryStatus(undefined)).toBe(true);
    expect(shouldRetryStatus(0)).toBe(true);
    expect(shouldRetryStatus(502)).toBe(true);
    expect(shouldRetryStatus(409)).toBe(true);
    expect(shouldRetryStatus(423)).toBe(true);
    for (const refused of [400, 401, 403, 404, 410, 413]) expect(shouldRetryStatus(refused)).toBe(false);
  });

  it('resumes only the same file into the same project', () => {
    const file = { name: 'tower.png', type: 'image/png', size: 123, lastModified: 42 };
    expect(resumeFingerprint(file, 'p1')).toBe(resumeFingerprint({ ...file }, 'p1'));
    expect(resumeFingerprint(file, 'p1')).not.toBe(resumeFingerprint(file, 'p2'));
    expect(resumeFingerprint(file, 'p1')).not.toBe(resumeFingerprint({ ...file, lastModified: 43 }, 'p1'));
    expect(resumeFingerprint(file, 'p1')).not.toBe(resumeFingerprint({ ...file, size: 124 }, 'p1'));
  });

  it('the upload queue shows a file\'s note (resuming) while it is in flight and clears it when the file is done', async () => {
    const seen: Array<string | null | undefined> = [];
    await uploadInBatches([{ name: 'a.png' }], {
      prepare: async (f) => f,
      send: async (_f, onFraction, onNote) => {
        onFraction(0.6);
        onNote('Resuming…');
        onFraction(0.8);
        onNote(null);
        return 'ok';
      },
      sleep: async () => undefined,
      onProgress: (p) => seen.push(p.note),
    });
    expect(seen).toContain('Resuming…');
    expect(seen[seen.length - 1]).toBeNull();
  });
});
