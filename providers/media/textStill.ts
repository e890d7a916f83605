/**
 * Text drawn as a transparent PNG still with Pango (sharp's text input), for the assembly's title card, captions and
 * end card (issue 44). The text is fitted into a box of the given size: Pango wraps it at word (then character)
 * boundaries and sharp picks the largest size at which the wrapped text fits both sides, so long names shrink and
 * wrap instead of being cut off. Fonts come from fontconfig (the brand fonts from Debian's packages); glyphs the
 * chosen font lacks (Greek, Arabic, Chinese, Japanese, Korean ...) come from the fallback fonts after it
 * (domain/brandKit.ts brandFontDescription: Noto Sans, Noto Sans Arabic, Noto Sans CJK), never drawn as empty boxes.
 */
import sharp, { type OutputInfo } from 'sharp';
import { brandFontDescription } from '../../domain/brandKit';

export interface TextStillOptions {
  /** One or more lines; each is its own paragraph. */
  lines: readonly string[];
  /** A fontconfig family name ("Inter", "Noto Sans"); the fallback fonts follow it for the glyphs it lacks. */
  fontFamily: string;
  /** #RRGGBB */
  color: string;
  /** The box the text must fit in, pixels. */
  width: number;
  height: number;
  /** Filled behind the text over the whole box (#RRGGBB), or transparent when absent. */
  background?: string;
  /** Opacity of the background, 0-1. */
  backgroundOpacity?: number;
  /** Room between the box's edge and the text, pixels. */
  padding?: number;
  /** The largest font size wanted, in points at 72 dpi (= pixels): short text is not blown up past it. */
  maxFontPx: number;
  bold?: boolean;
  align?: 'left' | 'centre' | 'right';
}

export interface TextStill {
  png: Buffer;
  width: number;
  height: number;
  /** The drawn text's own size inside the box. */
  textWidth: number;
  textHeight: number;
}

function escapeMarkup(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** The text as Pango markup: lines as paragraphs, escaped (user text is never markup). */
function markupOf(options: TextStillOptions, sizePx: number): string {
  const weight = options.bold ? ' weight="bold"' : '';
  const body = options.lines.map(escapeMarkup).join('\n');
  // size in 1024ths of a point; at 72 dpi a point is a pixel
  return `<span foreground="${options.color}" size="${Math.round(sizePx * 1024)}"${weight}>${body}</span>`;
}

async function renderText(options: TextStillOptions, innerWidth: number, innerHeight: number, fit: boolean): Promise<{ data: Buffer; info: OutputInfo }> {
  const common = {
    font: brandFontDescription(options.fontFamily, options.lines.join('\n')),
    rgba: true,
    wrap: 'word-char' as const,
    align: options.align ?? 'centre',
  };
  if (fit) {
    // width and height with no dpi: sharp (libvips) searches the dpi at which the wrapped text fills the box
    return sharp({ text: { ...common, text: escapeMarkupLines(options), width: innerWidth, height: innerHeight } }).png().toBuffer({ resolveWithObject: true });
  }
  return sharp({ text: { ...common, text: markupOf(options, options.maxFontPx), width: innerWidth, dpi: 72 } }).png().toBuffer({ resolveWithObject: true });
}

function escapeMarkupLines(options: TextStillOptions): string {
  const weight = options.bold ? ' weight="bold"' : '';
  return `<span foreground="${options.color}"${weight}>${options.lines.map(escapeMarkup).join('\n')}</span>`;
}

/** The still: the text at `maxFontPx` when it fits the box that way, else shrunk (and wrapped) until it does. */
export async function renderTextStill(options: TextStillOptions): Promise<TextStill> {
  const padding = Math.max(0, Math.round(options.padding ?? 0));
  const innerWidth = Math.max(1, options.width - 2 * padding);
  const innerHeight = Math.max(1, options.height - 2 * padding);
  let text = await renderText(options, innerWidth, innerHeight, false);
  if (text.info.height > innerHeight || text.info.width > innerWidth) text = await renderText(options, innerWidth, innerHeight, true);
  const left = padding + Math.max(0, Math.floor((innerWidth - text.info.width) / 2));
  const top = padding + Math.max(0, Math.floor((innerHeight - text.info.height) / 2));
  const alpha = options.background ? Math.min(1, Math.max(0, options.backgroundOpacity ?? 1)) : 0;
  const png = await sharp({ create: { width: options.width, height: options.height, channels: 4, background: options.background ? { ...hexToRgb(options.background), alpha } : { r: 0, g: 0, b: 0, alpha: 0 } } })
    .composite([{ input: text.data, left, top }])
    .png()
    .toBuffer();
  return { png, width: options.width, height: options.height, textWidth: text.info.width, textHeight: text.info.height };
}

function hexToRgb(hex: string): { r: number; g: number; b: number } {
  const h = /^#[0-9a-f]{6}$/i.test(hex) ? hex.slice(1) : '000000';
  return { r: parseInt(h.slice(0, 2), 16), g: parseInt(h.slice(2, 4), 16), b: parseInt(h.slice(4, 6), 16) };
}
