import { DEFAULT_EDITING_CONFIG, normalizeEditingConfig } from './assembly';
import { buildAssemblyTimeline, brandPartOf } from './assemblyTimeline';
import { LOGO_CORNERS, DEFAULT_BRAND_PARTS, TITLE_TEXT_MAX_LENGTH, boxInside, brandLayout, cleanTitleText, logoBox, normalizeBrandParts, type BrandSource } from './brandVideo';

describe('brandLayout', () => {
  it.each([
    [1080, 1920],
    [1920, 1080],
    [720, 1280],
    [1080, 1080],
  ])('keeps every box of a %i x %i output inside its safe area', (width, height) => {
    const layout = brandLayout(width, height);
    const boxes = [layout.title, layout.caption.top, layout.caption.center, layout.caption.bottom, layout.endLogo, layout.endCallToAction, layout.endContact];
    for (const box of boxes) expect(boxInside(box, layout.safe)).toBe(true);
    for (const corner of LOGO_CORNERS) for (const logo of [{ width: 400, height: 100 }, { width: 100, height: 400 }]) expect(boxInside(logoBox(layout, logo, corner, 0.3), layout.safe)).toBe(true);
    // even edges: 4:2:0 chroma never straddles the safe area's edge
    for (const n of [layout.safe.x, layout.safe.y, layout.safe.x + layout.safe.width, layout.safe.y + layout.safe.height]) expect(n % 2).toBe(0);
  });

  it('leaves out the bands Reels and TikTok cover on 9:16, and a title-safe margin on 16:9', () => {
    const portrait = brandLayout(1080, 1920).safe;
    expect(portrait.y).toBeGreaterThanOrEqual(Math.round(1920 * 0.14));
    expect(1920 - (portrait.y + portrait.height)).toBeGreaterThanOrEqual(Math.round(1920 * 0.22));
    const landscape = brandLayout(1920, 1080).safe;
    expect(landscape).toEqual({ x: 96, y: 54, width: 1728, height: 972 });
  });

  it('puts the logo in the corner asked for, its aspect kept', () => {
    const layout = brandLayout(1920, 1080);
    const box = logoBox(layout, { width: 400, height: 200 }, 'bottom-right', 0.14);
    expect(box.width / box.height).toBeCloseTo(2, 1);
    expect(box.x + box.width).toBe(layout.safe.x + layout.safe.width);
    expect(box.y + box.height).toBe(layout.safe.y + layout.safe.height);
  });
});

describe('normalizeBrandParts', () => {
  it('keeps what is left out, bounds numbers and cleans the title', () => {
    const parts = normalizeBrandParts({ logo: false, title_seconds: 9, logo_opacity: 0, title_text: '  Harbour\t View ', logo_corner: 'middle' });
    expect(parts).toEqual({ ...DEFAULT_BRAND_PARTS, logo: false, title_seconds: 3, logo_opacity: 0.2, title_text: 'Harbour View' });
    expect(normalizeBrandParts({ title_text: '   ' }).title_text).toBeNull();
  });

  it('reads a stored editing config without brand parts as all on', () => {
    const { brand: _brand, ...old } = DEFAULT_EDITING_CONFIG;
    expect(normalizeEditingConfig(old).brand).toEqual(DEFAULT_BRAND_PARTS);
  });
});

describe('non-Latin and long titles', () => {
  const brand: BrandSource = {
    primaryColor: '#1F2A44',
    secondaryColor: '#F2B134',
    font: 'Inter',
    logo: null,
    contactLines: ['海港地产有限公司', 'شركة فلل الميناء'],
    callToAction: '内覧のご予約はこちら',
    title: '',
  };

  it('keeps Japanese, Chinese and Arabic titles as they are, cut at 100 characters without splitting a character in two', () => {
    for (const title of ['ハーバー・ヴィラズ東京', '海港别墅 豪华公寓', 'فلل الميناء الفاخرة']) expect(cleanTitleText(`  ${title}\n`)).toBe(title);
    // 99 units, then an ideograph written as two (U+20BB7): cutting at 100 would keep half of it
    const cut = cleanTitleText(`${'港'.repeat(TITLE_TEXT_MAX_LENGTH - 1)}𠮷𠮷`);
    expect(cut).toBe('港'.repeat(TITLE_TEXT_MAX_LENGTH - 1));
    expect(cleanTitleText(`${'港'.repeat(TITLE_TEXT_MAX_LENGTH - 2)}𠮷𠮷`)).toBe(`${'港'.repeat(TITLE_TEXT_MAX_LENGTH - 2)}𠮷`);
    expect(normalizeBrandParts({ title_text: 'x'.repeat(150) }).title_text).toHaveLength(TITLE_TEXT_MAX_LENGTH);
  });

  it.each([
    ['tiktok', 'ハーバー・ヴィラズ東京湾岸レジデンス・ペントハウスコレクション第二期分譲住宅販売センター海港别墅豪华公寓'],
    ['youtube', 'شركة فلل الميناء الفاخرة للتطوير العقاري والاستثمار والتسويق في دبي وأبوظبي والشارقة'],
    ['tiktok', 'The Extraordinarily Long-Named Residences at Kensington Gardens Square, Penthouse Collection Two'],
  ] as const)('%s: a long title (%s) and the end card keep their text whole, in boxes inside the safe area', (platform, title) => {
    const edit = buildAssemblyTimeline({
      clips: [{ id: 'a', src: '/api/files/clips/w/a.mp4', durationSeconds: 4 }],
      platform,
      editing: normalizeEditingConfig({ brand: { title_text: title } }),
      brand: { ...brand, title },
    });
    const layout = brandLayout(edit.output.size.width, edit.output.size.height);
    const card = brandPartOf(edit, 'titleCard')!;
    const end = brandPartOf(edit, 'endCard')!;
    // the text is never shortened by the edit: the still shrinks or wraps it to its box
    expect(card.asset.text).toBe(title);
    expect(end.asset).toMatchObject({ callToAction: '内覧のご予約はこちら', contactLines: ['海港地产有限公司', 'شركة فلل الميناء'] });
    for (const box of [card.box, end.callToAction.box, end.contact.box]) expect(boxInside(box, layout.safe)).toBe(true);
    expect(card.textStyle.maxFontPx).toBeLessThan(card.box.height);
  });
});
