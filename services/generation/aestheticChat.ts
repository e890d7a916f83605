/**
 * The assembly's AI editing chat (spec 001 sections 3 and 7: GET/POST /api/projects/{id}/aesthetic), one state per
 * project in aesthetic_chats: the conversation, the preferences it settled, the editing config they give (which
 * the dry-run and the assembly use), the readiness analysis and the suggested clip order. The server's stored
 * state is the truth: a client's chat_history is not read back.
 */
import type { Knex } from 'knex';
import type { Logger } from '../../config/logger';
import {
  ASSEMBLY_MSG,
  CHAT_CLEAR_CONVERSATION,
  CHAT_HISTORY_MAX,
  CHAT_SYNC_CLIPS,
  DEFAULT_EDITING_CONFIG,
  EMPTY_PREFERENCES,
  normalizeEditingConfig,
  normalizeFormatList,
  platformFormat,
  platformForOrientation,
  type AestheticChatState,
  type AestheticPreferences,
  type AssemblyFormat,
  type ChatAnalysis,
  type ChatHistoryMessage,
  type ClipSuggestion,
  type EditingConfig,
  type EnergyLevel,
  type WorkflowAnalysis,
} from '../../domain/assembly';
import { DomainError } from '../../domain/errors';
import { pluralWord } from '../../domain/plural';
import type { Orientation } from '../../domain/orientation';
import { ProviderError, type ChatClipFacts, type ChatProvider, type ChatReply } from '../../providers';
import { clipDisplayName, clipDuration, loadSelectedClips, orientationOfClip, type AssemblyClipRow } from './assemblyClips';
import type { ProjectService } from '../content/projects';
import { checkMusicSetting, trackNames } from '../content/musicTracks';
import { chatBrandKit } from '../workspaces/brandKit';
import { normalizeMusicSetting, type MusicSetting } from '../../domain/music';
import { normalizeBrandParts, type BrandPartsSetting } from '../../domain/brandVideo';

const PREFERENCE_KEYS = ['aesthetic', 'energy_level', 'copy_style'] as const;
const ENERGY: readonly EnergyLevel[] = ['calm', 'balanced', 'energetic'];

export interface ChatPostInput {
  message: string;
  /** Clip ids of the current selection in order, when the request carried one. */
  selectedClipIds: string[] | null;
  aspectRatio: string | null;
}

export interface ChatSelectionInput {
  /** Clip ids of the current selection in play order (empty when nothing is selected). */
  selectedClipIds: string[];
}

export interface AestheticChatDeps {
  knex: Knex;
  chat: ChatProvider;
  projects: ProjectService;
  logger?: Logger;
  now?: () => Date;
}

interface ChatRow {
  project_id: string;
  workspace_id: string;
  chat_history: ChatHistoryMessage[];
  preferences: Partial<AestheticPreferences>;
  editing_config: Record<string, unknown>;
  analysis: Partial<ChatAnalysis>;
  workflow_analysis: Partial<WorkflowAnalysis>;
  clip_suggestions: ClipSuggestion[];
}

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function preferencesOf(raw: Partial<AestheticPreferences> | undefined): AestheticPreferences {
  const p = raw ?? {};
  const selection = (p.clip_selection ?? {}) as Partial<AestheticPreferences['clip_selection']>;
  return {
    aesthetic: typeof p.aesthetic === 'string' ? p.aesthetic : null,
    energy_level: ENERGY.includes(p.energy_level as EnergyLevel) ? (p.energy_level as EnergyLevel) : null,
    copy_style: typeof p.copy_style === 'string' ? p.copy_style : null,
    generated_texts: stringList(p.generated_texts),
    clip_selection: { selectedIds: stringList(selection.selectedIds), order: stringList(selection.order) },
  };
}

function analysisFor(preferences: AestheticPreferences, clipCount: number): ChatAnalysis {
  const missing: string[] = [];
  if (clipCount < 1) missing.push('clips');
  for (const key of PREFERENCE_KEYS) if (!preferences[key]) missing.push(key);
  return { ready_to_create: missing.length === 0, confidence_score: Math.round(((4 - missing.length) / 4) * 100) / 100, missing_info: missing };
}

