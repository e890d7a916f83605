/**
 * Outputs can be told apart and their size claims are true (issue 32, item 4): an AI image is named by its render and
 * the prompt's first words, with a counter when the project already has that name; "upscaled 2×" with the render's
 * own framing keeps its aspect exactly (2048 × 1365 stays 2048 × 1365); a cropping format is said before it is used.
 */
import { editedImageFileName, promptLabel, withCounter } from '../../domain/itemNames';
import { imageEditOutcome, imageEditOutcomeNote } from '../../domain/imageEdit';
import { closeTestKnex } from '../support/db';
import { generateImage, startHarness, userWithRender, type Harness } from './harness';

describe('names of generated items', () => {
  it("takes the prompt's first words and adds the lowest free counter", () => {
    expect(promptLabel('  Warm dusk light, please! ')).toBe('warm dusk light, please');
    expect(promptLabel('a snowy winter evening with warm windows and smoke')).toBe('a snowy winter evening with warm');
    expect(promptLabel('???')).toBe('');
    expect(editedImageFileName('renders/mid-a.png', 'Warm dusk light', 'jpg')).toBe('mid-a — warm dusk light.jpg');
    expect(editedImageFileName('mid-a.png', ' ', 'jpg')).toBe('mid-a — AI edit.jpg');
    expect(editedImageFileName('a:b?.png', 'fog / mist', 'jpg')).toBe('a b — fog mist.jpg');
    expect(withCounter('mid-a — warm dusk light.jpg', [])).toBe('mid-a — warm dusk light.jpg');
    expect(withCounter('mid-a — warm dusk light.jpg', ['MID-A — warm dusk light.jpg'])).toBe('mid-a — warm dusk light (2).jpg');
    expect(withCounter('mid-a — warm dusk light.jpg', ['mid-a — warm dusk light.jpg', 'mid-a — warm dusk light (2).jpg'])).toBe('mid-a — warm dusk light (3).jpg');
    expect(withCounter('Zoom In (16x9).mp4', ['Zoom In (16x9).mp4'])).toBe('Zoom In (16x9) (2).mp4');
  });
});

describe('what an edit makes of a render', () => {
  it('keeps the aspect exactly with the original framing, and says a crop before it is made', () => {
    expect(imageEditOutcome({ width: 2048, height: 1365 }, 'original', 'hd', 2)).toEqual({ width: 2048, height: 1365, crop: null });
    expect(imageEditOutcome({ width: 3000, height: 2000 }, 'original', 'hd', 2)).toEqual({ width: 2048, height: 1365, crop: null });
    // a small render: twice its own sides
    expect(imageEditOutcome({ width: 800, height: 600 }, 'original', 'hd', 2)).toEqual({ width: 1600, height: 1200, crop: null });
    expect(imageEditOutcome({ width: 3000, height: 2000 }, 'square', 'hd', 2)).toEqual({ width: 2048, height: 2048, crop: { width: 2000, height: 2000 } });
    expect(imageEditOutcome({ width: 1000, height: 1000 }, 'square', 'hd', 2).crop).toBeNull();
    const square = imageEditOutcomeNote({ width: 3000, height: 2000 }, 'square', 'hd', 2);
    expect(square.result).toBe('Result: 2048 × 2048 px (made at 1024 px on the long side, upscaled 2×).');
    expect(square.crop).toBe('This format crops the 3000 × 2000 render to its centre 2000 × 2000: 33% of its width is cut. Choose “Keep original framing” to keep all of it.');
    expect(imageEditOutcomeNote({ width: 2048, height: 1365 }, 'original', 'hd', 2)).toEqual({ result: 'Result: 2048 × 1365 px (made at 1024 px on the long side, upscaled 2×).', crop: null });
  });
});

describe('AI images end to end', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness('image-names');
  });

  afterAll(async () => {
    await h?.close();
    await closeTestKnex();
  });

  it('stores 2048 × 1365 from a 2048 × 1365 render with the original framing, and names two edits of one prompt apart', async () => {
    const { user, projectId, renderId } = await userWithRender(h.baseUrl, { width: 2048, height: 1365 });
    for (let i = 0; i < 2; i += 1) {
      const res = await generateImage(h.baseUrl, user, { baseImage: renderId, projectId, prompt: 'Warm dusk light', parameters: { format: 'original' } });
      expect(res.status).toBe(200);
      expect(res.body.result.upscaledImage).toMatchObject({ width: 2048, height: 1365, scale: 2 });
    }
    const rows = (await h.knex('pending_approvals').where({ workspace_id: user.id }).orderBy('created_at').select('file_name', 'metadata', 'original_path')) as Array<{
      file_name: string;
      metadata: { width: number; height: number; originalPrompt: string };
    }>;
    expect(rows.map((r) => r.file_name)).toEqual(['harbour-render — warm dusk light.jpg', 'harbour-render — warm dusk light (2).jpg']);
    expect(rows.map((r) => [r.metadata.width, r.metadata.height])).toEqual([
      [2048, 1365],
      [2048, 1365],
    ]);
  }, 120_000);
});
