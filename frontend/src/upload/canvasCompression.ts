import { compressProgressively, needsCompression, scaledSize, type CompressionStep } from './compressionPlan';

function jpegName(name: string): string {
  const base = name.replace(/\.[^./\\]+$/, '');
  return `${base || 'render'}.jpg`;
}

async function encodeJpeg(image: ImageBitmap, step: CompressionStep): Promise<Blob> {
  const { width, height } = scaledSize(image.width, image.height, step.maxSide);
  const canvas = document.createElement('canvas');
  canvas.width = width;
  canvas.height = height;
  const context = canvas.getContext('2d');
  if (!context) throw new Error('Canvas is not available');
  // renders are opaque: a white ground keeps transparent pixels from turning black in JPEG
  context.fillStyle = '#ffffff';
  context.fillRect(0, 0, width, height);
  context.imageSmoothingQuality = 'high';
  context.drawImage(image, 0, 0, width, height);
  const blob = await new Promise<Blob | null>((resolve) => canvas.toBlob(resolve, 'image/jpeg', step.quality));
  canvas.width = 0;
  canvas.height = 0;
  if (!blob) throw new Error('Could not compress the image');
  return blob;
}

/**
 * Used only where a copy must be small: the try-it area keeps its image in localStorage (a few MB at most). Project
 * and draft uploads never come here: they go up as they are and the server keeps the original.
 * Images above 4 MB (or from `thresholdBytes` when given) are redrawn on a canvas as JPEG with the progressive steps of
 * compressionPlan.ts until one is under `thresholdBytes`; smaller ones and anything the browser cannot decode stay as they are.
 */
export async function compressForUpload(
  file: File,
  thresholdBytes?: number,
  /** another plan than the default steps */
  plan?: { steps: readonly CompressionStep[]; targetBytes: number },
): Promise<File> {
  if (!needsCompression(file, thresholdBytes)) return file;
  let image: ImageBitmap;
  try {
    image = await createImageBitmap(file, { imageOrientation: 'from-image' });
  } catch {
    return file;
  }
  try {
    const outcome = await compressProgressively<Blob>(file, (step) => encodeJpeg(image, step), plan?.targetBytes ?? thresholdBytes, plan?.steps);
    if (outcome.blob === file) return file;
    return new File([outcome.blob], jpegName(file.name), { type: 'image/jpeg', lastModified: file.lastModified });
  } finally {
    image.close();
  }
}