const NEXT_STEP: Record<string, string> = {
  clips: 'Select up to 5 clips of one orientation.',
  aesthetic: 'Describe the look you want.',
  energy_level: 'Choose the pace: calm, balanced or energetic.',
  copy_style: 'Choose the caption tone, or no text.',
};

function workflowAnalysisFor(analysis: ChatAnalysis, clipCount: number, orientation: Orientation | null): WorkflowAnalysis {
  const stage: WorkflowAnalysis['stage'] = clipCount < 1 ? 'selecting_clips' : analysis.ready_to_create ? 'ready' : 'gathering_preferences';
  return {
    stage,
    next_step: analysis.missing_info.length > 0 ? NEXT_STEP[analysis.missing_info[0]] ?? 'Tell me more about the video.' : 'Preview the timeline, then assemble the video.',
    clip_count: clipCount,
    orientation,
    platform: orientation ? platformForOrientation(orientation) : null,
  };
}

function emptyState(): AestheticChatState {
  const preferences = preferencesOf(EMPTY_PREFERENCES);
  const analysis = analysisFor(preferences, 0);
  return {
    chat_history: [],
    preferences,
    editing_config: { ...DEFAULT_EDITING_CONFIG },
    analysis,
    workflow_analysis: workflowAnalysisFor(analysis, 0, null),
    clip_suggestions: [],
  };
}

function stateOf(row: ChatRow | undefined): AestheticChatState {
  if (!row) return emptyState();
  const preferences = preferencesOf(row.preferences);
  const count = preferences.clip_selection.selectedIds.length;
  const analysis: ChatAnalysis =
    typeof row.analysis?.ready_to_create === 'boolean'
      ? { ready_to_create: row.analysis.ready_to_create, confidence_score: Number(row.analysis.confidence_score ?? 0), missing_info: stringList(row.analysis.missing_info) }
      : analysisFor(preferences, count);
  const workflow = row.workflow_analysis?.stage ? (row.workflow_analysis as WorkflowAnalysis) : workflowAnalysisFor(analysis, count, null);
  return {
    chat_history: Array.isArray(row.chat_history) ? row.chat_history : [],
    preferences,
    editing_config: normalizeEditingConfig(row.editing_config),
    analysis,
    workflow_analysis: workflow,
    clip_suggestions: Array.isArray(row.clip_suggestions) ? row.clip_suggestions : [],
  };
}

function clipFacts(rows: AssemblyClipRow[]): ChatClipFacts[] {
  return rows.map((row) => ({
    id: row.id,
    name: clipDisplayName(row),
    project_name: row.project_name,
    camera_movement: row.camera_movement,
    duration: clipDuration(row),
    orientation: orientationOfClip(row),
  }));
}

/** The reason of a clip the assistant gave no place: it keeps the user's order. */
const USER_ORDER_REASON = 'in the order you chose';

/** Suggestions for exactly the selected clips: the assistant's order first, then the rest in the user's order. */
function suggestionsFor(selectedIds: string[], proposed: Array<{ clip_id: string; reason: string }>): ClipSuggestion[] {
  const selected = new Set(selectedIds);
  // a place that only followed the user's earlier order follows their order now
  const ordered = proposed.filter((p) => selected.has(p.clip_id) && p.reason !== USER_ORDER_REASON);
  const seen = new Set(ordered.map((p) => p.clip_id));
  for (const id of selectedIds) if (!seen.has(id)) ordered.push({ clip_id: id, reason: USER_ORDER_REASON });
  return ordered.map((p, i) => ({ clip_id: p.clip_id, position: i + 1, reason: p.reason }));
}

function capHistory(history: ChatHistoryMessage[]): ChatHistoryMessage[] {
  return history.length > CHAT_HISTORY_MAX ? history.slice(history.length - CHAT_HISTORY_MAX) : history;
}

