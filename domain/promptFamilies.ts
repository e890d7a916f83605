/**
 * The prompt families the local provider understands. A prompt may name several ("a snowy night"):
 * they are returned in a fixed order, the order in which their grades are applied.
 */
export const PROMPT_FAMILIES = ['snow', 'fog', 'warm', 'bright', 'dusk', 'night'] as const;
export type PromptFamily = (typeof PROMPT_FAMILIES)[number];

const KEYWORDS: Record<PromptFamily, RegExp> = {
  snow: /\b(snow\w*|winter\w*|frost\w*|icy|blizzard|christmas)\b/,
  fog: /\b(fog\w*|mist\w*|haz[ey]|overcast|rain\w*|cloudy|moody|gloomy)\b/,
  warm: /\b(warm\w*|cozy|cosy|autumn\w*|fall|golden|amber)\b/,
  bright: /\b(bright\w*|sunny|sunshine|sunlit|daylight|daytime|summer\w*|airy|lighter|midday|noon)\b/,
  dusk: /\b(dusk|sunset\w*|twilight|dawn|sunrise|evening|golden hour)\b/,
  night: /\b(night\w*|midnight|moonlit|moonlight|after dark|dark sky|nocturnal|starry)\b/,
};

/** Phrases the rule-based refiner adds for each family. */
export const FAMILY_PHRASES: Record<PromptFamily, string> = {
  snow: 'fresh snow on roofs and ground, soft diffuse winter light, cool white balance',
  fog: 'soft atmospheric haze, overcast diffuse light, muted colours',
  warm: 'warm colour temperature, inviting amber tones',
  bright: 'bright natural daylight, lifted exposure, clear sky',
  dusk: 'dusk sky with orange and purple gradient, warm interior lights glowing',
  night: 'night scene, deep blue sky, warm interior lights and exterior lighting',
};

export function detectPromptFamilies(prompt: string): PromptFamily[] {
  const text = prompt.toLowerCase();
  return PROMPT_FAMILIES.filter((family) => KEYWORDS[family].test(text));
}
