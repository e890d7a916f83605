/**
 * The specs cut some texts short with '...' ('Rejections are disabled until you purchase a credit package...'):
 * the sentence ends there, and the product says the rest. `completeSpecText` ends the sentence and adds what it
 * goes on to mean, so no '...' reaches the screen.
 */
export function completeSpecText(text: string, continuation?: string): string {
  const sentence = text.replace(/\s*(\.\.\.|…)\s*$/, '.');
  return continuation ? `${sentence} ${continuation}` : sentence;
}
