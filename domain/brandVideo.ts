/**
 * The brand parts of an assembly (issue 44 items 1-2, DESIGN.md "Brand kit and video"): a title card, captions in the
 * brand's font and colour, a logo watermark and an end card. Pure rules shared by the API, the chat's editing config,
 * the timeline, the worker and the front end: each assembly's part switches (editing_config.brand), what the
 * workspace's kit brings into an edit, and where each part goes on a frame of a given size (platform safe areas).
 */

export const LOGO_CORNERS = ['top-left', 'top-right', 'bottom-left', 'bottom-right'] as const;
export type LogoCorner = (typeof LOGO_CORNERS)[number];
export const TITLE_STYLES = ['overlay', 'card'] as const;
/** overlay: the title over the first clip; card: the title on a brand-coloured card over the first clip. */
export type TitleStyle = (typeof TITLE_STYLES)[number];

export const TITLE_MIN_SECONDS = 1.5;
export const TITLE_MAX_SECONDS = 3;
export const END_CARD_MIN_SECONDS = 2;
export const END_CARD_MAX_SECONDS = 6;
/** The logo's longer side as a fraction of the frame's shorter side. */
export const LOGO_MIN_SIZE = 0.06;
export const LOGO_MAX_SIZE = 0.3;
export const LOGO_MIN_OPACITY = 0.2;
export const TITLE_TEXT_MAX_LENGTH = 100;

/** An assembly's brand part switches and settings (editing_config.brand). */
export interface BrandPartsSetting {
  title_card: boolean;
  /** The title's text; null: the project's name. */
  title_text: string | null;
  title_style: TitleStyle;
  title_seconds: number;
  /** Captions drawn in the kit's font and colour (off: plain white captions, as before brand kits). */
  captions: boolean;
  logo: boolean;
  logo_corner: LogoCorner;
  logo_size: number;
  logo_opacity: number;
  end_card: boolean;
  end_card_seconds: number;
}

/** Every part on: a new assembly uses the workspace's kit in full; each assembly may switch parts off. */
export const DEFAULT_BRAND_PARTS: BrandPartsSetting = {
  title_card: true,
  title_text: null,
  title_style: 'card',
  title_seconds: 2.5,
  captions: true,
  logo: true,
  logo_corner: 'top-right',
  logo_size: 0.14,
  logo_opacity: 0.85,
  end_card: true,
  end_card_seconds: 3,
};

const round2 = (n: number): number => Math.round(n * 100) / 100;

function finite(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

const clamp = (n: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, n));

/** A title as it is kept: one line, printable, at most TITLE_TEXT_MAX_LENGTH characters; '' for none. */
export function cleanTitleText(value: unknown): string {
  if (typeof value !== 'string') return '';
  // eslint-disable-next-line no-control-regex
  const line = value.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').replace(/\s+/g, ' ').trim();
  if (line.length <= TITLE_TEXT_MAX_LENGTH) return line;
  // never half of a character written as two UTF-16 units (an emoji, a rare CJK ideograph): Pango would draw a box
  const cut = /[\ud800-\udbff]/.test(line[TITLE_TEXT_MAX_LENGTH - 1]) ? TITLE_TEXT_MAX_LENGTH - 1 : TITLE_TEXT_MAX_LENGTH;
  return line.slice(0, cut).trimEnd();
}

/** Any brand parts setting (a stored row, a request) made valid over `fallback` for what it leaves out. */
export function normalizeBrandParts(input: unknown, fallback: BrandPartsSetting = DEFAULT_BRAND_PARTS): BrandPartsSetting {
  const raw = input && typeof input === 'object' && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
  const bool = (key: keyof BrandPartsSetting): boolean => (typeof raw[key] === 'boolean' ? (raw[key] as boolean) : (fallback[key] as boolean));
  const num = (key: keyof BrandPartsSetting, lo: number, hi: number): number => {
    const n = finite(raw[key]);
    return n === null ? (fallback[key] as number) : round2(clamp(n, lo, hi));
  };
  let title: string | null = fallback.title_text;
  if (raw.title_text === null) title = null;
  else if (typeof raw.title_text === 'string') title = cleanTitleText(raw.title_text) || null;
  return {
    title_card: bool('title_card'),
    title_text: title,
    title_style: (TITLE_STYLES as readonly string[]).includes(raw.title_style as string) ? (raw.title_style as TitleStyle) : fallback.title_style,
    title_seconds: num('title_seconds', TITLE_MIN_SECONDS, TITLE_MAX_SECONDS),
    captions: bool('captions'),
    logo: bool('logo'),
    logo_corner: (LOGO_CORNERS as readonly string[]).includes(raw.logo_corner as string) ? (raw.logo_corner as LogoCorner) : fallback.logo_corner,
    logo_size: num('logo_size', LOGO_MIN_SIZE, LOGO_MAX_SIZE),
    logo_opacity: num('logo_opacity', LOGO_MIN_OPACITY, 1),
    end_card: bool('end_card'),
    end_card_seconds: num('end_card_seconds', END_CARD_MIN_SECONDS, END_CARD_MAX_SECONDS),
  };
}

/** The brand parts in words, for the assembly page and the dry run. */
export function brandPartsSummary(parts: BrandPartsSetting, kitStored: boolean): string {
  if (!kitStored) return 'No brand kit yet: the video has no brand parts';
  const on = [parts.title_card && 'title card', parts.captions && 'brand captions', parts.logo && 'logo', parts.end_card && 'end card'].filter(Boolean) as string[];
  return on.length ? `Brand parts: ${on.join(', ')}` : 'Brand parts switched off';
}

/**
 * What the workspace's kit brings into an edit (resolved by the service from the stored kit when the assembly is
 * dry-run or admitted): its colours, font, logo file and end card lines, and the title's text.
 */
