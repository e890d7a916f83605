/** The front end's count texts: the shared plural rules (domain/plural.ts). */
export { countText, pluralWord } from '../../../domain/plural';
