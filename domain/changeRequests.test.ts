import { clipGuidance, promptWithRequest, requestRoom, versionFileName, versionLabel } from './changeRequests';
import { IMAGE_PROMPT_MAX_LENGTH } from './imageEdit';

describe('request changes: the new job and its item', () => {
  it('folds the request into the prompt after the original, or is the prompt when there was none', () => {
    expect(promptWithRequest('a snowy evening ', ' warm light ')).toBe('a snowy evening\nRequested change: warm light');
    expect(promptWithRequest('', 'warm light')).toBe('warm light');
    expect(promptWithRequest('x', 'y'.repeat(requestRoom('x'))).length).toBe(IMAGE_PROMPT_MAX_LENGTH);
    expect(clipGuidance(null, 'slower')).toBe('slower');
    expect(clipGuidance('calm morning', 'slower')).toBe('calm morning\nRequested change: slower');
  });

  it('names the next version after the earlier one', () => {
    expect(versionFileName('terrace.png', 2, 'harbour — dusk requested.jpg', 'image')).toBe('terrace (v2).jpg');
    expect(versionFileName('terrace (v2).jpg', 3, 'other.jpg', 'image')).toBe('terrace (v3).jpg');
    expect(versionFileName('terrace (2).png', 2, 'x.png', 'image')).toBe('terrace (v2).png');
    // a clip's name says its effect and aspect, which the request may have changed
    expect(versionFileName('Harbour - Zoom In (16x9).mp4', 2, 'Harbour - Drone Shot (9x16).mp4', 'clip')).toBe('Harbour - Drone Shot (9x16) (v2).mp4');
    expect(versionLabel(4)).toBe('v4');
  });
});
