/**
 * A workspace's brand kit (DESIGN.md "Brand kit and video", issue 44): two colours, a font from the set installed
 * from Debian's font packages, contact lines for end cards and a logo (stored rasterised as PNG). Pure rules shared by
 * the API, the assembly timeline and the front end: what a valid kit is, and whether an SVG logo is safe to rasterise.
 */

/** The fonts a kit may use, each the family name Pango knows and the Debian package that installs it. */
export const BRAND_FONTS = [
  { family: 'Inter', debianPackage: 'fonts-inter' },
  { family: 'Lato', debianPackage: 'fonts-lato' },
  { family: 'Open Sans', debianPackage: 'fonts-open-sans' },
  { family: 'Roboto', debianPackage: 'fonts-roboto' },
  { family: 'Noto Sans', debianPackage: 'fonts-noto-core' },
] as const;
export type BrandFont = (typeof BRAND_FONTS)[number]['family'];
export const BRAND_FONT_FAMILIES: readonly BrandFont[] = BRAND_FONTS.map((f) => f.family);

/**
 * The fonts drawn for the glyphs the brand font lacks, after it and in this order (installed with the brand fonts,
 * scripts/lib/tools.js): Noto Sans for Latin, Greek and Cyrillic beyond the brand font, Noto Sans Arabic, then one
 * of Noto Sans CJK's faces for Chinese, Japanese and Korean (each face has every CJK glyph; the face decides the
 * regional shapes of the shared Han characters).
 */
export const BRAND_FALLBACK_FONTS = [
  { family: 'Noto Sans', debianPackage: 'fonts-noto-core' },
  { family: 'Noto Sans Arabic', debianPackage: 'fonts-noto-core' },
  { family: 'Noto Sans CJK SC', debianPackage: 'fonts-noto-cjk' },
  { family: 'Noto Sans CJK JP', debianPackage: 'fonts-noto-cjk' },
  { family: 'Noto Sans CJK KR', debianPackage: 'fonts-noto-cjk' },
] as const;

const KANA = /[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]/;
const HANGUL = /[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]/;

/**
 * The families text is drawn with, best first: the brand font, then the fallbacks for what it lacks. The CJK face
 * follows the text: Japanese where it has kana, Korean where it has Hangul, else Simplified Chinese.
 */
export function brandFontFamilies(font: string, text = ''): string[] {
  const cjk = KANA.test(text) ? 'Noto Sans CJK JP' : HANGUL.test(text) ? 'Noto Sans CJK KR' : 'Noto Sans CJK SC';
  const fallbacks = BRAND_FALLBACK_FONTS.map((f) => f.family as string).filter((family) => !family.startsWith('Noto Sans CJK') || family === cjk);
  return [font, ...fallbacks].filter((family, i, all) => family.trim() !== '' && all.indexOf(family) === i);
}

/**
 * The families as a Pango font description's family list ("Inter, Noto Sans, ..., Noto Sans CJK SC,"): each glyph
 * comes from the first family that has it. The closing comma ends the list, so no family name is read as a style.
 */
export function brandFontDescription(font: string, text = ''): string {
  return `${brandFontFamilies(font, text).join(', ')},`;
}

/** Largest logo upload accepted (bytes): a bigger one is refused with 413 and nothing is stored. */
export const BRAND_LOGO_MAX_BYTES = 5 * 1024 * 1024;
/** The stored logo fits in this square (pixels), aspect kept. */
export const BRAND_LOGO_MAX_SIDE = 1024;
export const BRAND_CONTACT_MAX_LENGTH = 80;
export const BRAND_CALL_TO_ACTION_MAX_LENGTH = 60;

export interface BrandContact {
  company: string;
  phone: string;
  website: string;
}

export interface BrandKitFields {
  primaryColor: string;
  secondaryColor: string;
  font: BrandFont;
  contact: BrandContact;
  /** The end card's call to action ("Book a viewing"). */
  callToAction: string;
}

/** The kit as the API answers it. */
export interface BrandKitView extends BrandKitFields {
  workspaceId: string;
  /** A signed link to the stored PNG, or null without a logo. */
  logoUrl: string | null;
  logoWidth: number | null;
  logoHeight: number | null;
  updatedAt: string | null;
  updatedBy: string | null;
}

