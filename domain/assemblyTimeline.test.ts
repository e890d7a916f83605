import { ASSEMBLY_FORMATS, DEFAULT_EDITING_CONFIG, normalizeEditingConfig, parseAssemblyPlatform, platformForAspect, cannotMixMessage, type EditingConfig } from './assembly';
import {
  PLAIN_CAPTION_FONT,
  assemblyFilterGraph,
  buildAssemblyTimeline,
  captionHasStill,
  captionTrackOf,
  previewSize,
  videoTrackOf,
  type AssemblyEdit,
  type CaptionTimelineClip,
} from './assemblyTimeline';
import { BRAND_FONT_FAMILIES } from './brandKit';
import { boxInside, brandLayout, type BrandSource } from './brandVideo';

const clip = (id: string, durationSeconds = 5) => ({ id, src: `/api/files/clips/u/${id}/clip.mp4`, durationSeconds });

describe('buildAssemblyTimeline', () => {
  it('overlaps each pair of clips by the transition and lasts the sum minus the overlaps', () => {
    const edit = buildAssemblyTimeline({ clips: [clip('a'), clip('b'), clip('c')], platform: 'youtube', editing: DEFAULT_EDITING_CONFIG });
    const video = videoTrackOf(edit);
    expect(video.map((c) => [c.start, c.length])).toEqual([[0, 5], [4.5, 5], [9, 5]]);
    expect(edit.totalDuration).toBe(14);
    expect(video[0].transition).toEqual({ out: 'fade' });
    expect(video[1].transition).toEqual({ in: 'fade', out: 'fade' });
    expect(video[2].transition).toEqual({ in: 'fade' });
    expect(edit.output).toEqual({ format: 'mp4', fps: 30, size: { width: 1920, height: 1080 }, aspectRatio: '16:9', platform: 'youtube' });
    expect(edit.timeline.tracks).toHaveLength(1);
  });

  it('has no transition for a single clip, and a portrait output for tiktok', () => {
    const edit = buildAssemblyTimeline({ clips: [clip('a', 3)], platform: 'tiktok', editing: DEFAULT_EDITING_CONFIG });
    expect(videoTrackOf(edit)[0]).not.toHaveProperty('transition');
    expect(edit.totalDuration).toBe(3);
    expect(edit.output.size).toEqual({ width: 1080, height: 1920 });
  });

  it('follows pacing: energetic cuts clips to 3 s with quick transitions, calm plays them whole with long ones', () => {
    const energetic = normalizeEditingConfig({ pacing: 'energetic' });
    const calm = normalizeEditingConfig({ pacing: 'calm' });
    const clips = [clip('a'), clip('b')];
    expect(buildAssemblyTimeline({ clips, platform: 'youtube', editing: energetic }).totalDuration).toBe(5.75);
    expect(buildAssemblyTimeline({ clips, platform: 'youtube', editing: calm }).totalDuration).toBe(9);
  });

  it('never overlaps more than half of a clip, and lets the editor override a junction', () => {
    const editing: EditingConfig = { ...DEFAULT_EDITING_CONFIG, transition_duration: 2 };
    const edit = buildAssemblyTimeline({ clips: [clip('a', 1), clip('b', 4), clip('c', 4)], platform: 'youtube', editing, transitions: [null, { type: 'wipeleft', duration: 0.3 }] });
    const video = videoTrackOf(edit);
    expect(video[1].transitionSeconds).toEqual({ in: 0.5, out: 0.3 });
    expect(video[1].transition).toEqual({ in: 'fade', out: 'wipeLeft' });
    expect(edit.totalDuration).toBe(1 + 4 + 4 - 0.5 - 0.3);
  });

  it('puts captions on a track above the video, shown while their clip is alone on screen', () => {
    const editing = normalizeEditingConfig({ captions: ['First', '', 'Third'], caption_position: 'top' });
    const edit = buildAssemblyTimeline({ clips: [clip('a', 2), clip('b', 2), clip('c', 2)], platform: 'youtube', editing });
    expect(edit.timeline.tracks).toHaveLength(2);
    expect(captionTrackOf(edit).map((c) => [c.clipId, c.asset.text, c.start, c.length, c.asset.position])).toEqual([
      ['a', 'First', 0, 1.5, 'top'],
      ['c', 'Third', 3.5, 1.5, 'top'],
    ]);
  });

  const LONG = 'The Extraordinarily Long-Named Residences at Kensington Gardens, Penthouse Suite';
  const CJK = '海景别墅，步行即可到达港口';
  const ARABIC = 'فلل الميناء الفاخرة مع إطلالة على البحر';

  it.each(ASSEMBLY_FORMATS)('gives plain captions (no kit) the caption box of their position inside the %s safe area, white on a 45%% black band', (format) => {
    for (const position of ['top', 'center', 'bottom'] as const) {
      const editing = normalizeEditingConfig({ captions: [LONG, CJK, ARABIC], caption_position: position });
      const edit = buildAssemblyTimeline({ clips: [clip('a'), clip('b'), clip('c')], platform: 'tiktok', format, editing });
      const { width, height } = edit.output.size;
      const layout = brandLayout(width, height);
      const captions = captionTrackOf(edit);
      // the text whole (the still shrinks or wraps it), the edit still saying the captions are plain
      expect(captions.map((c) => [c.asset.text, c.asset.style])).toEqual([
        [LONG, 'minimal'],
        [CJK, 'minimal'],
        [ARABIC, 'minimal'],
      ]);
      for (const caption of captions) {
        expect(captionHasStill(caption)).toBe(true);
        expect(caption.box).toEqual(layout.caption[position]);
        expect(boxInside(caption.box!, layout.safe)).toBe(true);
        expect(boxInside(caption.box!, { x: 0, y: 0, width, height })).toBe(true);
        expect(caption.textStyle).toEqual({ font: PLAIN_CAPTION_FONT, color: '#FFFFFF', background: '#000000', backgroundOpacity: 0.45, backgroundFit: 'text', maxFontPx: layout.captionMaxFontPx, bold: false });
        // the largest size leaves room in the box: one line fits with the band's margin
        expect(caption.textStyle!.maxFontPx * 2).toBeLessThan(caption.box!.height);
      }
    }
  });

  it('draws plain captions in an installed font (the CJK and Arabic fallbacks follow it)', () => {
    expect(BRAND_FONT_FAMILIES).toContain(PLAIN_CAPTION_FONT);
  });

  it('keeps brand captions in the kit\'s font and accent colour over the whole box, and plain ones when brand captions are off', () => {
    const brand: BrandSource = { primaryColor: '#1F2A44', secondaryColor: '#F2B134', font: 'Lato', logo: null, contactLines: [], callToAction: '', title: '' };
    const parts = { title_card: false, end_card: false, logo: false };
    const branded = buildAssemblyTimeline({ clips: [clip('a')], platform: 'youtube', editing: normalizeEditingConfig({ captions: [CJK], brand: parts }), brand });
    const layout = brandLayout(1920, 1080);
    expect(captionTrackOf(branded)[0]).toMatchObject({
      asset: { style: 'brand' },
      box: layout.caption.bottom,
      textStyle: { font: 'Lato', color: '#F2B134', background: '#000000', backgroundOpacity: 0.55, bold: true },
    });
    expect(captionTrackOf(branded)[0].textStyle).not.toHaveProperty('backgroundFit');
    const off = buildAssemblyTimeline({ clips: [clip('a')], platform: 'youtube', editing: normalizeEditingConfig({ captions: [CJK], brand: { ...parts, captions: false } }), brand });
    expect(captionTrackOf(off)[0]).toMatchObject({ asset: { style: 'minimal' }, box: layout.caption.bottom, textStyle: { font: PLAIN_CAPTION_FONT, color: '#FFFFFF', backgroundFit: 'text' } });
  });

  it('refuses an empty selection and a clip without duration', () => {
    expect(() => buildAssemblyTimeline({ clips: [], platform: 'youtube', editing: DEFAULT_EDITING_CONFIG })).toThrow();
    expect(() => buildAssemblyTimeline({ clips: [clip('a', 0)], platform: 'youtube', editing: DEFAULT_EDITING_CONFIG })).toThrow();
  });
});

