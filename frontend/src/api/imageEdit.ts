import { ENHANCED_IMAGE_EDITING, type ImageEditFormat, type ImageEditQuality, type ImageEditResponse } from '../../../domain/imageEdit';
import { api } from './client';

export interface ImageEditInput {
  projectId: string;
  userId: string;
  /** The render or AI image's id. */
  baseImage: string;
  prompt: string;
  imageDescription?: string;
  format: ImageEditFormat;
  quality: ImageEditQuality;
  upscaleScale: number;
}

/** POST /api/ai-image-simple's answer (000 section 7). `result` is null while the run is still going (202). */
export type { ImageEditResponse };

/** Starts an image edit and waits for it: a generation takes seconds, so the request may stay open for up to two minutes. */
export async function generateImageEdit(input: ImageEditInput): Promise<ImageEditResponse> {
  return api
    .post('ai-image-simple', {
      // a generation is not repeated behind the user's back: each try could reserve a credit
      retry: 0,
      timeout: 150_000,
      json: {
        workflow: ENHANCED_IMAGE_EDITING,
        context: { projectId: input.projectId, userId: input.userId, userIntent: input.prompt, platform: 'web' },
        parameters: {
          prompt: input.prompt,
          baseImage: input.baseImage,
          imageDescription: input.imageDescription,
          validateRefinement: true,
          format: input.format,
          quality: input.quality,
          upscaleScale: input.upscaleScale,
        },
      },
    })
    .json<ImageEditResponse>();
}
