import {
  DRAFT_LIMITS,
  ENHANCE_MODEL_OPTIONS,
  ENHANCE_MSG,
  modeMatchesModel,
  modelOption,
  pushVersion,
  restoreVersion,
  versionLabel,
  type DraftImageMetadata,
  type DraftVersion,
} from './enhanceRenders';

const version = (n: number): DraftVersion => ({ url: `/api/files/drafts/u/d/i/v-${n}.jpg`, storage: { bucket: 'drafts', path: `u/d/i/v-${n}.jpg` }, created_at: '2026-11-23T00:00:00Z', source: n === 0 ? 'upload' : 'edit_render' });
const start: DraftImageMetadata = { storage: version(0).storage, previous_url: null, history: [version(0)] };

describe('draft image history', () => {
  it('pushes each new version on top and keeps 8, handing back what fell off', () => {
    let metadata = start;
    const evicted: DraftVersion[] = [];
    for (let n = 1; n <= 9; n += 1) {
      const pushed = pushVersion(metadata, version(n));
      metadata = pushed.metadata;
      evicted.push(...pushed.evicted);
    }
    expect(metadata.history.map((v) => v.url)).toEqual([9, 8, 7, 6, 5, 4, 3, 2].map((n) => version(n).url));
    expect(evicted.map((v) => v.url)).toEqual([version(0).url, version(1).url]);
    expect(metadata.storage).toEqual(version(9).storage);
    expect(metadata.previous_url).toBe(version(8).url);
  });

  it('restores a version by moving it to the top; undo twice is a redo', () => {
    let metadata = pushVersion(pushVersion(start, version(1)).metadata, version(2)).metadata;
    const undone = restoreVersion(metadata, metadata.previous_url as string);
    expect(undone?.history.map((v) => v.url)).toEqual([version(1).url, version(2).url, version(0).url]);
    metadata = restoreVersion(undone as DraftImageMetadata, (undone as DraftImageMetadata).previous_url as string) as DraftImageMetadata;
    expect(metadata.history.map((v) => v.url)).toEqual([version(2).url, version(1).url, version(0).url]);
    expect(restoreVersion(metadata, '/api/files/drafts/elsewhere.jpg')).toBeNull();
  });

  it('labels versions Current, Previous, Back N', () => {
    expect(Array.from({ length: DRAFT_LIMITS.historyVersions }, (_, i) => versionLabel(i))).toEqual(['Current', 'Previous', 'Back 2', 'Back 3', 'Back 4', 'Back 5', 'Back 6', 'Back 7']);
  });
});

describe('model options', () => {
  it('has the spec\'s attachment limits and prompt-less upscales', () => {
    const table = Object.fromEntries(ENHANCE_MODEL_OPTIONS.map((m) => [m.id, [m.mode, m.allowsAttachments, m.maxReferences, m.promptEnabled]]));
    expect(table).toEqual({
      'nano-banana-edit': ['edit_render', true, 3, true],
      'flux-kontext-max': ['edit_render', false, 0, true],
      'style-transfer': ['style_transfer', true, 6, true],
      esrgan: ['basic_upscale', false, 0, false],
      'creative-upscale': ['finish_upscale', false, 0, false],
      'render-enhance': ['render_enhance', false, 0, false],
    });
  });

  it('runs Sync Images only on Nano Banana Edit, and each mode on its own models', () => {
    expect(modeMatchesModel('style_sync', modelOption('nano-banana-edit')!)).toBe(true);
    expect(modeMatchesModel('style_sync', modelOption('flux-kontext-max')!)).toBe(false);
    expect(modeMatchesModel('edit_render', modelOption('flux-kontext-max')!)).toBe(true);
    expect(modeMatchesModel('basic_upscale', modelOption('creative-upscale')!)).toBe(false);
  });

  it('cuts the dispatch failure detail to 160 characters', () => {
    const message = ENHANCE_MSG.failedToStartJobsWith('x'.repeat(500));
    expect(message).toBe(`Failed to start jobs: ${'x'.repeat(160)}`);
  });
});