/** The state with `selectedIds` as the selection: its readiness and suggestions follow, nothing is said. */
function withSelection(current: AestheticChatState, selectedIds: string[], orientation: Orientation | null): AestheticChatState {
  const preferences = { ...current.preferences, clip_selection: { selectedIds, order: selectedIds } };
  const analysis = analysisFor(preferences, selectedIds.length);
  return {
    ...current,
    preferences,
    analysis,
    workflow_analysis: workflowAnalysisFor(analysis, selectedIds.length, orientation),
    clip_suggestions: suggestionsFor(selectedIds, current.clip_suggestions),
  };
}

/**
 * The music after the assistant's answer: none when it said 'none'; its setting when it names one of the workspace's
 * tracks (the offset kept before the track's end); otherwise the music as it was.
 */
function musicFromChat(
  hint: NonNullable<ChatReply['editing']>['music'],
  current: MusicSetting | null,
  tracks: ReadonlyArray<{ id: string; durationSeconds: number }>,
): MusicSetting | null {
  if (hint === undefined) return current;
  if (hint === 'none') return null;
  const track = tracks.find((t) => t.id === hint.track_id);
  if (!track) return current;
  const next = normalizeMusicSetting(hint, current);
  if (next && next.offset_seconds >= track.durationSeconds) next.offset_seconds = 0;
  return next;
}

export const CHAT_AFTER_ASSEMBLY_NOTE =
  'Your video is assembled and waiting in Approvals. Select clips for the next one: the look, pace and caption tone we agreed stay as they are.';

/**
 * After an assembly completed: what belonged to its clips goes (the selection, the suggested order, the captions
 * written for them), so the next visit does not show suggestions for clips that are no longer selected. The look,
 * pace and caption tone stay, and the conversation says what happened. Runs in the caller's transaction (the job's
 * move to 'completed'), so it happens once.
 */
export async function resetChatAfterAssembly(knex: Knex, workspaceId: string, projectId: string, now: Date): Promise<void> {
  const row = (await knex('aesthetic_chats').where({ project_id: projectId, workspace_id: workspaceId }).forUpdate().first()) as ChatRow | undefined;
  if (!row) return;
  const current = stateOf(row);
  const preferences: AestheticPreferences = { ...current.preferences, generated_texts: [], clip_selection: { selectedIds: [], order: [] } };
  const analysis = analysisFor(preferences, 0);
  const next: AestheticChatState = {
    chat_history: capHistory([...current.chat_history, { role: 'assistant', content: CHAT_AFTER_ASSEMBLY_NOTE, timestamp: now.toISOString() }]),
    preferences,
    editing_config: { ...current.editing_config, captions: [] },
    analysis,
    workflow_analysis: workflowAnalysisFor(analysis, 0, null),
    clip_suggestions: [],
  };
  await saveChat(knex, workspaceId, projectId, next);
}

async function saveChat(knex: Knex, workspaceId: string, projectId: string, state: AestheticChatState): Promise<void> {
  const row = {
    project_id: projectId,
    workspace_id: workspaceId,
    chat_history: JSON.stringify(state.chat_history),
    preferences: JSON.stringify(state.preferences),
    editing_config: JSON.stringify(state.editing_config),
    analysis: JSON.stringify(state.analysis),
    workflow_analysis: JSON.stringify(state.workflow_analysis),
    clip_suggestions: JSON.stringify(state.clip_suggestions),
    updated_at: knex.fn.now(),
  };
  await knex('aesthetic_chats').insert(row).onConflict('project_id').merge();
}

export class AestheticChatService {
  private readonly now: () => Date;

