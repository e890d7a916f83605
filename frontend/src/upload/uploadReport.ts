/**
 * What an upload run did, file by file: added to the project, already in it (the server matched the same bytes and
 * answered the existing item), or refused with the server's reason. The toasts keep the spec's texts (000 section 8)
 * with counts in the right number; the report panel keeps the names, the reasons and the way to the existing item.
 */
import { countText } from '../../../domain/plural';
import type { ContentItem, RenderUploadAnswer } from '../api/projects';
import type { UploadFailure, UploadSummary } from './uploadQueue';

export interface DuplicateUpload {
  /** the name of the file the user picked */
  name: string;
  /** the project's item with the same bytes */
  existing: ContentItem;
}

export interface UploadReport {
  added: string[];
  duplicates: DuplicateUpload[];
  failed: UploadFailure[];
}

export type UploadToast = { kind: 'success' | 'error' | 'info'; message: string };

export function uploadReport(summary: UploadSummary<RenderUploadAnswer>): UploadReport {
  const report: UploadReport = { added: [], duplicates: [], failed: [...summary.failed] };
  for (const { name, result } of summary.succeeded) {
    // a resumable upload whose last answer was lost resolves without a body: it was stored, as far as is known
    if (result.duplicate && result.render) report.duplicates.push({ name, existing: result.render });
    else report.added.push(name);
  }
  return report;
}

/** A report worth keeping on screen: something was not added. */
export function reportNeedsAttention(report: UploadReport): boolean {
  return report.duplicates.length > 0 || report.failed.length > 0;
}

/** The sentence for one duplicate: the picked file, and the existing item's name when it differs. */
export function duplicateText(duplicate: DuplicateUpload): string {
  const existing = duplicate.existing.data.name;
  return existing && existing !== duplicate.name ? `${duplicate.name} is already in this project as ${existing}` : `${duplicate.name} is already in this project`;
}

export function uploadReportToasts(report: UploadReport): UploadToast[] {
  const toasts: UploadToast[] = [];
  if (report.added.length) toasts.push({ kind: 'success', message: `${countText(report.added.length, 'file')} uploaded successfully!` });
  if (report.duplicates.length === 1) toasts.push({ kind: 'info', message: duplicateText(report.duplicates[0]) });
  else if (report.duplicates.length > 1) toasts.push({ kind: 'info', message: `${countText(report.duplicates.length, 'file')} already in this project` });
  if (report.failed.length) toasts.push({ kind: 'error', message: `${countText(report.failed.length, 'file')} failed to upload` });
  return toasts;
}

