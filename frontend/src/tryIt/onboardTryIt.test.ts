import { describe, expect, it } from '@jest/globals';
import { TRY_IT_MESSAGES } from '../../../domain/tryIt';
import type { TryItOnboardingAnswer, TryItOnboardingInput } from '../api/onboarding';
import { onboardTryIt } from './onboardTryIt';
import { TryItStore, type KeyValueStore, type StoredTryItImage } from './tryItStorage';

function memoryStore(): TryItStore {
  const items = new Map<string, string>();
  const storage: KeyValueStore = { getItem: (k) => items.get(k) ?? null, setItem: (k, v) => void items.set(k, v), removeItem: (k) => void items.delete(k) };
  return new TryItStore({ storage, now: () => 1_800_000_000_000 });
}

const created: TryItOnboardingAnswer = { success: true, projectId: 'project-1', projectName: 'harbour view', error: null };

function withImage(store: TryItStore): StoredTryItImage {
  store.saveSelection({ selectedEffect: 'Drone Shot', selectedPlatform: 'TikTok' });
  return store.saveImage({ name: 'harbour-view.png', size: 4096, type: 'image/png', data: 'data:image/png;base64,iVBORw0KGgo=' });
}

describe('onboardTryIt', () => {
  it('does nothing without a saved image', async () => {
    const store = memoryStore();
    store.saveSelection({ selectedEffect: 'Zoom In' });
    const calls: TryItOnboardingInput[] = [];
    const outcome = await onboardTryIt({ store, startOnboarding: async (input) => (calls.push(input), created), uploadImage: async () => 'r' });
    expect(outcome).toEqual({ kind: 'nothing' });
    expect(calls).toEqual([]);
  });

  it('sends the file name and choices, uploads the image into the new project, keeps the welcome and clears the image', async () => {
    const store = memoryStore();
    const image = withImage(store);
    const calls: TryItOnboardingInput[] = [];
    const uploads: Array<[string, string]> = [];
    const outcome = await onboardTryIt({
      store,
      startOnboarding: async (input) => (calls.push(input), created),
      uploadImage: async (img, projectId) => (uploads.push([img.name, projectId]), 'render-9'),
    });
    expect(calls).toEqual([{ fileName: 'harbour-view.png', platform: 'TikTok', effect: 'Drone Shot' }]);
    expect(uploads).toEqual([['harbour-view.png', 'project-1']]);
    expect(outcome).toEqual({ kind: 'created', projectId: 'project-1', projectName: 'harbour view', renderId: 'render-9', uploadError: null });
    expect(store.images()).toEqual([]);
    expect(store.welcomeFor('project-1')).toEqual({
      welcome: expect.objectContaining({ renderId: 'render-9', fileName: image.name, fileSize: 4096, projectName: 'harbour view' }),
      selection: expect.objectContaining({ selectedEffect: 'Drone Shot', selectedPlatform: 'TikTok' }),
    });
  });

  it("reports 'File upload failed, but project was created successfully' and still opens the project", async () => {
    const store = memoryStore();
    withImage(store);
    const outcome = await onboardTryIt({
      store,
      startOnboarding: async () => created,
      uploadImage: async () => {
        throw new Error('Upload failed with status 500');
      },
    });
    expect(outcome).toEqual({ kind: 'created', projectId: 'project-1', projectName: 'harbour view', renderId: null, uploadError: TRY_IT_MESSAGES.uploadFailed });
    expect(store.welcomeFor('project-1')?.welcome.renderId).toBeNull();
  });

  it("passes the server's failure on and keeps the image for a later try", async () => {
    const store = memoryStore();
    withImage(store);
    const failed = await onboardTryIt({
      store,
      startOnboarding: async () => ({ success: false, projectId: null, projectName: null, error: TRY_IT_MESSAGES.profileFailed }),
      uploadImage: async () => 'r',
    });
    expect(failed).toEqual({ kind: 'failed', error: 'Failed to create user profile' });
    expect(store.images()).toHaveLength(1);

    const offline = await onboardTryIt({
      store,
      startOnboarding: async () => {
        throw new TypeError('Failed to fetch');
      },
      uploadImage: async () => 'r',
    });
    expect(offline).toEqual({ kind: 'failed', error: 'Failed to create project' });
    expect(store.images()).toHaveLength(1);
  });

  it("drops the image when the server found no try-it data in it", async () => {
    const store = memoryStore();
    withImage(store);
    const outcome = await onboardTryIt({
      store,
      startOnboarding: async () => ({ success: false, projectId: null, projectName: null, error: TRY_IT_MESSAGES.noData }),
      uploadImage: async () => 'r',
    });
    expect(outcome).toEqual({ kind: 'failed', error: 'No try-it data found' });
    expect(store.images()).toEqual([]);
  });
});
