/**
 * The rule-based chat's ear for the brand parts (issue 44 item 5): "add our logo bottom right", "no title card",
 * "title 'Harbour Villas' over the first clip", "end card with the phone number", "smaller logo", "brand captions".
 * Reads the latest message against the assembly's brand parts now and the workspace's kit, and answers the parts to
 * change with sentences saying the change in words (and what the kit still lacks for it).
 */
import {
  DEFAULT_BRAND_PARTS,
  END_CARD_MAX_SECONDS,
  END_CARD_MIN_SECONDS,
  LOGO_MAX_SIZE,
  LOGO_MIN_OPACITY,
  LOGO_MIN_SIZE,
  TITLE_MAX_SECONDS,
  TITLE_MIN_SECONDS,
  cleanTitleText,
  type BrandPartsSetting,
  type LogoCorner,
} from '../../domain/brandVideo';
import type { ChatBrandKit } from '../types';

const OFF = '(?:no|without|remove|drop|hide|lose|skip|turn\\s+off|switch\\s+off|get\\s+rid\\s+of)';
const ARTICLE = '(?:the\\s+|our\\s+|a\\s+|an\\s+|any\\s+)?';
const LOGO = /\blogos?\b/;
const NO_LOGO = new RegExp(`\\b${OFF}\\s+${ARTICLE}logos?\\b|\\blogos?\\s+off\\b`);
const CORNER = /\b(top|upper|bottom|lower)[\s-]+(left|right)\b/;
const BIGGER = /\b(bigger|larger)\b/;
const SMALLER = /\b(smaller|tinier|less big)\b/;
const FAINTER = /\b(fainter|more transparent|more subtle|subtler|lighter)\b/;
const STRONGER = /\b(solid|opaque|less transparent|stronger|bolder)\b/;
const PERCENT = /\b(\d{1,3})\s?%/;

const TITLE_NOUN = '(?:title(?:\\s+card)?|intro(?:\\s+card)?|opening\\s+card)';
const TITLE = new RegExp(`\\b${TITLE_NOUN}\\b`);
const NO_TITLE = new RegExp(`\\b${OFF}\\s+${ARTICLE}${TITLE_NOUN}\\b|\\btitle(?:\\s+card)?\\s+off\\b`);
/** The title's own words, quoted in the message as written (its letters' case kept). */
const TITLE_TEXT = /\btitle(?:\s+card)?(?:\s+text)?\s*(?:to|:|as|saying|that\s+says|reading|=)?\s*["“”'‘’«]([^"“”'‘’«»]{1,200})["“”'‘’»]/i;
const TITLE_OVER_CLIP = /\bover\s+the\s+(?:first\s+)?(?:clip|video|shot|footage)\b/;
const TITLE_ON_CARD = /\bon\s+(?:a|its\s+own|the)\s+(?:[\w-]+\s+)?card\b|\bcoloured card\b|\bcolored card\b/;

