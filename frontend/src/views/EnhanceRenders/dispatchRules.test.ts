import { describe, expect, it } from '@jest/globals';
import { HTTPError, TimeoutError } from 'ky';
import { isNetworkFailure } from '../../api/enhanceSet';
import { dispatchToasts, failedToStartText, isSavedImageId, runTargets, startedImageIds, withDispatchRetry } from './dispatchRules';

const ID_A = '3f8e2a34-1c1b-4d4e-9a43-0c9b1e2f7a10';
const ID_B = '8d0c9e11-2b7a-4f51-8e3b-6a5c4d3e2f10';

describe('runTargets', () => {
  it('asks for a selection when nothing is selected', () => {
    expect(runTargets([])).toEqual({ ok: false, message: 'Select at least one image to transform' });
  });

  it('counts only saved images (UUID ids) and asks to wait when none is saved yet', () => {
    expect(isSavedImageId(ID_A)).toBe(true);
    expect(isSavedImageId('local-1')).toBe(false);
    expect(runTargets(['local-1', 'local-2'])).toEqual({ ok: false, message: 'Please wait a moment for images to finish saving, then try again.' });
    expect(runTargets(['local-1', ID_A, ID_B])).toEqual({ ok: true, ids: [ID_A, ID_B] });
  });
});

describe('withDispatchRetry', () => {
  const network = new TypeError('Failed to fetch');

  it('retries a network failure after 700 ms, then 1400 ms, and answers the third try', async () => {
    const waits: number[] = [];
    let tries = 0;
    const result = await withDispatchRetry(
      async () => {
        tries++;
        if (tries < 3) throw network;
        return 'ok';
      },
      { isNetworkFailure: (e) => e === network, sleep: async (ms) => void waits.push(ms) },
    );
    expect(result).toBe('ok');
    expect(tries).toBe(3);
    expect(waits).toEqual([700, 1400]);
  });

  it('gives up after 3 tries with the last network failure', async () => {
    const waits: number[] = [];
    let tries = 0;
    await expect(
      withDispatchRetry(
        async () => {
          tries++;
          throw network;
        },
        { isNetworkFailure: () => true, sleep: async (ms) => void waits.push(ms) },
      ),
    ).rejects.toBe(network);
    expect(tries).toBe(3);
    expect(waits).toEqual([700, 1400]);
  });

  it('never retries anything but a network failure', async () => {
    const refused = new Error('refused');
    let tries = 0;
    await expect(
      withDispatchRetry(
        async () => {
          tries++;
          throw refused;
        },
        { isNetworkFailure: () => false, sleep: async () => undefined },
      ),
    ).rejects.toBe(refused);
    expect(tries).toBe(1);
  });
});

describe('isNetworkFailure', () => {
  it('is true for fetch failures and timeouts, false for an answer of the server', () => {
    expect(isNetworkFailure(new TypeError('Failed to fetch'))).toBe(true);
    const request = new Request('http://localhost/api/enhance-set/jobs/dispatch', { method: 'POST' });
    expect(isNetworkFailure(new TimeoutError(request))).toBe(true);
    const answer = new HTTPError(new Response('{}', { status: 400 }), request, {} as never);
    expect(isNetworkFailure(answer)).toBe(false);
    expect(isNetworkFailure(new Error('something else'))).toBe(false);
  });
});

describe('dispatchToasts', () => {
  it("says 'Started N job or jobs' when every job started", () => {
    expect(
      dispatchToasts({ success: true, dispatched: 2, results: [{ ok: true, imageId: ID_A, error: null, data: {} }, { ok: true, imageId: ID_B, error: null, data: {} }], error: null }),
    ).toEqual([{ kind: 'success', message: 'Started 2 jobs' }]);
  });

  it("takes the first failed result's details, then its error, then the overall error, then 'Failed'", () => {
    const failedWithDetails = { ok: false, imageId: ID_B, error: 'Job not started', data: { details: 'This image is still processing' } };
    expect(dispatchToasts({ success: false, dispatched: 1, results: [{ ok: true, imageId: ID_A, data: {} }, failedWithDetails], error: 'x' })).toEqual([
      { kind: 'success', message: 'Started 1 job' },
      { kind: 'error', message: 'Failed to start jobs: This image is still processing' },
    ]);
    expect(dispatchToasts({ success: false, dispatched: 0, results: [{ ok: false, error: 'Image not found in this draft', data: {} }] })).toEqual([
      { kind: 'error', message: 'Failed to start jobs: Image not found in this draft' },
    ]);
    expect(dispatchToasts({ success: false, results: [], error: 'Please describe the edit you want' })).toEqual([
      { kind: 'error', message: 'Failed to start jobs: Please describe the edit you want' },
    ]);
    expect(dispatchToasts({ success: false })).toEqual([{ kind: 'error', message: 'Failed to start jobs: Failed' }]);
  });

  it('cuts the detail to 160 characters', () => {
    const long = 'x'.repeat(400);
    const [toast] = dispatchToasts({ success: false, results: [{ ok: false, data: { details: long } }] });
    expect(toast.message).toBe(`Failed to start jobs: ${'x'.repeat(160)}`);
    expect(failedToStartText('short')).toBe('Failed to start jobs: short');
    expect(failedToStartText('y'.repeat(160))).toHaveLength('Failed to start jobs: '.length + 160);
  });
});

describe('startedImageIds', () => {
  it('names the images whose job started, by result or by position', () => {
    expect(startedImageIds({ success: false, results: [{ ok: true, imageId: ID_A }, { ok: false, imageId: ID_B }] }, [ID_A, ID_B])).toEqual([ID_A]);
    expect(startedImageIds({ success: true, results: [{ ok: true }, { ok: true }] }, [ID_A, ID_B])).toEqual([ID_A, ID_B]);
    expect(startedImageIds({ success: false, error: 'down' }, [ID_A])).toEqual([]);
  });
});
