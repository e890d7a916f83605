import { describe, expect, it } from '@jest/globals';
import { dropZoneError } from './fileChecks';
import { UploadAttemptError } from './retryPolicy';
import { uploadInBatches, type UploadProgress } from './uploadQueue';

const file = (name: string) => ({ name });

describe('uploadInBatches', () => {
  it('prepares each file once, retries a transient failure, and reports the outcome per file', async () => {
    const prepared: string[] = [];
    const attempts = new Map<string, number>();
    const summary = await uploadInBatches([file('a.png'), file('b.png'), file('c.png'), file('d.png')], {
      prepare: async (f) => {
        prepared.push(f.name);
        return f.name;
      },
      send: async (name) => {
        const n = (attempts.get(name) ?? 0) + 1;
        attempts.set(name, n);
        if (name === 'b.png' && n === 1) throw new UploadAttemptError({ kind: 'http', status: 503, message: 'busy' });
        if (name === 'c.png') throw new UploadAttemptError({ kind: 'http', status: 400, message: 'File "c.png" has invalid type.' });
        return `stored ${name}`;
      },
      sleep: async () => undefined,
      random: () => 0,
    });
    expect(prepared.sort()).toEqual(['a.png', 'b.png', 'c.png', 'd.png']);
    expect(attempts.get('b.png')).toBe(2);
    expect(attempts.get('c.png')).toBe(1);
    expect(summary.succeeded.map((s) => s.name)).toEqual(['a.png', 'b.png', 'd.png']);
    expect(summary.failed).toEqual([{ name: 'c.png', message: 'File "c.png" has invalid type.' }]);
  });

  it('reports percent, completed/total and the current file, ending at 100%', async () => {
    const seen: UploadProgress[] = [];
    await uploadInBatches([file('one.png'), file('two.png')], {
      prepare: async (f) => f.name,
      send: async (name, onFraction) => {
        onFraction(0.5);
        return name;
      },
      sleep: async () => undefined,
      onProgress: (p) => seen.push(p),
    });
    expect(seen[0]).toEqual({ percent: 0, completed: 0, total: 2, currentFile: null, note: null });
    expect(seen).toContainEqual(expect.objectContaining({ currentFile: 'one.png', completed: 0 }));
    expect(seen).toContainEqual(expect.objectContaining({ currentFile: 'two.png' }));
    const percents = seen.map((p) => p.percent);
    expect([...percents].sort((a, b) => a - b)).toEqual(percents);
    expect(seen[seen.length - 1]).toEqual({ percent: 100, completed: 2, total: 2, currentFile: null, note: null });
  });

  it('counts a file whose preparation failed as failed, without sending it', async () => {
    let sent = 0;
    const summary = await uploadInBatches([file('bad.png')], {
      prepare: async () => {
        throw new Error('Could not compress the image');
      },
      send: async () => {
        sent++;
        return 'x';
      },
      sleep: async () => undefined,
    });
    expect(sent).toBe(0);
    expect(summary.failed).toEqual([{ name: 'bad.png', message: 'Could not compress the image' }]);
  });
});

describe('dropZoneError', () => {
  const png = (name: string, size = 1000) => ({ name, size, type: 'image/png' });

  it('allows up to 10 accepted images', () => {
    expect(dropZoneError(Array.from({ length: 10 }, (_, i) => png(`r${i}.png`)))).toBeNull();
    expect(dropZoneError([{ name: 'noext-type.JPG', size: 10, type: '' }])).toBeNull();
  });

  it('refuses more than 10 files, a wrong type, a video and a file over 150 MB with the spec texts', () => {
    expect(dropZoneError(Array.from({ length: 11 }, (_, i) => png(`r${i}.png`)))).toBe('Maximum 10 files allowed');
    expect(dropZoneError([{ name: 'plan.pdf', size: 10, type: 'application/pdf' }])).toBe('File "plan.pdf" has invalid type. Accepted types: JPEG, JPG, PNG, GIF, WEBP');
    expect(dropZoneError([{ name: 'tour.mp4', size: 10, type: 'video/mp4' }])).toBe('Video uploads are not supported. Please upload images only.');
    expect(dropZoneError([png('huge.png', 157286401)])).toBe('File "huge.png" is too large. Maximum size: 150MB');
    expect(dropZoneError([png('edge.png', 157286400)])).toBeNull();
  });
});
