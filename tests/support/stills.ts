import sharp, { type Sharp } from 'sharp';

// Stand-ins for architectural renders, drawn from SVG so tests need no image files: each returns a sharp
// pipeline at the size asked, and the caller picks the encoding.

/** Sky, lawn, a building with two windows and a door: the 800 x 450 drawing stretched to `width` x `height`. */
export function houseStill(width = 800, height = 450): Sharp {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="800" height="450" viewBox="0 0 800 450" preserveAspectRatio="none">
    <defs><linearGradient id="s" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#6fa8dc"/><stop offset="1" stop-color="#cfe2f3"/></linearGradient></defs>
    <rect width="800" height="300" fill="url(#s)"/><rect y="300" width="800" height="150" fill="#6aa84f"/>
    <rect x="250" y="120" width="300" height="200" fill="#d9d2c5"/><rect x="290" y="160" width="60" height="60" fill="#3d5a80"/>
    <rect x="450" y="160" width="60" height="60" fill="#3d5a80"/><rect x="370" y="240" width="60" height="80" fill="#7f6000"/></svg>`;
  return sharp(Buffer.from(svg)).resize(width, height);
}

/** Sky, lawn, two buildings with windows, a sun: structure in every direction, the 480 x 270 drawing at `width` x `height`. */
export function streetStill(width = 480, height = 270): Sharp {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 480 270">
    <defs><linearGradient id="s" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#3d85c6"/><stop offset="1" stop-color="#cfe2f3"/></linearGradient></defs>
    <rect width="480" height="190" fill="url(#s)"/><rect y="190" width="480" height="80" fill="#38761d"/>
    <rect x="40" y="90" width="120" height="110" fill="#e6e0d4"/><rect x="300" y="60" width="140" height="140" fill="#990000"/>
    <rect x="330" y="90" width="30" height="30" fill="#ffd966"/><rect x="380" y="90" width="30" height="30" fill="#ffd966"/>
    <circle cx="240" cy="40" r="18" fill="#fff2cc"/></svg>`;
  return sharp(Buffer.from(svg));
}

/**
 * Rows of gaussian noise made per image; a taller one repeats them. libvips spends about 50 ns per noise value (a
 * 6000 x 4000 image took 3.4 s of CPU, the 150 MB PNG 7.4 s), while repeating rows costs next to nothing. A period
 * of 256 rows is far beyond deflate's 32 KB window and JPEG's 8 x 8 blocks: the file still does not compress, so its
 * size follows the pixel count as with noise all the way down.
 */
const NOISE_ROWS = 256;

/**
 * A `width` x `height` image of gaussian noise around `mean` (new noise on every call), as a sharp pipeline for the
 * caller to encode. It ends in an extend: encode it, do not resize it (sharp resizes before it extends).
 */
export async function gaussianNoise(
  width: number,
  height: number,
  { mean = 128, sigma = 40, background = { r: 128, g: 128, b: 128 } }: { mean?: number; sigma?: number; background?: { r: number; g: number; b: number } } = {},
): Promise<Sharp> {
  const rows = Math.min(height, NOISE_ROWS);
  const band = sharp({ create: { width, height: rows, channels: 3, background, noise: { type: 'gaussian', mean, sigma } } });
  if (rows === height) return band;
  const pixels = await band.raw().toBuffer();
  return sharp(pixels, { raw: { width, height: rows, channels: 3 } }).extend({ bottom: height - rows, extendWith: 'repeat' });
}
