/**
 * The stills of an assembly's render (issue 44): the captions (brand and plain) and the brand parts, each drawn once
 * as a PNG the size of its box, then overlaid (captions, title card, logo) or looped (end card) by the one ffmpeg run.
 * Text through textStill.ts (shrunk then wrapped to fit its box, never cut off); the logo scaled with its opacity put
 * into its alpha. No policy: the timeline says what goes where.
 */
import sharp, { type OverlayOptions } from 'sharp';
import type { TextStyle } from '../../domain/assemblyTimeline';
import { renderTextStill } from './textStill';

/** A text still: the edit's text style (domain/assemblyTimeline.ts), its lines and its box. */
export interface StillText extends TextStyle {
  lines: readonly string[];
  width: number;
  height: number;
}

/**
 * Text in a box: the text fitted inside a padding, the style's background over the whole box, or (backgroundFit
 * 'text') a band that hugs the text, or none (transparent).
 */
export async function textStillPng(text: StillText): Promise<Buffer> {
  const padding = Math.round(Math.min(text.width, text.height) * 0.08);
  const band = text.background !== null && text.backgroundFit === 'text';
  const still = await renderTextStill({
    lines: text.lines,
    fontFamily: text.font,
    color: text.color,
    width: text.width,
    height: text.height,
    ...(text.background && !band ? { background: text.background, backgroundOpacity: text.backgroundOpacity } : {}),
    padding,
    maxFontPx: text.maxFontPx,
    bold: text.bold,
    align: 'centre',
  });
  if (!band || !text.background) return still.png;
  // the band: the text's size and a margin of a third of the font size on each side, centred in the box as the text is
  const margin = Math.round(text.maxFontPx / 3);
  const width = Math.min(text.width, still.textWidth + 2 * margin);
  const height = Math.min(text.height, still.textHeight + 2 * margin);
  const alpha = Math.min(1, Math.max(0, text.backgroundOpacity));
  const fill = await sharp({ create: { width, height, channels: 4, background: { ...rgbOf(text.background), alpha } } }).png().toBuffer();
  return sharp({ create: { width: text.width, height: text.height, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } })
    .composite([
      { input: fill, left: Math.floor((text.width - width) / 2), top: Math.floor((text.height - height) / 2) },
      { input: still.png, left: 0, top: 0 },
    ])
    .png()
    .toBuffer();
}

function rgbOf(hex: string): { r: number; g: number; b: number } {
  const h = /^#[0-9a-f]{6}$/i.test(hex) ? hex.slice(1) : '000000';
  return { r: parseInt(h.slice(0, 2), 16), g: parseInt(h.slice(2, 4), 16), b: parseInt(h.slice(4, 6), 16) };
}

/** The logo PNG scaled to exactly `width` x `height` (the timeline kept its aspect), every pixel's alpha times `opacity`. */
export async function logoStillPng(logo: Buffer, width: number, height: number, opacity: number): Promise<Buffer> {
  const { data, info } = await sharp(logo).ensureAlpha().resize(width, height, { fit: 'fill' }).raw().toBuffer({ resolveWithObject: true });
  const factor = Math.min(1, Math.max(0, opacity));
  for (let i = 3; i < data.length; i += 4) data[i] = Math.round(data[i] * factor);
  return sharp(data, { raw: { width: info.width, height: info.height, channels: 4 } }).png().toBuffer();
}

export interface EndCardStill {
  width: number;
  height: number;
  background: string;
  logo: { png: Buffer; box: { x: number; y: number; width: number; height: number } } | null;
  texts: Array<StillText & { x: number; y: number }>;
}

/** The end card: a full frame of the background colour, the logo fitted (aspect kept) and centred in its box, then the texts. */
export async function endCardPng(card: EndCardStill): Promise<Buffer> {
  const layers: OverlayOptions[] = [];
  if (card.logo) {
    const { box } = card.logo;
    const { data, info } = await sharp(card.logo.png).ensureAlpha().resize(box.width, box.height, { fit: 'inside' }).png().toBuffer({ resolveWithObject: true });
    layers.push({ input: data, left: box.x + Math.floor((box.width - info.width) / 2), top: box.y + Math.floor((box.height - info.height) / 2) });
  }
  for (const text of card.texts) {
    if (text.lines.every((line) => !line.trim())) continue;
    layers.push({ input: await textStillPng(text), left: text.x, top: text.y });
  }
  return sharp({ create: { width: card.width, height: card.height, channels: 3, background: card.background } })
    .composite(layers)
    .png()
    .toBuffer();
}
