/** Pure rules of the assembly chat panel (spec 001 sections 2, 5, 7 and 8). */
import { ASSEMBLY_FORMAT_SPECS, ASSEMBLY_MSG, CHAT_CLEAR_CONVERSATION, CHAT_SYNC_CLIPS, type ChatHistoryMessage, type EditingConfig } from '../../../../domain/assembly';
import { musicSummary } from '../../../../domain/music';

export { CHAT_CLEAR_CONVERSATION, CHAT_SYNC_CLIPS } from '../../../../domain/assembly';

/** editor and aesthetic show the chat; selector is the clip selector alone (the chat is hidden). */
export const ASSEMBLY_MODES = ['editor', 'aesthetic', 'selector'] as const;
export type AssemblyMode = (typeof ASSEMBLY_MODES)[number];

export function modeFromSearch(search: string): AssemblyMode {
  const mode = new URLSearchParams(search).get('mode');
  return (ASSEMBLY_MODES as readonly string[]).includes(mode ?? '') ? (mode as AssemblyMode) : 'editor';
}

/** The text to send, or the spec's message when there is nothing to send. */
export function checkChatMessage(text: string): { message: string } | { error: string } {
  const message = text.trim();
  return message ? { message } : { error: ASSEMBLY_MSG.typeMessage };
}

/** The conversation as shown while a message is on its way: the user's message appended at once. */
export function withPendingMessage(history: readonly ChatHistoryMessage[], message: string, now: Date): ChatHistoryMessage[] {
  return [...history, { role: 'user', content: message, timestamp: now.toISOString() }];
}

/**
 * After a failed message: the conversation without that message (the last user message equal to it, added by
 * withPendingMessage), and the text to put back into the input.
 */
export function afterFailedMessage(history: readonly ChatHistoryMessage[], message: string): { history: ChatHistoryMessage[]; input: string } {
  const last = history.length - 1;
  if (last >= 0 && history[last].role === 'user' && history[last].content === message) return { history: history.slice(0, last), input: message };
  return { history: [...history], input: message };
}

/** The action messages are not shown as what the user typed. */
export function visibleMessages(history: readonly ChatHistoryMessage[]): ChatHistoryMessage[] {
  return history.filter((m) => m.content !== CHAT_SYNC_CLIPS && m.content !== CHAT_CLEAR_CONVERSATION);
}

/** What the chat may still need (the analysis' missing_info keys), in the words the page shows. */
export const CHAT_FIELDS: Record<string, { label: string; hint: string }> = {
  clips: { label: 'Clips', hint: 'select up to 5 clips of one orientation' },
  aesthetic: { label: 'Aesthetic', hint: 'the look, e.g. luxury, modern minimal or cinematic' },
  energy_level: { label: 'Energy', hint: 'the pace: calm, balanced or energetic' },
  copy_style: { label: 'Copy style', hint: 'the caption tone, or no text' },
};

/** A field's label; a key this page does not know reads as words ('camera_angle' → 'Camera angle'), never as code. */
export function chatFieldLabel(key: string): string {
  const known = CHAT_FIELDS[key];
  if (known) return known.label;
  const words = key
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .trim()
    .toLowerCase();
  return words ? words[0].toUpperCase() + words.slice(1) : key;
}

/**
 * What is still needed as of the selection on the page: the analysis is the server's as of the last message or
 * selection it was told, so clips are needed exactly when none is selected now, whatever it said.
 */
export function stillNeeded(missing: readonly string[], selectedCount: number): string[] {
  const rest = missing.filter((key) => key !== 'clips');
  return selectedCount > 0 ? rest : ['clips', ...rest];
}

/** The selection the chat knows differs from the page's (order counts: the suggestions follow it). */
export function selectionOutOfSync(known: readonly string[], selected: readonly string[]): boolean {
  return known.length !== selected.length || known.some((id, i) => id !== selected[i]);
}

/** The editing config as label/value lines for the suggestions panel; `trackNames` names the music by its track id. */
export function editingConfigSummary(config: EditingConfig | null | undefined, trackNames: ReadonlyMap<string, string> = new Map()): Array<{ label: string; value: string }> {
  if (!config) return [];
  const music = config.music ?? null;
  const lines = [
    { label: 'Transition', value: `${config.transition.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase()}, ${config.transition_duration} s` },
    { label: 'Pacing', value: config.pacing },
    { label: 'Clip length', value: config.max_clip_seconds === null ? 'whole clips' : `at most ${config.max_clip_seconds} s each` },
    { label: 'Captions', value: config.captions.length ? `${config.captions.length} (${config.caption_position})` : 'none' },
    { label: 'Music', value: musicSummary(music, music ? (trackNames.get(music.track_id) ?? 'the chosen track') : null) },
    { label: 'Formats', value: config.formats?.length ? config.formats.map((f) => `${f} ${ASSEMBLY_FORMAT_SPECS[f].label}`).join(', ') : "the platform's own" },
  ];
  return lines;
}

/** The order the chat suggests for the selected clips, when it covers exactly them and differs from the current one. */
export function suggestedOrder(suggestions: ReadonlyArray<{ clip_id: string; position: number }>, selected: readonly string[]): string[] | null {
  const ordered = [...suggestions].sort((a, b) => a.position - b.position).map((s) => s.clip_id);
  const unique = [...new Set(ordered)];
  if (unique.length !== selected.length || !unique.every((id) => selected.includes(id))) return null;
  return unique.every((id, i) => id === selected[i]) ? null : unique;
}
