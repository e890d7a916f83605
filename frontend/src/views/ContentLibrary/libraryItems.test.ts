import { describe, expect, it } from '@jest/globals';
import type { ContentItem, ContentItemType, ContentSource } from '../../api/projects';
import { aspectBadge, deleteTexts, dialogPicture, downloadName, gridColumns, itemsForTab, libraryCounts, mediaAspect, tabAllowsUpload, tileHeightEstimate, tilePicture, typeBadge } from './libraryItems';

function item(type: ContentItemType, data: Partial<ContentItem['data']> = {}): ContentItem {
  const source: Record<ContentItemType, ContentSource> = { render: 'renders', ai_image: 'images', generated_image: 'generated_content', clip: 'clips', compiled_video: 'compiled_videos' };
  return {
    type,
    source: source[type],
    signed_url: '/api/files/x',
    data: { id: `${type}-1`, project_id: 'p', name: 'n', file_url: '/api/files/renders/u/a.png', file_name: 'n', created_at: '2026-01-01T00:00:00Z', thumbnail_url: null, aspect_ratio: null, ...data },
  };
}

describe('library items', () => {
  const all = [item('render'), item('ai_image'), item('generated_image'), item('clip'), item('compiled_video'), item('render')];

  it('filters by tab and counts each kind', () => {
    expect(itemsForTab(all, 'all')).toHaveLength(6);
    expect(itemsForTab(all, 'renders').map((i) => i.type)).toEqual(['render', 'render']);
    expect(itemsForTab(all, 'images').map((i) => i.type)).toEqual(['ai_image', 'generated_image']);
    expect(itemsForTab(all, 'clips').map((i) => i.type)).toEqual(['clip']);
    expect(itemsForTab(all, 'videos').map((i) => i.type)).toEqual(['compiled_video']);
    expect(libraryCounts(all)).toEqual({ renders: 2, images: 2, clips: 1, videos: 1 });
  });

  it('offers Upload Images on All and Renders only', () => {
    expect(['all', 'renders', 'images', 'clips', 'videos'].filter((t) => tabAllowsUpload(t as never))).toEqual(['all', 'renders']);
  });

  it('badges the type and the aspect ratio', () => {
    expect(all.map(typeBadge)).toEqual(['Render', 'AI Image', 'AI Image', 'Clip', 'Video', 'Render']);
    expect(aspectBadge(item('render', { aspect_ratio: '4:3' }))).toBe('4:3');
    expect(aspectBadge(item('render', { width: 1080, height: 1920 }))).toBe('9:16');
    expect(aspectBadge(item('clip'))).toBeNull();
  });

  it('words the delete confirmation and toasts per kind', () => {
    expect(deleteTexts(item('render'))).toEqual({
      confirm: 'Are you sure you want to delete this render? This action cannot be undone.',
      success: 'Render deleted successfully',
      failure: 'Failed to delete render',
    });
    expect(deleteTexts(item('ai_image')).confirm).toBe('Are you sure you want to delete this AI image? This action cannot be undone.');
    expect(deleteTexts(item('clip')).success).toBe('Clip deleted successfully');
    expect(deleteTexts(item('compiled_video')).confirm).toBe('Are you sure you want to delete this video? This action cannot be undone.');
  });

  it('names downloads after the item, keeping the file type', () => {
    expect(downloadName(item('render', { name: 'Lobby at dusk' }))).toBe('Lobby at dusk.png');
    expect(downloadName(item('render', { name: 'lobby.jpg' }))).toBe('lobby.jpg');
    expect(downloadName(item('render', { name: 'a/b' }))).toBe('a_b.png');
  });

  it('lays the grid out in as many 260 px columns as fit, with 16 px gaps', () => {
    expect(gridColumns(350)).toEqual({ count: 1, width: 350 });
    expect(gridColumns(535)).toEqual({ count: 1, width: 535 });
    expect(gridColumns(536)).toEqual({ count: 2, width: 260 });
    expect(gridColumns(1100)).toEqual({ count: 4, width: 263 });
    expect(gridColumns(0).count).toBe(1);
  });

  it("gives each tile its item's aspect before the picture loads", () => {
    expect(mediaAspect(item('render', { width: 1080, height: 1920 }))).toBeCloseTo(0.5625);
    expect(mediaAspect(item('render', { aspect_ratio: '4:3' }))).toBeCloseTo(4 / 3);
    expect(mediaAspect(item('clip', { aspect_ratio: 'portrait' }))).toBeCloseTo(9 / 16);
    expect(mediaAspect(item('clip', { aspect_ratio: 'square' }))).toBe(1);
    expect(mediaAspect(item('clip'))).toBeCloseTo(4 / 3);
    expect(mediaAspect(item('clip', { aspect_ratio: '0:0' }))).toBeCloseTo(4 / 3);
    // a very wide picture keeps a clickable strip
    expect(tileHeightEstimate(item('render', { aspect_ratio: '21:9' }), 100)).toBe(80 + 54);
    expect(tileHeightEstimate(item('render', { aspect_ratio: '1:1' }), 260)).toBe(260 + 54);
  });

  it('never shows a large original as a picture: the dialog shows the preview, tiles the thumbnail, each falling back to the other', () => {
    const large = { file_size: 16.9 * 1024 * 1024 };
    const both = item('render', { ...large, thumbnail_url: '/t', preview_url: '/p' });
    expect(dialogPicture(both)).toBe('/p');
    expect(tilePicture(both)).toBe('/t');
    // the preview not made yet: the thumbnail, not the 16.9 MB original
    expect(dialogPicture(item('render', { ...large, thumbnail_url: '/t', preview_url: null }))).toBe('/t');
    // neither made yet (a large upload the worker is on): nothing rather than the original
    expect(dialogPicture(item('render', large))).toBeNull();
    expect(tilePicture(item('render', large))).toBeNull();
    expect(tilePicture(item('render', { ...large, preview_url: '/p' }))).toBe('/p');
    // a small original may stand in while its copies are missing; a render of unknown size may not
    expect(dialogPicture(item('render', { file_size: 900_000, thumbnail_url: '/t' }))).toBe('/api/files/x');
    expect(tilePicture(item('render', { file_size: 900_000 }))).toBe('/api/files/x');
    expect(tilePicture(item('render'))).toBeNull();
    // generated items without a recorded size show their file as before; videos their own player
    expect(dialogPicture(item('generated_image'))).toBe('/api/files/x');
    expect(tilePicture(item('compiled_video'))).toBeNull();
  });
});