describe('assemblyFilterGraph', () => {
  it('is one graph: scale/pad per input, xfade at each clip start, each caption overlaid from its still, ending in [vout]', () => {
    const editing = normalizeEditingConfig({ transition: 'slideLeft', captions: ['Hello', '海景别墅，步行即可到达港口'] });
    const edit = buildAssemblyTimeline({ clips: [clip('a', 2), clip('b', 2)], platform: 'tiktok', editing });
    const [first, second] = captionTrackOf(edit);
    const graph = assemblyFilterGraph(edit, { brandStills: { captions: [2, 3] } });
    expect(graph).toContain('[0:v]trim=duration=2,setpts=PTS-STARTPTS,scale=1080:1920:force_original_aspect_ratio=decrease,pad=1080:1920');
    expect(graph).toContain('[c0][c1]xfade=transition=slideleft:duration=0.5:offset=1.5[x1]');
    expect(graph).toContain(`[x1][2:v]overlay=x=${first.box!.x}:y=${first.box!.y}:format=auto:enable='between(t,0,1.5)'[o0]`);
    expect(graph).toContain(`[o0][3:v]overlay=x=${second.box!.x}:y=${second.box!.y}:format=auto:enable='between(t,2,3.5)'[o1]`);
    expect(graph).not.toContain('drawtext');
    expect(graph.endsWith('[vout]')).toBe(true);
    // a caption without its still is refused, never left out
    expect(() => assemblyFilterGraph(edit)).toThrow('caption 0 needs its still');
    expect(() => assemblyFilterGraph(edit, { brandStills: { captions: [2] } })).toThrow('caption 1 needs its still');
  });

  it("still draws a recorded timeline's plain captions without a box with drawtext, from their text files", () => {
    // a timeline recorded in assembly_jobs.options before plain captions were stills: its plain captions have no box
    const editing = normalizeEditingConfig({ captions: ['Hello', 'World'], caption_position: 'top' });
    const built = buildAssemblyTimeline({ clips: [clip('a', 2), clip('b', 2)], platform: 'youtube', editing });
    const recorded = JSON.parse(JSON.stringify(built)) as AssemblyEdit;
    const captions = recorded.timeline.tracks[0].clips as CaptionTimelineClip[];
    for (const caption of captions) {
      delete caption.box;
      delete caption.textStyle;
    }
    expect(captionTrackOf(recorded).map(captionHasStill)).toEqual([false, false]);
    const graph = assemblyFilterGraph(recorded, { captionFiles: ['/tmp/x/caption-0.txt', "/tmp/x/it's-1.txt"] });
    expect(graph).toContain("[x1]drawtext=textfile='/tmp/x/caption-0.txt':fontsize=60:fontcolor=white:box=1:boxcolor=black@0.45");
    expect(graph).toContain(":y=h*0.08:enable='between(t,0,1.5)',drawtext=textfile='/tmp/x/its-1.txt'");
    expect(graph).not.toContain('overlay=x=');
    expect(() => assemblyFilterGraph(recorded)).toThrow('caption 0 needs its text file');
    expect(() => assemblyFilterGraph(recorded, { captionFiles: [undefined, '/tmp/x/caption-1.txt'] })).toThrow('caption 0 needs its text file');
  });

  it('adds the half-size watermarked preview as a second output of the same graph', () => {
    const edit = buildAssemblyTimeline({ clips: [clip('a', 2), clip('b', 2)], platform: 'youtube', editing: DEFAULT_EDITING_CONFIG });
    expect(previewSize(edit)).toEqual({ width: 960, height: 540 });
    const graph = assemblyFilterGraph(edit, { preview: { overlayInput: 2, ...previewSize(edit) } });
    expect(graph).toContain('[vfinal]split=2[vout][vp]');
    expect(graph).toContain('[vp]scale=960:540:flags=fast_bilinear[vps];[vps][2:v]overlay=0:0:format=auto,format=yuv420p[vprev]');
  });
});

