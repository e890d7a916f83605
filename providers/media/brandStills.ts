/**
 * The brand parts' stills for an assembly's render (issue 44): each drawn once as a PNG the size of its box, then
 * overlaid (captions, title card, logo) or looped (end card) by the one ffmpeg run. Text through textStill.ts (shrunk
 * then wrapped to fit its box, never cut off); the logo scaled with its opacity put into its alpha. No policy: the
 * timeline says what goes where.
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

/** Text in a box: the style's background over the whole box (or transparent), the text fitted inside a padding. */
export async function textStillPng(text: StillText): Promise<Buffer> {
  const padding = Math.round(Math.min(text.width, text.height) * 0.08);
  const still = await renderTextStill({
    lines: text.lines,
    fontFamily: text.font,
    color: text.color,
    width: text.width,
    height: text.height,
    ...(text.background ? { background: text.background, backgroundOpacity: text.backgroundOpacity } : {}),
    padding,
    maxFontPx: text.maxFontPx,
    bold: text.bold,
    align: 'centre',
  });
  return still.png;
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
