/**
 * The assembly chat on a hosted model through the OpenAI-compatible chat-completions protocol
 * (POST {baseUrl}/chat/completions with `response_format: { type: 'json_object' }`), which OpenAI and most hosted
 * and self-hosted model servers speak. The model answers one JSON object; anything it gets wrong (unknown
 * transition, stray fields, a missing analysis) is dropped or filled in here and normalized again by the caller.
 */
import { LOGO_CORNERS, TITLE_STYLES, type BrandPartsSetting } from '../../domain/brandVideo';
import { normalizeFormatList } from '../../domain/assembly';
import { ProviderError } from '../errors';
import type { ChatEditingHints, ChatMusic, ChatPreferences, ChatProvider, ChatReply, ChatRequest } from '../types';

export interface OpenAiChatOptions {
  baseUrl: string;
  apiKey: string;
  model: string;
  /** HTTP timeout of one call (ms). */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

export const CHAT_SYSTEM_PROMPT = [
  'You are the video editor of a real-estate marketing studio. The user assembles 1 to 5 short clips of',
  'architectural renders into one social video. Talk with them about the look (aesthetic), the pace (energy_level:',
  'calm, balanced or energetic) and the caption tone (copy_style: professional, playful, aspirational or no text).',
  'Answer with ONE JSON object and nothing else, with these keys:',
  '"reply" (string, your answer to the user, at most 3 sentences, in plain words: say look, pace, caption tone and',
  'transition names as words such as "wipe left", never the JSON keys or identifiers such as energy_level or wipeLeft),',
  '"preferences" ({"aesthetic": string|null, "energy_level": "calm"|"balanced"|"energetic"|null, "copy_style": string|null,',
  '"generated_texts": [one short caption per clip in the suggested order, at most 60 characters each; [] for no text]}),',
  '"editing" ({"transition": one of fade, dissolve, wipeLeft, wipeRight, slideLeft, slideRight, slideUp, slideDown, zoom, circle;',
  '"pacing": "calm"|"balanced"|"energetic"; "caption_position": "bottom"|"center"|"top";',
  '"music": only when the user asks about music: "none" for no music, or {"track_id": the id of one of the context\'s music_tracks,',
  '"volume": 0.05-1 (1 is full loudness; "quieter" means about 0.7 times the current volume), "offset_seconds": where in the track to start,',
  '"fade_in_seconds", "fade_out_seconds"}; leave "music" out to keep the current music;',
  '"brand": only when the user asks about the title card, the logo, the end card or captions in the brand\'s style: an object with',
  'only the keys to change among "title_card" (boolean), "title_text" (string, at most 100 characters; null for the project\'s name),',
  '"title_style" ("card": on a brand-coloured card, "overlay": over the first clip), "title_seconds" (1.5-3), "captions" (boolean:',
  'in the brand kit\'s font and colour), "logo" (boolean), "logo_corner" ("top-left"|"top-right"|"bottom-left"|"bottom-right"),',
  '"logo_size" (0.06-0.3: the logo\'s longer side over the frame\'s shorter side), "logo_opacity" (0.2-1), "end_card" (boolean: brand colour, logo, call to action and',
  'the kit\'s contact lines), "end_card_seconds" (2-6); leave "brand" out to keep the parts as they are;',
  '"formats": only when the user asks for other formats of the video ("also make a square one", "drop the 16:9 one"): every format to',
  'render from now on, among "9:16" (Reels, TikTok), "1:1" (square), "4:5" (feed) and "16:9" (YouTube), starting from the context\'s',
  'current_formats; at least one; leave "formats" out to keep them}),',
  '"clip_order" ([{"clip_id": id of a selected clip, "reason": string}] covering every selected clip once),',
  '"analysis" ({"ready_to_create": boolean, "confidence_score": number 0-1, "missing_info": [names among clips, aesthetic, energy_level, copy_style]}).',
  'When you change the music, say so in the reply in plain words: the track by its name, the volume as a percentage, the fades in seconds',
  '(never a track id). When you change a brand part, say so too (for example "Logo bottom right." or "End card with your phone number."),',
  'and when the context\'s brand_kit is null or lacks what the user asked for (a logo, a phone number, a website), say it can be added',
  'on the Brand kit page. When you change the formats, say which are made now (for example "Also made in Square (1:1).") and that',
  'each format is its own video in Approvals.',
].join(' ');

const ENERGY = new Set(['calm', 'balanced', 'energetic']);

function record(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function optionalText(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() ? value.trim() : undefined;
}

const finiteNumber = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);

/**
 * The model's music: 'none', or a setting on one of the workspace's tracks (without a track id, the track playing now).
 * Undefined when it said nothing usable, or named a track that is not listed.
 */
function parseMusic(value: unknown, request: ChatRequest): ChatMusic | 'none' | undefined {
  if (typeof value === 'string' && ['none', 'no music', 'off'].includes(value.trim().toLowerCase())) return 'none';
  const raw = record(value);
  if (Object.keys(raw).length === 0) return undefined;
  if (raw.track_id === null) return 'none';
  const known = new Set((request.musicTracks ?? []).map((t) => t.id));
  const named = optionalText(raw.track_id);
  // a track id that is not one of the listed tracks is made up: nothing of that answer's music is taken
  if (named && !known.has(named)) return undefined;
  const trackId = named ?? request.music?.track_id;
  if (!trackId) return undefined;
  const music: ChatMusic = { track_id: trackId };
  const volume = finiteNumber(raw.volume);
  // a model may answer a percentage
  if (volume !== undefined) music.volume = volume > 1 ? volume / 100 : volume;
  const offset = finiteNumber(raw.offset_seconds);
  if (offset !== undefined) music.offset_seconds = offset;
  const fadeIn = finiteNumber(raw.fade_in_seconds);
  if (fadeIn !== undefined) music.fade_in_seconds = fadeIn;
  const fadeOut = finiteNumber(raw.fade_out_seconds);
  if (fadeOut !== undefined) music.fade_out_seconds = fadeOut;
  return music;
}

/** The model's JSON made into a ChatReply: what is not of the right type is left out. */
const BRAND_BOOLEANS = ['title_card', 'captions', 'logo', 'end_card'] as const;
const BRAND_NUMBERS = ['title_seconds', 'logo_size', 'logo_opacity', 'end_card_seconds'] as const;

/**
 * The model's brand part changes: only known keys of the right type (the caller clamps the numbers and checks the
 * corner and style against the settings it keeps, over the assembly's own); undefined when it named none.
 */
function parseBrand(value: unknown): Partial<BrandPartsSetting> | undefined {
  const raw = record(value);
  const brand: Record<string, unknown> = {};
  for (const key of BRAND_BOOLEANS) if (typeof raw[key] === 'boolean') brand[key] = raw[key];
  for (const key of BRAND_NUMBERS) if (finiteNumber(raw[key]) !== undefined) brand[key] = raw[key];
  if (raw.title_text === null || typeof raw.title_text === 'string') brand.title_text = raw.title_text;
  if ((TITLE_STYLES as readonly unknown[]).includes(raw.title_style)) brand.title_style = raw.title_style;
  if ((LOGO_CORNERS as readonly unknown[]).includes(raw.logo_corner)) brand.logo_corner = raw.logo_corner;
  return Object.keys(brand).length ? (brand as Partial<BrandPartsSetting>) : undefined;
}

export function parseChatJson(content: string, request: ChatRequest): ChatReply {
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch {
    throw new ProviderError('BAD_RESPONSE', 'The chat model did not answer JSON');
  }
  const body = record(parsed);
  const reply = optionalText(body.reply);
  if (!reply) throw new ProviderError('BAD_RESPONSE', 'The chat model answered without a reply');
  const prefs = record(body.preferences);
  const energy = optionalText(prefs.energy_level)?.toLowerCase();
  const preferences: ChatPreferences = {
    aesthetic: optionalText(prefs.aesthetic),
    energy_level: energy && ENERGY.has(energy) ? (energy as ChatPreferences['energy_level']) : undefined,
    copy_style: optionalText(prefs.copy_style),
    generated_texts: Array.isArray(prefs.generated_texts) ? prefs.generated_texts.filter((t): t is string => typeof t === 'string') : undefined,
  };
  const rawEditing = record(body.editing);
  const editing: ChatEditingHints = {};
  if (optionalText(rawEditing.transition)) editing.transition = optionalText(rawEditing.transition);
  if (optionalText(rawEditing.pacing)) editing.pacing = optionalText(rawEditing.pacing);
  if (typeof rawEditing.transition_duration === 'number') editing.transition_duration = rawEditing.transition_duration;
  if (optionalText(rawEditing.caption_position)) editing.caption_position = optionalText(rawEditing.caption_position);
  const music = parseMusic(rawEditing.music, request);
  if (music) editing.music = music;
  const brand = parseBrand(rawEditing.brand);
  if (brand) editing.brand = brand;
  // every format to render: known ones only, in the picker's order; an empty or unknown list changes nothing
  const formats = normalizeFormatList(rawEditing.formats, null);
  if (formats) editing.formats = formats;
  const selected = new Set((request.clips ?? []).map((c) => c.id));
  const seen = new Set<string>();
  const clipOrder = (Array.isArray(body.clip_order) ? body.clip_order : [])
    .map(record)
    .map((entry) => ({ clip_id: optionalText(entry.clip_id) ?? '', reason: optionalText(entry.reason) ?? '' }))
    .filter((entry) => selected.has(entry.clip_id) && !seen.has(entry.clip_id) && seen.add(entry.clip_id));
  const analysis = record(body.analysis);
  const missing = Array.isArray(analysis.missing_info) ? analysis.missing_info.filter((m): m is string => typeof m === 'string') : [];
  if (request.selectedClipCount < 1 && !missing.includes('clips')) missing.unshift('clips');
  const score = typeof analysis.confidence_score === 'number' && Number.isFinite(analysis.confidence_score) ? Math.min(1, Math.max(0, analysis.confidence_score)) : 0;
  return {
    reply,
    preferences,
    editing,
    clip_order: clipOrder,
    analysis: { ready_to_create: analysis.ready_to_create === true && missing.length === 0, confidence_score: Math.round(score * 100) / 100, missing_info: missing },
  };
}

function userTurn(request: ChatRequest): string {
  const context = {
    project: request.projectName ?? null,
    aspect_ratio: request.aspectRatio ?? null,
    selected_clips: (request.clips ?? []).map((c) => ({ id: c.id, name: c.name, camera_movement: c.camera_movement, duration: c.duration, orientation: c.orientation })),
    settled_preferences: request.preferences ?? {},
    music_tracks: (request.musicTracks ?? []).map((t) => ({ id: t.id, name: t.name, duration: t.duration })),
    current_music: request.music ?? null,
    brand_kit: request.brandKit
      ? { has_logo: request.brandKit.hasLogo, company: request.brandKit.company, phone: request.brandKit.phone, website: request.brandKit.website, call_to_action: request.brandKit.callToAction }
      : null,
    current_brand: request.brand ?? null,
    current_formats: request.formats && request.formats.length > 0 ? request.formats : request.ownFormat ? [request.ownFormat] : [],
  };
  return `Context: ${JSON.stringify(context)}\n\nUser: ${request.message}`;
}

export class OpenAiChatProvider implements ChatProvider {
  private readonly fetch: typeof fetch;