describe('assembly rules', () => {
  it('maps platforms as the spec says: 9:16 gives tiktok, otherwise youtube', () => {
    expect(platformForAspect('9:16')).toBe('tiktok');
    expect(platformForAspect('16:9')).toBe('youtube');
    expect(platformForAspect('1:1')).toBe('youtube');
    expect(platformForAspect(null)).toBe('youtube');
    expect(['youtube', 'TikTok', 'portrait', 'landscape', 'square'].map(parseAssemblyPlatform)).toEqual(['youtube', 'tiktok', 'tiktok', 'youtube', null]);
  });

  it('words the mix refusal with the selection\'s family first', () => {
    expect(cannotMixMessage('portrait', 'landscape')).toBe('Cannot mix portrait and landscape clips. Please select clips of the same aspect ratio.');
  });

  it('normalizes any editing config: unknown values fall back, bounds hold, captions are cleaned', () => {
    const config = normalizeEditingConfig({ transition: 'Wipe-Left', pacing: 'frantic', transition_duration: 9, captions: ['  a\nb  ', 'x'.repeat(200)], caption_position: 'side' });
    expect(config).toMatchObject({ transition: 'wipeLeft', pacing: 'balanced', transition_duration: 2, caption_position: 'bottom' });
    expect(config.captions[0]).toBe('a b');
    expect(config.captions[1]).toHaveLength(80);
    expect(normalizeEditingConfig('nonsense')).toEqual(DEFAULT_EDITING_CONFIG);
    expect(normalizeEditingConfig({ captions: ['', ' '] }).captions).toEqual([]);
  });
});