  constructor(private readonly deps: AestheticChatDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  private async row(projectId: string): Promise<ChatRow | undefined> {
    return this.deps.knex('aesthetic_chats').where({ project_id: projectId }).first() as Promise<ChatRow | undefined>;
  }

  async state(workspaceId: string, projectId: string): Promise<AestheticChatState> {
    await this.deps.projects.findOwned(workspaceId, projectId);
    return stateOf(await this.row(projectId));
  }

  /** The editing config an assembly into this project uses: the chat's, or the default when there is no chat. */
  async editingConfig(workspaceId: string, projectId: string): Promise<EditingConfig> {
    const row = (await this.deps.knex('aesthetic_chats').where({ project_id: projectId, workspace_id: workspaceId }).first('editing_config')) as Pick<ChatRow, 'editing_config'> | undefined;
    return row ? normalizeEditingConfig(row.editing_config) : { ...DEFAULT_EDITING_CONFIG };
  }

  async post(workspaceId: string, projectId: string, input: ChatPostInput): Promise<AestheticChatState> {
    const project = await this.deps.projects.findOwned(workspaceId, projectId);
    const message = input.message.trim();
    if (!message) throw new DomainError(400, 'VALIDATION_ERROR', ASSEMBLY_MSG.typeMessage);
    const current = stateOf(await this.row(projectId));
    const selectedIds = input.selectedClipIds ?? current.preferences.clip_selection.selectedIds;
    // the selection is checked like an assembly's: the user's own clips, at most 5, one orientation
    const selection = selectedIds.length > 0 ? await loadSelectedClips(this.deps.knex, workspaceId, selectedIds) : null;
    const orientation = selection?.orientation ?? null;
    const count = selectedIds.length;
    const stamp = () => this.now().toISOString();

    let next: AestheticChatState;
    if (message === CHAT_CLEAR_CONVERSATION) {
      const empty = emptyState();
      const preferences = { ...empty.preferences, clip_selection: { selectedIds, order: selectedIds } };
      const analysis = analysisFor(preferences, count);
      next = { ...empty, preferences, analysis, workflow_analysis: workflowAnalysisFor(analysis, count, orientation), clip_suggestions: suggestionsFor(selectedIds, []) };
    } else if (message === CHAT_SYNC_CLIPS) {
      const names = (selection?.rows ?? []).map(clipDisplayName);
      const note =
        count === 0
          ? 'No clips are selected yet. Select up to 5 clips of one orientation.'
          : `I have your ${count} selected ${orientation ?? ''} ${pluralWord(count, 'clip')}: ${names.join(', ')}.`;
      const synced = withSelection(current, selectedIds, orientation);
      next = { ...synced, chat_history: capHistory([...current.chat_history, { role: 'assistant', content: note, timestamp: stamp() }]) };
    } else {
      const asked = stamp();
      const ownFormat = orientation ? platformFormat(platformForOrientation(orientation)) : null;
      const [tracks, brandKit] = await Promise.all([trackNames(this.deps.knex, workspaceId), chatBrandKit(this.deps.knex, workspaceId)]);
      let reply: ChatReply;
      try {
        reply = await this.deps.chat.reply({
          message,
          history: current.chat_history.map(({ role, content }) => ({ role, content })),
          selectedClipCount: count,
          aspectRatio: input.aspectRatio ?? undefined,
          clips: selection ? clipFacts(selection.rows) : [],
          preferences: {
            aesthetic: current.preferences.aesthetic ?? undefined,
            energy_level: current.preferences.energy_level ?? undefined,
            copy_style: current.preferences.copy_style ?? undefined,
          },
          projectName: project.name,
          musicTracks: tracks.map((t) => ({ id: t.id, name: t.name, duration: t.durationSeconds })),
          music: current.editing_config.music,
          brandKit,
          brand: current.editing_config.brand,
          formats: current.editing_config.formats ?? (ownFormat ? [ownFormat] : []),
          ownFormat,
        });
      } catch (error) {
        if (error instanceof ProviderError && error.code === 'INPUT') throw new DomainError(400, 'VALIDATION_ERROR', error.message);
        this.deps.logger?.warn({ err: error, projectId }, 'chat provider failed');
        throw new DomainError(503, 'CHAT_UNAVAILABLE', 'The editing assistant is not available right now. Please try again.');
      }
      const said = reply.preferences;
      const copyStyle = said.copy_style ?? current.preferences.copy_style;
      const preferences: AestheticPreferences = {
        aesthetic: said.aesthetic ?? current.preferences.aesthetic,
        energy_level: said.energy_level ?? current.preferences.energy_level,
        copy_style: copyStyle,
        generated_texts: copyStyle === 'no text' ? [] : (said.generated_texts ?? current.preferences.generated_texts),
        clip_selection: { selectedIds, order: selectedIds },
      };
      const { music: musicHint, ...hints } = reply.editing ?? {};
      const editing = normalizeEditingConfig({ ...hints, captions: preferences.generated_texts, source: 'chat' }, current.editing_config);
      editing.music = musicFromChat(musicHint, current.editing_config.music, tracks);
      const analysis = { ...reply.analysis, missing_info: [...reply.analysis.missing_info] };
      next = {
        chat_history: capHistory([
          ...current.chat_history,
          { role: 'user', content: message, timestamp: asked },
          { role: 'assistant', content: reply.reply, timestamp: stamp() },
        ]),
        preferences,
        editing_config: editing,
        analysis,
        workflow_analysis: workflowAnalysisFor(analysis, count, orientation),
        clip_suggestions: suggestionsFor(selectedIds, reply.clip_order ?? []),
      };
    }
    await this.save(workspaceId, projectId, next);
    return next;
  }

  /**
   * The selection as the page has it now, without a message (the page sends it whenever it changes): the readiness,
   * what is still needed and the suggested order follow it. The same checks as an assembly's selection.
   */
  async syncSelection(workspaceId: string, projectId: string, input: ChatSelectionInput): Promise<AestheticChatState> {
    await this.deps.projects.findOwned(workspaceId, projectId);
    const selectedIds = input.selectedClipIds;
    const selection = selectedIds.length > 0 ? await loadSelectedClips(this.deps.knex, workspaceId, selectedIds) : null;
    const next = withSelection(stateOf(await this.row(projectId)), selectedIds, selection?.orientation ?? null);
    await this.save(workspaceId, projectId, next);
    return next;
  }

  /**
   * The music picker's choice (no message): the track (the workspace's own, 404 otherwise; null for none), its start
   * offset (before the track's end, 400 otherwise), volume and fades. The dry run and the next assembly play it.
   */
  async setMusic(workspaceId: string, projectId: string, music: MusicSetting | null): Promise<AestheticChatState> {
    await this.deps.projects.findOwned(workspaceId, projectId);
    const { setting } = await checkMusicSetting(this.deps.knex, workspaceId, music);
    const current = stateOf(await this.row(projectId));
    const next: AestheticChatState = { ...current, editing_config: { ...current.editing_config, music: setting } };
    await this.save(workspaceId, projectId, next);
    return next;
  }

  /**
   * The brand part switches (no message): which of the workspace's kit parts the project's assemblies use, and the
   * title's text, style and length, the logo's corner, size and opacity, the end card's length. The dry run and the
   * next assembly use them.
   */
  async setBrandParts(workspaceId: string, projectId: string, changes: Partial<BrandPartsSetting>): Promise<AestheticChatState> {
    await this.deps.projects.findOwned(workspaceId, projectId);
    const current = stateOf(await this.row(projectId));
    const brand = normalizeBrandParts(changes, current.editing_config.brand);
    const next: AestheticChatState = { ...current, editing_config: { ...current.editing_config, brand } };
    await this.save(workspaceId, projectId, next);
    return next;
  }

  /**
   * The Formats picker's choice (no message): every format the project's next assembly renders (one or more of 9:16,
   * 1:1, 4:5 and 16:9), or null for the platform's own. The chat reads them and may change them.
   */
  async setFormats(workspaceId: string, projectId: string, formats: AssemblyFormat[] | null): Promise<AestheticChatState> {
    // in the picker's order, each once (the route has refused anything else)
    const valid = normalizeFormatList(formats, null);
    await this.deps.projects.findOwned(workspaceId, projectId);
    const current = stateOf(await this.row(projectId));
    const next: AestheticChatState = { ...current, editing_config: { ...current.editing_config, formats: valid } };
    await this.save(workspaceId, projectId, next);
    return next;
  }

  private async save(workspaceId: string, projectId: string, state: AestheticChatState): Promise<void> {
    await saveChat(this.deps.knex, workspaceId, projectId, state);
  }
}
