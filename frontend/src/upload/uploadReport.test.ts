import { describe, expect, it } from '@jest/globals';
import type { ContentItem, RenderUploadAnswer } from '../api/projects';
import { duplicateText, reportNeedsAttention, uploadReport, uploadReportToasts } from './uploadReport';

function item(id: string, name: string): ContentItem {
  return {
    type: 'render',
    source: 'renders',
    signed_url: null,
    data: { id, project_id: 'p', name, file_url: `renders/${id}.jpg`, file_name: name, created_at: '2026-01-01T00:00:00Z', thumbnail_url: null, aspect_ratio: null },
  };
}

function answer(id: string, name: string, duplicate: boolean): RenderUploadAnswer {
  return { success: true, duplicate, url: '', render: item(id, name), processingInfo: { width: 1, height: 1, aspectRatio: '1:1', fileSize: 1, mimeType: 'image/jpeg', thumbnailUrl: null } };
}

describe('uploadReport', () => {
  it('tells added files from files already in the project, and keeps each failure with its reason', () => {
    const report = uploadReport({
      succeeded: [
        { name: 'lobby.jpg', result: answer('r1', 'lobby.jpg', false) },
        { name: 'lobby copy.jpg', result: answer('r1', 'lobby.jpg', true) },
        // a resumable upload whose final answer was lost: it was stored
        { name: 'big.png', result: { success: true } as RenderUploadAnswer },
      ],
      failed: [{ name: 'notes.jpg', message: 'File "notes.jpg" is not a readable image' }],
    });
    expect(report.added).toEqual(['lobby.jpg', 'big.png']);
    expect(report.duplicates).toEqual([{ name: 'lobby copy.jpg', existing: item('r1', 'lobby.jpg') }]);
    expect(report.failed).toEqual([{ name: 'notes.jpg', message: 'File "notes.jpg" is not a readable image' }]);
    expect(reportNeedsAttention(report)).toBe(true);
    expect(uploadReportToasts(report)).toEqual([
      { kind: 'success', message: '2 files uploaded successfully!' },
      { kind: 'info', message: 'lobby copy.jpg is already in this project as lobby.jpg' },
      { kind: 'error', message: '1 file failed to upload' },
    ]);
  });

  it('never counts a duplicate as uploaded, and counts in the right number', () => {
    const report = uploadReport({
      succeeded: [
        { name: 'a.jpg', result: answer('r1', 'a.jpg', true) },
        { name: 'b.jpg', result: answer('r2', 'b.jpg', true) },
      ],
      failed: [],
    });
    expect(report.added).toEqual([]);
    expect(uploadReportToasts(report)).toEqual([{ kind: 'info', message: '2 files already in this project' }]);
    expect(duplicateText(report.duplicates[0])).toBe('a.jpg is already in this project');
  });

  it('says nothing more than the success when every file was added', () => {
    const report = uploadReport({ succeeded: [{ name: 'a.jpg', result: answer('r1', 'a.jpg', false) }], failed: [] });
    expect(reportNeedsAttention(report)).toBe(false);
    expect(uploadReportToasts(report)).toEqual([{ kind: 'success', message: '1 file uploaded successfully!' }]);
  });
});