const END_NOUN = '(?:(?:end|closing|outro|final)\\s+(?:card|screen|frame))';
const END_CARD = new RegExp(`\\b${END_NOUN}\\b|\\bcontact\\s+(?:card|details|info)\\b`);
const NO_END_CARD = new RegExp(`\\b${OFF}\\s+${ARTICLE}${END_NOUN}\\b|\\b${END_NOUN}\\s+off\\b`);
const PHONE = /\b(phone|telephone|number to call)\b/;
const WEBSITE = /\b(website|web\s+address|site|url)\b/;
const COMPANY = /\bcompany(?:'s)?\s+name\b/;
const CALL_TO_ACTION = /\bcall\s+to\s+action\b/;

const BRAND_CAPTIONS = /\b(?:captions?|text)\b[^.!?]*\b(?:brand(?:ed)?|our)\s+(?:font|colou?rs?|style|look)\b|\b(?:brand(?:ed)?|our)\s+(?:font|style)\s+(?:for|on)\s+(?:the\s+)?captions?\b|\bbrand(?:ed)?\s+captions?\b/;
const PLAIN_CAPTIONS = /\bplain\s+(?:white\s+)?captions?\b|\bcaptions?\s+in\s+plain\s+white\b/;

const SECONDS = /(\d+(?:\.\d+)?)\s*(?:s|sec|secs|seconds?)\b/;

const round2 = (n: number): number => Math.round(n * 100) / 100;
const clamp = (n: number, lo: number, hi: number): number => round2(Math.min(hi, Math.max(lo, n)));

export interface BrandUnderstanding {
  /** The parts to change; undefined: the message said nothing about them. */
  brand?: Partial<BrandPartsSetting>;
  /** The change in words, for the reply (and what the kit lacks for it). */
  words?: string;
}

const CORNER_WORDS: Record<LogoCorner, string> = { 'top-left': 'top left', 'top-right': 'top right', 'bottom-left': 'bottom left', 'bottom-right': 'bottom right' };

/** The seconds said in the same sentence as `noun`, if any. */
function secondsNear(text: string, noun: RegExp): number | null {
  for (const sentence of text.split(/[.!?;]+/)) {
    if (!noun.test(sentence)) continue;
    const m = SECONDS.exec(sentence);
    if (m) return Number(m[1]);
  }
  return null;
}

/** The sentences of `text` that name `noun`, joined: what the message says about that part. */
function about(text: string, noun: RegExp): string {
  return text
    .split(/[.!?;]+|,\s*(?:and\s+)?|\s+and\s+(?=(?:a|an|the|our|no|add|use|put|make|move)\b)/)
    .filter((part) => noun.test(part))
    .join(' . ');
}

/** The brand parts the message changes, given the parts now and the kit; nothing when it does not speak of them. */
export function understandBrand(message: string, current: BrandPartsSetting | undefined, kit: ChatBrandKit | null | undefined): BrandUnderstanding {
  const text = message.toLowerCase();
  const now = current ?? DEFAULT_BRAND_PARTS;
  const change: Partial<BrandPartsSetting> = {};
  const words: string[] = [];
  const lacks: string[] = [];

  // the logo
  const logoSaid = about(text, LOGO);
  if (logoSaid) {
    if (NO_LOGO.test(logoSaid)) {
      change.logo = false;
      words.push('Logo off.');
    } else {
      change.logo = true;
      const corner = CORNER.exec(logoSaid);
      if (corner) change.logo_corner = `${corner[1] === 'upper' ? 'top' : corner[1] === 'lower' ? 'bottom' : corner[1]}-${corner[2]}` as LogoCorner;
      if (BIGGER.test(logoSaid)) change.logo_size = clamp(now.logo_size * 1.3, LOGO_MIN_SIZE, LOGO_MAX_SIZE);
      if (SMALLER.test(logoSaid)) change.logo_size = clamp(now.logo_size / 1.3, LOGO_MIN_SIZE, LOGO_MAX_SIZE);
      const percent = PERCENT.exec(logoSaid);
      if (percent) change.logo_opacity = clamp(Number(percent[1]) / 100, LOGO_MIN_OPACITY, 1);
      else if (FAINTER.test(logoSaid)) change.logo_opacity = clamp(now.logo_opacity - 0.2, LOGO_MIN_OPACITY, 1);
      else if (STRONGER.test(logoSaid)) change.logo_opacity = clamp(now.logo_opacity + 0.2, LOGO_MIN_OPACITY, 1);
      const corner2 = change.logo_corner ?? now.logo_corner;
      const size = change.logo_size ?? now.logo_size;
      const opacity = change.logo_opacity ?? now.logo_opacity;
      words.push(`Logo ${CORNER_WORDS[corner2]}, ${Math.round(size * 100)}% of the frame, at ${Math.round(opacity * 100)}% opacity.`);
      if (kit && !kit.hasLogo) lacks.push('logo');
    }
  }

  // the title card
  const titleSaid = about(text, TITLE);
  if (titleSaid) {
    if (NO_TITLE.test(titleSaid)) {
      change.title_card = false;
      words.push('No title card.');
    } else {
      change.title_card = true;
      const quoted = TITLE_TEXT.exec(message);
      if (quoted) {
        const title = cleanTitleText(quoted[1]);
        if (title) change.title_text = title;
      }
      if (TITLE_OVER_CLIP.test(titleSaid)) change.title_style = 'overlay';
      else if (TITLE_ON_CARD.test(titleSaid)) change.title_style = 'card';
      const seconds = secondsNear(text, TITLE);
      if (seconds !== null) change.title_seconds = clamp(seconds, TITLE_MIN_SECONDS, TITLE_MAX_SECONDS);
      const title = change.title_text !== undefined ? change.title_text : now.title_text;
      const style = change.title_style ?? now.title_style;
      const length = change.title_seconds ?? now.title_seconds;
      words.push(`Title card${title ? ` "${title}"` : ' with the project\'s name'} ${style === 'overlay' ? 'over the first clip' : 'on a brand-coloured card'} for ${length} s.`);
    }
  }

  // the end card, and the contact lines it shows
  const endSaid = about(text, END_CARD);
  const contactSaid = [PHONE, WEBSITE, COMPANY, CALL_TO_ACTION].some((p) => p.test(text)) && /\b(end|closing|outro|final|card|contact|show|add|with|include|put)\b/.test(text);
  if (endSaid || contactSaid) {
    if (endSaid && NO_END_CARD.test(endSaid)) {
      change.end_card = false;
      words.push('No end card.');
    } else {
      change.end_card = true;
      const seconds = secondsNear(text, END_CARD);
      if (seconds !== null) change.end_card_seconds = clamp(seconds, END_CARD_MIN_SECONDS, END_CARD_MAX_SECONDS);
      const shown = kit ? [kit.company, kit.phone, kit.website].map((l) => l.trim()).filter(Boolean) : [];
      const cta = kit?.callToAction.trim();
      words.push(`End card for ${change.end_card_seconds ?? now.end_card_seconds} s${cta ? ` with "${cta}"` : ''}${shown.length ? `${cta ? ' and' : ' with'} ${shown.join(', ')}` : ''}.`);
      if (kit) {
        if (PHONE.test(text) && !kit.phone.trim()) lacks.push('phone number');
        if (WEBSITE.test(text) && !kit.website.trim()) lacks.push('website');
        if (COMPANY.test(text) && !kit.company.trim()) lacks.push('company name');
        if (CALL_TO_ACTION.test(text) && !cta) lacks.push('call to action');
      }
    }
  }

  // captions in the kit's font and colour, or plain
  if (PLAIN_CAPTIONS.test(text)) {
    change.captions = false;
    words.push('Captions in plain white.');
  } else if (BRAND_CAPTIONS.test(text)) {
    change.captions = true;
    words.push("Captions in the brand's font and colour.");
  }

  if (Object.keys(change).length === 0) return {};
  if (!kit) words.push('This workspace has no brand kit yet: an admin can set one up on the Brand kit page, and these parts show once it exists.');
  else if (lacks.length) words.push(`The brand kit has no ${lacks.join(' or ')} yet: add ${lacks.length === 1 ? 'it' : 'them'} on the Brand kit page.`);
  return { brand: change, words: words.join(' ') };
}

/**
 * `text` without what the brand parts took ("our logo bottom right", a quoted title), so the rest of the assistant
 * does not take "bottom" or a title's words for a caption position, a look or a pace.
 */
export function withoutBrandWords(text: string): string {
  return text
    .replace(TITLE_TEXT, ' ')
    .replace(new RegExp(`\\b(?:our|the|a)?\\s*logos?\\b(?:\\s+(?:in\\s+the\\s+|at\\s+the\\s+|to\\s+the\\s+)?(?:top|upper|bottom|lower)[\\s-]+(?:left|right)(?:\\s+corner)?)?`, 'gi'), ' ')
    .replace(new RegExp(`\\b${TITLE_NOUN}\\b\\s+over\\s+the\\s+(?:first\\s+)?(?:clip|video|shot|footage)\\b`, 'gi'), ' ');
}