  constructor(private readonly options: OpenAiChatOptions) {
    this.fetch = options.fetch ?? fetch;
  }

  async reply(request: ChatRequest): Promise<ChatReply> {
    if (!request.message.trim()) throw new ProviderError('INPUT', 'Please type a message');
    const url = `${this.options.baseUrl.replace(/\/+$/, '')}/chat/completions`;
    const body = {
      model: this.options.model,
      response_format: { type: 'json_object' },
      temperature: 0.4,
      messages: [
        { role: 'system', content: CHAT_SYSTEM_PROMPT },
        ...request.history.slice(-20).map((m) => ({ role: m.role, content: m.content })),
        { role: 'user', content: userTurn(request) },
      ],
    };
    let res: Response;
    try {
      res = await this.fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}) },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 30_000),
      });
    } catch (error) {
      const timedOut = (error as Error).name === 'TimeoutError' || (error as Error).name === 'AbortError';
      throw new ProviderError(timedOut ? 'TIMEOUT' : 'UNAVAILABLE', `Chat service ${timedOut ? 'timed out' : 'unreachable'}`, { cause: error });
    }
    const text = await res.text().catch(() => '');
    if (!res.ok) {
      const detail = (() => {
        try {
          return optionalText(record(record(JSON.parse(text)).error).message) ?? '';
        } catch {
          return '';
        }
      })();
      const code = res.status === 401 || res.status === 403 ? 'AUTH' : res.status === 429 ? 'RATE_LIMITED' : res.status >= 500 ? 'UNAVAILABLE' : 'VALIDATION';
      throw new ProviderError(code, `Chat service answered ${res.status}${detail ? `: ${detail.slice(0, 200)}` : ''}`, { httpStatus: res.status });
    }
    let content: unknown;
    try {
      const choice = (record(JSON.parse(text)).choices as unknown[] | undefined)?.[0];
      content = record(record(choice).message).content;
    } catch {
      throw new ProviderError('BAD_RESPONSE', 'The chat service answered something other than JSON');
    }
    if (typeof content !== 'string') throw new ProviderError('BAD_RESPONSE', 'The chat service answered without a message');
    return parseChatJson(content, request);
  }
}
