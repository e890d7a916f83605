import { describe, expect, it } from '@jest/globals';
import type { AssemblyFormatResult, AssemblyResultSummary } from '../../../../domain/assembly';
import { assemblyJobHeading } from './assemblyJob';

const video = (aspectRatio: AssemblyFormatResult['aspectRatio']): AssemblyFormatResult => ({
  approvalId: `approval-${aspectRatio}`,
  approvalWorkflowId: `approval-wf-${aspectRatio}`,
  compiledVideoId: `video-${aspectRatio}`,
  fileName: `Harbour Villas · ${aspectRatio}.mp4`,
  durationSeconds: 9.5,
  fileSize: 1_000_000,
  width: 1920,
  height: 1080,
  platform: 'youtube',
  aspectRatio,
});
const result = (formats?: AssemblyFormatResult[]): AssemblyResultSummary => ({ ...video('16:9'), ...(formats ? { formats } : {}) });

describe('the assembly job panel heading', () => {
  it("says the spec's words while assembling and for one video", () => {
    expect(assemblyJobHeading({ status: 'processing', result: null })).toBe('Assembling your video');
    expect(assemblyJobHeading({ status: 'completed', result: result() })).toBe('Your video is ready for approval');
    expect(assemblyJobHeading({ status: 'completed', result: result([video('16:9')]) })).toBe('Your video is ready for approval');
  });

  it('speaks of videos once the assembly made one per format', () => {
    expect(assemblyJobHeading({ status: 'completed', result: result([video('16:9'), video('1:1')]) })).toBe('Your videos are ready for approval');
    expect(assemblyJobHeading({ status: 'completed', result: result([video('9:16'), video('1:1'), video('4:5'), video('16:9')]) })).toBe('Your videos are ready for approval');
  });
});
