/**
 * Rule-based assistant for the assembly chat (spec 001: preferences and a readiness analysis), offline and
 * deterministic. It reads the whole conversation for an aesthetic, an energy level and a copy style, proposes a
 * cut (transition and pacing from the look and the energy, a caption per clip in the copy style, an order that
 * opens on an establishing shot), and asks for whatever is still missing.
 */
import type { ChatClipFacts, ChatEditingHints, ChatPreferences, ChatProvider, ChatReply, ChatRequest } from '../types';
import { ProviderError } from '../errors';
import { understandBrand, withoutBrandWords } from './chatBrand';
import { understandFormats } from './chatFormats';
import { understandMusic, withoutMusicWords } from './chatMusic';

const AESTHETICS: Array<[string, RegExp]> = [
  ['luxury', /\b(luxur\w*|premium|elegant|high[- ]end|upscale)\b/],
  ['modern minimal', /\b(minimal\w*|modern|clean|sleek|simple)\b/],
  ['cinematic', /\b(cinematic|dramatic|epic|film\w*)\b/],
  ['warm and cosy', /\b(warm|cos[yi]|homely|inviting|family)\b/],
  ['vibrant', /\b(vibrant|colou?rful|bold|punchy|fun)\b/],
];
const ENERGY: Array<[NonNullable<ChatPreferences['energy_level']>, RegExp]> = [
  ['energetic', /\b(energetic|upbeat|fast|dynamic|exciting|quick|snappy)\b/],
  ['calm', /\b(calm|slow|relaxed|gentle|serene|peaceful)\b/],
  ['balanced', /\b(balanced|medium|moderate|steady)\b/],
];
const COPY: Array<[string, RegExp]> = [
  ['no text', /\b(no (text|copy|captions?|words))\b|\bwithout (text|captions?)\b/],
  ['professional', /\b(professional|corporate|formal|informative)\b/],
  ['playful', /\b(playful|casual|friendly|witty)\b/],
  ['aspirational', /\b(aspirational|inspiring|emotional|lifestyle)\b/],
];
/** Explicit transition words win over the look's own transition. */
const TRANSITION_WORDS: Array<[string, RegExp]> = [
  ['wipeLeft', /\bwipes?\b/],
  ['slideLeft', /\bslides?\b/],
  ['zoom', /\bzoom(s|ing)? (transition|cut)s?\b|\bzoom transitions?\b/],
  ['circle', /\bcircles?\b|\biris\b/],
  ['dissolve', /\bdissolves?\b/],
  ['fade', /\b(fades?|crossfades?|cross-fades?)\b/],
];
/** The look's transition when none is asked for. */
const AESTHETIC_TRANSITION: Record<string, string> = {
  luxury: 'fade',
  'modern minimal': 'wipeLeft',
  cinematic: 'dissolve',
  'warm and cosy': 'fade',
  vibrant: 'slideLeft',
};
const CAPTION_POSITION: Record<string, string> = { professional: 'bottom', playful: 'center', aspirational: 'bottom' };

/** Shots that establish a place open the video; interiors follow; the day-to-night change closes it. */
const OPENING_RANK: Record<string, number> = {
  'Drone Shot': 0,
  'Zoom In': 1,
  'Pan Left': 2,
  'Pan Right': 2,
  'Walk Through': 3,
  'Bring to Life': 4,
  'Day to Night': 5,
};
const ORDER_REASON: Record<number, string> = {
  0: 'an aerial view establishes the setting',
  1: 'a push in introduces the building',
  2: 'a pan shows the surroundings',
  3: 'a walk through takes the viewer inside',
  4: 'the scene comes to life',
  5: 'day to night makes a strong ending',
};

const CAPTION_TEMPLATES: Record<string, Array<(clip: ChatClipFacts, aesthetic: string) => string>> = {
  professional: [
    (c) => `Introducing ${c.project_name}`,
    (c) => `${c.camera_movement ?? 'A closer look'}: thoughtfully designed`,
    () => 'Quality in every detail',
    () => 'Spaces designed for living',
    () => 'Enquire today',
  ],
  playful: [
    (c) => `Say hello to ${c.project_name}!`,
    () => 'Yes, this could be home',
    () => 'Room to breathe (and dance)',
    () => 'Just look at that light',
    () => 'Come on in!',
  ],
  aspirational: [
    (c) => `${c.project_name}: where life unfolds`,
    (_c, look) => `Live the ${look || 'good'} life`,
    () => 'Every morning, a new view',
    () => 'Made for the moments that matter',
    () => 'Your next chapter starts here',
  ],
};

/** A transition as said to the user: 'wipeLeft' is 'wipe left'. */
function spokenTransition(transition: string): string {
  return transition.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
}

function firstMatch<T extends string>(text: string, table: Array<[T, RegExp]>): T | undefined {
  return table.find(([, pattern]) => pattern.test(text))?.[0];
}

