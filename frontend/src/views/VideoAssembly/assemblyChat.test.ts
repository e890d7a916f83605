import { describe, expect, it } from '@jest/globals';
import type { ChatHistoryMessage } from '../../api/videoAssembly';
import { DEFAULT_BRAND_PARTS } from '../../../../domain/brandVideo';
import {
  CHAT_CLEAR_CONVERSATION,
  CHAT_SYNC_CLIPS,
  afterFailedMessage,
  chatFieldLabel,
  checkChatMessage,
  editingConfigSummary,
  modeFromSearch,
  selectionOutOfSync,
  stillNeeded,
  suggestedOrder,
  visibleMessages,
  withPendingMessage,
} from './assemblyChat';

const at = new Date(Date.UTC(2026, 10, 24, 12));
const said = (role: 'user' | 'assistant', content: string): ChatHistoryMessage => ({ role, content, timestamp: at.toISOString() });

describe('assembly chat rules', () => {
  it("refuses an empty or blank message with 'Please type a message' and trims what it sends", () => {
    expect(checkChatMessage('')).toEqual({ error: 'Please type a message' });
    expect(checkChatMessage('  \n ')).toEqual({ error: 'Please type a message' });
    expect(checkChatMessage('  calm and elegant ')).toEqual({ message: 'calm and elegant' });
  });

  it("shows the user's message at once, and after a failure removes it and gives the text back to the input", () => {
    const before = [said('assistant', 'Hello')];
    const pending = withPendingMessage(before, 'slow fades', at);
    expect(pending).toEqual([...before, said('user', 'slow fades')]);
    expect(afterFailedMessage(pending, 'slow fades')).toEqual({ history: before, input: 'slow fades' });
    // nothing of the user's at the end: the conversation stays as it is
    expect(afterFailedMessage(before, 'slow fades')).toEqual({ history: before, input: 'slow fades' });
  });

  it('hides the sync and clear actions from the conversation', () => {
    const history = [said('user', CHAT_SYNC_CLIPS), said('assistant', 'I see 3 clips.'), said('user', CHAT_CLEAR_CONVERSATION), said('user', 'hi')];
    expect(visibleMessages(history).map((m) => m.content)).toEqual(['I see 3 clips.', 'hi']);
    expect(CHAT_SYNC_CLIPS).toBe('__SYNC_CLIPS__');
    expect(CHAT_CLEAR_CONVERSATION).toBe('__CLEAR_CONVERSATION__');
  });

  it('reads the mode from ?mode=, editor unless aesthetic or selector', () => {
    expect(modeFromSearch('')).toBe('editor');
    expect(modeFromSearch('?view=video-assembly&mode=aesthetic')).toBe('aesthetic');
    expect(modeFromSearch('?mode=selector')).toBe('selector');
    expect(modeFromSearch('?mode=admin')).toBe('editor');
  });

  it('summarises the editing config in words', () => {
    expect(
      editingConfigSummary(
        {
          transition: 'wipeLeft',
          pacing: 'energetic',
          transition_duration: 0.25,
          max_clip_seconds: 3,
          captions: ['A', 'B'],
          caption_position: 'bottom',
          music: { track_id: 't1', offset_seconds: 12, volume: 0.7, fade_in_seconds: 1, fade_out_seconds: 2 },
          brand: DEFAULT_BRAND_PARTS,
          formats: ['9:16', '1:1'],
          source: 'chat',
        },
        new Map([['t1', 'Calm piano']]),
      ),
    ).toEqual([
      { label: 'Transition', value: 'wipe left, 0.25 s' },
      { label: 'Pacing', value: 'energetic' },
      { label: 'Clip length', value: 'at most 3 s each' },
      { label: 'Captions', value: '2 (bottom)' },
      { label: 'Music', value: 'Calm piano at 70% volume, from 0:12, fading in over 1 s and out over 2 s' },
      { label: 'Formats', value: '9:16 Reels, 1:1 Square' },
    ]);
    const plain = editingConfigSummary({ transition: 'fade', pacing: 'calm', transition_duration: 1, max_clip_seconds: null, captions: [], caption_position: 'top', music: null, brand: DEFAULT_BRAND_PARTS, formats: null, source: 'default' });
    expect(plain.slice(2)).toEqual([
      { label: 'Clip length', value: 'whole clips' },
      { label: 'Captions', value: 'none' },
      { label: 'Music', value: 'No music (silent)' },
      { label: 'Formats', value: "the platform's own" },
    ]);
    expect(editingConfigSummary(null)).toEqual([]);
  });

  it('offers the suggested order only when it covers exactly the selected clips and changes their order', () => {
    const suggestions = [
      { clip_id: 'b', position: 2, reason: '' },
      { clip_id: 'c', position: 1, reason: '' },
      { clip_id: 'a', position: 3, reason: '' },
    ];
    expect(suggestedOrder(suggestions, ['a', 'b', 'c'])).toEqual(['c', 'b', 'a']);
    expect(suggestedOrder(suggestions, ['c', 'b', 'a'])).toBeNull();
    expect(suggestedOrder(suggestions, ['a', 'b'])).toBeNull();
    expect(suggestedOrder(suggestions, ['a', 'b', 'd'])).toBeNull();
  });
});

describe('assembly chat words and selection', () => {
  it('names every field in words, never as a key', () => {
    expect(['clips', 'aesthetic', 'energy_level', 'copy_style'].map(chatFieldLabel)).toEqual(['Clips', 'Aesthetic', 'Energy', 'Copy style']);
    // a key a hosted assistant might add
    expect(chatFieldLabel('camera_angle')).toBe('Camera angle');
    expect(chatFieldLabel('targetAudience')).toBe('Target audience');
  });

  it('needs clips exactly when none is selected on the page, whatever the last analysis said', () => {
    expect(stillNeeded(['clips', 'energy_level'], 3)).toEqual(['energy_level']);
    expect(stillNeeded(['energy_level'], 0)).toEqual(['clips', 'energy_level']);
    expect(stillNeeded(['clips'], 0)).toEqual(['clips']);
    expect(stillNeeded([], 2)).toEqual([]);
  });

  it('tells a changed selection, order included, from the one the chat knows', () => {
    expect(selectionOutOfSync(['a', 'b'], ['a', 'b'])).toBe(false);
    expect(selectionOutOfSync(['a', 'b'], ['b', 'a'])).toBe(true);
    expect(selectionOutOfSync([], ['a'])).toBe(true);
    expect(selectionOutOfSync(['a'], [])).toBe(true);
  });
});
