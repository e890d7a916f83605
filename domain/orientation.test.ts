import { aspectRatioLabel, clipOrientation } from './orientation';

describe('clipOrientation (spec 001 section 5)', () => {
  describe('1. the file name decides first', () => {
    it.each([
      ['tour-portrait.mp4', 'portrait'],
      ['Tour VERTICAL cut.mp4', 'portrait'],
      ['lobby_9-16.mp4', 'portrait'],
      ['tour-landscape.mp4', 'landscape'],
      ['Horizontal pan.mp4', 'landscape'],
      ['lobby 16-9.mp4', 'landscape'],
    ])('%s is %s, whatever the analysis and ratio say', (fileName, expected) => {
      const opposite = expected === 'portrait' ? { analysisAspectRatio: '16:9', aspectRatio: 1.78 } : { analysisAspectRatio: '9:16', aspectRatio: 0.56 };
      expect(clipOrientation({ fileName, ...opposite })).toBe(expected);
    });

    it('reads the portrait words before the landscape words', () => {
      expect(clipOrientation({ fileName: 'portrait-from-landscape.mp4' })).toBe('portrait');
    });

    it('does not take 9x16 or 16x9 in a name as the rule words', () => {
      expect(clipOrientation({ fileName: 'Harbour - Zoom In (9x16).mp4' })).toBe('landscape');
      expect(clipOrientation({ fileName: 'Harbour - Zoom In (9x16).mp4', analysisAspectRatio: '9:16' })).toBe('portrait');
    });
  });

  describe('2. then the analysis aspectRatio', () => {
    it.each([
      ['16:9', 'landscape'],
      ['4:3', 'landscape'],
      ['9:16', 'portrait'],
      [' 9:16 ', 'portrait'],
    ])('%s is %s over the stored ratio', (analysisAspectRatio, expected) => {
      const opposite = expected === 'portrait' ? 2 : 0.5;
      expect(clipOrientation({ fileName: 'clip.mp4', analysisAspectRatio, aspectRatio: opposite })).toBe(expected);
    });

    it('passes any other analysis ratio on to the stored ratio', () => {
      expect(clipOrientation({ fileName: 'clip.mp4', analysisAspectRatio: '1:1', aspectRatio: 0.5 })).toBe('portrait');
      expect(clipOrientation({ fileName: 'clip.mp4', analysisAspectRatio: '4:5', aspectRatio: '21:9' })).toBe('landscape');
    });
  });

  describe('3. then aspect_ratio as text or number', () => {
    it.each([
      [1.78, 'landscape'],
      [1.21, 'landscape'],
      [0.79, 'portrait'],
      [0.5625, 'portrait'],
      ['16:9', 'landscape'],
      ['9:16', 'portrait'],
      ['3/2', 'landscape'],
      ['4x5', 'landscape'], // 0.8 is not below 0.8: the default
      ['2:3', 'portrait'],
      ['1.5', 'landscape'],
      ['0.6', 'portrait'],
      ['portrait', 'portrait'],
      ['Landscape', 'landscape'],
    ])('%p is %s', (aspectRatio, expected) => {
      expect(clipOrientation({ fileName: 'clip.mp4', aspectRatio })).toBe(expected);
    });

    it('keeps the bounds themselves (1.2 and 0.8) out of both sides: the default, landscape', () => {
      expect(clipOrientation({ aspectRatio: 1.2 })).toBe('landscape');
      expect(clipOrientation({ aspectRatio: 0.8 })).toBe('landscape');
      expect(clipOrientation({ aspectRatio: 1 })).toBe('landscape');
      expect(clipOrientation({ aspectRatio: 'square' })).toBe('landscape');
    });
  });

  describe('4. the default', () => {
    it('is landscape with nothing to go by or nothing readable', () => {
      expect(clipOrientation({})).toBe('landscape');
      expect(clipOrientation({ fileName: null, analysisAspectRatio: null, aspectRatio: null })).toBe('landscape');
      expect(clipOrientation({ aspectRatio: Number.NaN })).toBe('landscape');
      expect(clipOrientation({ aspectRatio: '' })).toBe('landscape');
      expect(clipOrientation({ aspectRatio: 'wide' })).toBe('landscape');
    });
  });
});

describe('aspectRatioLabel', () => {
  it('names the nearest listed ratio', () => {
    expect(aspectRatioLabel(1920, 1080)).toBe('16:9');
    expect(aspectRatioLabel(1080, 1920)).toBe('9:16');
    expect(aspectRatioLabel(800, 1000)).toBe('4:5');
    expect(aspectRatioLabel(2560, 1080)).toBe('21:9');
  });
});
