/** '1 render', '3 renders', '0 renders': a count with its noun in the right number. */
export function countText(count: number, singular: string, plural = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : plural}`;
}