/** What a workspace without a stored kit uses. */
export const DEFAULT_BRAND_KIT: BrandKitFields = {
  primaryColor: '#1F2A44',
  secondaryColor: '#F2B134',
  font: 'Inter',
  contact: { company: '', phone: '', website: '' },
  callToAction: 'Book a viewing',
};

export const BRAND_KIT_MSG = {
  fontRequired: `Choose a font: ${BRAND_FONT_FAMILIES.join(', ')}`,
  colorInvalid: 'Colours are written as #RRGGBB',
  contactTooLong: `Contact lines are at most ${BRAND_CONTACT_MAX_LENGTH} characters`,
  logoTooLarge: `The logo is larger than ${BRAND_LOGO_MAX_BYTES / (1024 * 1024)} MB`,
  logoEmpty: 'Send the logo file as the request body',
  logoUnreadable: 'The logo must be a PNG, JPEG, WebP or SVG image',
  svgUnsafe: (reason: string) => `The SVG logo was refused: it ${reason}`,
} as const;

export const BRAND_KIT_CODES = {
  invalid: 'BRAND_KIT_INVALID',
  logoTooLarge: 'BRAND_LOGO_TOO_LARGE',
  logoInvalid: 'BRAND_LOGO_INVALID',
  svgUnsafe: 'BRAND_LOGO_UNSAFE_SVG',
} as const;

const HEX = /^#[0-9a-f]{6}$/i;

export function isBrandColor(value: unknown): value is string {
  return typeof value === 'string' && HEX.test(value);
}

export function isBrandFont(value: unknown): value is BrandFont {
  return typeof value === 'string' && (BRAND_FONT_FAMILIES as readonly string[]).includes(value);
}

/** A contact line as it is kept: one line, trimmed, no control characters. */
export function cleanBrandLine(value: unknown): string {
  if (typeof value !== 'string') return '';
  // eslint-disable-next-line no-control-regex
  return value.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').replace(/\s+/g, ' ').trim();
}

/** #RRGGBB to [r, g, b]. */
export function rgbOf(color: string): [number, number, number] {
  const hex = HEX.test(color) ? color.slice(1) : '000000';
  return [0, 2, 4].map((i) => parseInt(hex.slice(i, i + 2), 16)) as [number, number, number];
}

/** Black or white, whichever reads better on `background` (WCAG relative luminance). */
export function textColorOn(background: string): '#000000' | '#FFFFFF' {
  const [r, g, b] = rgbOf(background).map((c) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  });
  const luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  return luminance > 0.179 ? '#000000' : '#FFFFFF';
}

/**
 * Why an SVG may not be rasterised, or null when it may: scripts, event handlers, foreignObject (HTML inside),
 * entity declarations, and references to anything outside the file (href/xlink:href other than `#...` or `data:`,
 * CSS url() or @import to another file). librsvg would not run scripts, but a logo that carries them is not a logo.
 */
export function svgProblem(svg: string): string | null {
  const text = svg.replace(/<!--[\s\S]*?-->/g, '');
  if (/<\s*(?:[\w-]+:)?script\b/i.test(text)) return 'contains a script';
  if (/<\s*(?:[\w-]+:)?foreignObject\b/i.test(text)) return 'contains a foreignObject';
  if (/<!ENTITY|<!DOCTYPE[^>]*\[/i.test(text)) return 'declares entities';
  if (/\son[a-z]+\s*=/i.test(text)) return 'contains an event handler';
  for (const match of text.matchAll(/\s(?:[\w-]+:)?href\s*=\s*("([^"]*)"|'([^']*)'|([^\s>]+))/gi)) {
    const target = (match[2] ?? match[3] ?? match[4] ?? '').trim();
    if (!target.startsWith('#') && !/^data:/i.test(target)) return 'refers to an external file';
  }
  for (const match of text.matchAll(/url\(\s*(['"]?)([^'")]*)\1\s*\)/gi)) {
    const target = match[2].trim();
    if (!target.startsWith('#') && !/^data:/i.test(target)) return 'refers to an external file';
  }
  if (/@import/i.test(text)) return 'refers to an external file';
  return null;
}