export interface BrandSource {
  primaryColor: string;
  secondaryColor: string;
  font: string;
  /** The stored PNG as an unsigned /api/files/... URL, with its size; null without a logo. */
  logo: { src: string; width: number; height: number } | null;
  /** The end card's contact lines (company, phone, website; the empty ones left out). */
  contactLines: string[];
  callToAction: string;
  /** The title card's text (the assembly's own, else the project's name). */
  title: string;
}

// ---------------------------------------------------------------------------------------------------------------
// Layout: where the parts go on a frame of a given size

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** Margins no text or logo enters, as fractions of the frame (top and bottom of the height, sides of the width). */
export interface SafeAreaMargins {
  top: number;
  bottom: number;
  side: number;
}

/**
 * Portrait (9:16, Reels and TikTok): the top band holds the app's tabs and the bottom band the caption, buttons
 * and sound name; the right side its action buttons. Landscape (16:9, YouTube): the broadcast title-safe margin.
 */
export const SAFE_AREA_PORTRAIT: SafeAreaMargins = { top: 0.14, bottom: 0.22, side: 0.08 };
export const SAFE_AREA_LANDSCAPE: SafeAreaMargins = { top: 0.05, bottom: 0.05, side: 0.05 };

export interface BrandLayout {
  width: number;
  height: number;
  /** The part of the frame text and logo stay inside. */
  safe: Box;
  /** The title card's box (centred in the safe area). */
  title: Box;
  titleMaxFontPx: number;
  /** A caption's box at each position (inside the safe area). */
  caption: Record<'top' | 'center' | 'bottom', Box>;
  captionMaxFontPx: number;
  /** The end card: logo above, the call to action, then the contact lines. */
  endLogo: Box;
  endCallToAction: Box;
  endCallToActionMaxFontPx: number;
  endContact: Box;
  endContactMaxFontPx: number;
}

const even = (n: number): number => Math.max(2, Math.round(n / 2) * 2);

/**
 * The per-format layout of the brand parts for an output of `width` x `height`: its safe area (portrait or
 * landscape margins by the frame's shape) and the boxes of the title, captions and end card in it. The one place
 * sizes and safe areas are decided, for any output size.
 */
export function brandLayout(width: number, height: number): BrandLayout {
  const margins = height > width ? SAFE_AREA_PORTRAIT : SAFE_AREA_LANDSCAPE;
  // even margins: the encoder's chroma (4:2:0) pairs rows and columns, so a part's edge never shares a pair with the band
  const evenUp = (n: number): number => Math.ceil(n / 2) * 2;
  const top = evenUp(height * margins.top);
  const bottom = evenUp(height * margins.bottom);
  const side = evenUp(width * margins.side);
  const safe: Box = { x: side, y: top, width: width - 2 * side, height: height - top - bottom };
  const unit = Math.min(width, height);
  const titleHeight = even(safe.height * (height > width ? 0.3 : 0.4));
  const title: Box = { x: safe.x, y: safe.y + Math.round((safe.height - titleHeight) / 2), width: safe.width, height: titleHeight };
  const captionHeight = even(Math.min(safe.height * 0.2, unit * 0.2));
  const caption = {
    top: { x: safe.x, y: safe.y, width: safe.width, height: captionHeight },
    center: { x: safe.x, y: safe.y + Math.round((safe.height - captionHeight) / 2), width: safe.width, height: captionHeight },
    bottom: { x: safe.x, y: safe.y + safe.height - captionHeight, width: safe.width, height: captionHeight },
  };
  const logoSide = even(unit * 0.3);
  const ctaHeight = even(safe.height * 0.2);
  const contactHeight = even(safe.height * 0.25);
  const gap = Math.round(safe.height * 0.04);
  const block = logoSide + gap + ctaHeight + gap + contactHeight;
  const blockTop = safe.y + Math.max(0, Math.round((safe.height - block) / 2));
  return {
    width,
    height,
    safe,
    title,
    titleMaxFontPx: Math.round(unit / 9),
    caption,
    captionMaxFontPx: Math.round(unit / 18),
    endLogo: { x: Math.round((width - logoSide) / 2), y: blockTop, width: logoSide, height: logoSide },
    endCallToAction: { x: safe.x, y: blockTop + logoSide + gap, width: safe.width, height: ctaHeight },
    endCallToActionMaxFontPx: Math.round(unit / 12),
    endContact: { x: safe.x, y: blockTop + logoSide + gap + ctaHeight + gap, width: safe.width, height: contactHeight },
    endContactMaxFontPx: Math.round(unit / 24),
  };
}

/** The logo watermark's box: the logo's aspect kept, its longer side `size` of the frame's shorter side, in `corner` of the safe area. */
export function logoBox(layout: BrandLayout, logo: { width: number; height: number }, corner: LogoCorner, size: number): Box {
  const longest = Math.max(2, Math.round(Math.min(layout.width, layout.height) * size));
  const scale = longest / Math.max(logo.width, logo.height);
  const width = Math.max(2, Math.round(logo.width * scale));
  const height = Math.max(2, Math.round(logo.height * scale));
  const { safe } = layout;
  const x = corner.endsWith('left') ? safe.x : safe.x + safe.width - width;
  const y = corner.startsWith('top') ? safe.y : safe.y + safe.height - height;
  return { x, y, width, height };
}

/** Whether `inner` lies wholly inside `outer`. */
export function boxInside(inner: Box, outer: Box): boolean {
  return inner.x >= outer.x && inner.y >= outer.y && inner.x + inner.width <= outer.x + outer.width && inner.y + inner.height <= outer.y + outer.height;
}