function suggestedOrder(clips: ChatClipFacts[]): Array<{ clip_id: string; reason: string }> {
  const ranked = clips.map((clip, index) => ({ clip, index, rank: OPENING_RANK[clip.camera_movement ?? ''] ?? 3 }));
  // a stable sort: clips of the same kind keep the user's order
  ranked.sort((a, b) => a.rank - b.rank || a.index - b.index);
  return ranked.map(({ clip, rank }) => ({ clip_id: clip.id, reason: ORDER_REASON[rank] ?? 'keeps the story moving' }));
}

function captionsFor(copyStyle: string | undefined, aesthetic: string | undefined, clips: ChatClipFacts[]): string[] {
  if (!copyStyle || copyStyle === 'no text') return [];
  const templates = CAPTION_TEMPLATES[copyStyle] ?? CAPTION_TEMPLATES.professional;
  return clips.map((clip, i) => (i === clips.length - 1 && clips.length > 1 ? templates[templates.length - 1] : templates[Math.min(i, templates.length - 2)])(clip, aesthetic ?? ''));
}

export class RuleBasedChatProvider implements ChatProvider {
  async reply(request: ChatRequest): Promise<ChatReply> {
    if (!request.message.trim()) throw new ProviderError('INPUT', 'Please type a message');
    const tracks = request.musicTracks ?? [];
    // words that named a track ("the calm track") or a brand part ("our logo bottom right", a quoted title) say
    // nothing about the look or the pace
    const plain = (text: string) => withoutMusicWords(withoutBrandWords(text).toLowerCase(), tracks);
    const said = [...request.history.filter((m) => m.role === 'user').map((m) => m.content), request.message].map(plain).join(' ');
    const latest = plain(request.message);
    const music = understandMusic(request.message, tracks, request.music);
    const brand = understandBrand(request.message, request.brand, request.brandKit);
    const formats = understandFormats(request.message, request.formats, request.ownFormat);
    // the latest message wins over earlier ones, and anything said wins over what was settled before
    const known = request.preferences ?? {};
    const pick = <T extends string>(table: Array<[T, RegExp]>, previous: T | undefined) => firstMatch(latest, table) ?? firstMatch(said, table) ?? previous;
    const aesthetic = pick(AESTHETICS, known.aesthetic);
    const energy = pick(ENERGY, known.energy_level);
    const copyStyle = pick(COPY, known.copy_style);
    const clips = request.clips ?? [];
    const order = suggestedOrder(clips);
    const byId = new Map(clips.map((clip) => [clip.id, clip]));
    const orderedClips = order.map((o) => byId.get(o.clip_id) as ChatClipFacts);
    const preferences: ChatPreferences = {
      aesthetic,
      energy_level: energy,
      copy_style: copyStyle,
      generated_texts: captionsFor(copyStyle, aesthetic, orderedClips),
    };
    const editing: ChatEditingHints = {};
    const transition = firstMatch(latest, TRANSITION_WORDS) ?? firstMatch(said, TRANSITION_WORDS) ?? (aesthetic ? AESTHETIC_TRANSITION[aesthetic] : undefined);
    if (transition) editing.transition = transition;
    if (energy) editing.pacing = energy;
    if (copyStyle && CAPTION_POSITION[copyStyle]) editing.caption_position = CAPTION_POSITION[copyStyle];
    if (music.music) editing.music = music.music;
    if (brand.brand) editing.brand = brand.brand;
    if (formats.formats) editing.formats = formats.formats;

    const missing: string[] = [];
    if (request.selectedClipCount < 1) missing.push('clips');
    if (!aesthetic) missing.push('aesthetic');
    if (!energy) missing.push('energy_level');
    if (!copyStyle) missing.push('copy_style');
    const ready = missing.length === 0;
    const questions: Record<string, string> = {
      clips: 'Select at least one clip to assemble.',
      aesthetic: 'What look are you after: luxury, modern minimal, cinematic, warm and cosy or vibrant?',
      energy_level: 'Should the pace be calm, balanced or energetic?',
      copy_style: 'What tone for the captions: professional, playful, aspirational, or no text?',
    };
    const summary = [aesthetic, energy && `${energy} pace`, copyStyle && `${copyStyle} captions`].filter(Boolean).join(', ');
    const cut = [transition && `${spokenTransition(transition)} transitions`, order.length > 1 && `opening on ${orderedClips[0].name}`].filter(Boolean).join(', ');
    const answer = ready
      ? `Great: ${summary}${request.aspectRatio ? ` in ${request.aspectRatio}` : ''} with ${request.selectedClipCount} clip${request.selectedClipCount === 1 ? '' : 's'}${cut ? ` (${cut})` : ''}. Ready to create your video.`
      : `${summary ? `Noted: ${summary}. ` : ''}${questions[missing[0]]}`;
    const reply = [music.words, brand.words, formats.words, answer].filter(Boolean).join(' ');
    return {
      reply,
      preferences,
      analysis: { ready_to_create: ready, confidence_score: Math.round(((4 - missing.length) / 4) * 100) / 100, missing_info: missing },
      editing,
      clip_order: order,
    };
  }
}
