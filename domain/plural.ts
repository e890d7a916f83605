/**
 * Counts in words with the noun in the right number, by the language's plural rules (Intl.PluralRules), so the
 * interface never says '1 credits' or 'file(s)'. English has two forms: 'one' (1, -1) and 'other' (0, 2, 1.5).
 */
const ENGLISH = new Intl.PluralRules('en');

/** The singular or the plural form for `count`. */
export function pluralWord(count: number, singular: string, plural = `${singular}s`): string {
  return ENGLISH.select(count) === 'one' ? singular : plural;
}

/** '1 render', '3 renders', '0 renders': the count with its noun in the right number. */
export function countText(count: number, singular: string, plural = `${singular}s`): string {
  return `${count} ${pluralWord(count, singular, plural)}`;
}

/** '42 seconds', '9 minutes', '3 hours': a wait as a refusal words it (seconds up to a minute, minutes up to two hours). */
export function waitText(seconds: number): string {
  const hour = 60 * 60;
  const [n, unit] = seconds < 60 ? [seconds, 'second'] : seconds <= 2 * hour ? [Math.ceil(seconds / 60), 'minute'] : [Math.ceil(seconds / hour), 'hour'];
  return countText(n, unit);
}
