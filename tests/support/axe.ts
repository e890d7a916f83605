/**
 * axe-core in the browser tests: the serious and critical findings on the page as it is now, on the open dialog
 * when there is one (its page is inert behind it), else on the whole document. Each finding names its impact, rule,
 * help text and up to four elements, so a failing expectation says what to fix. It first lets finite CSS animations and
 * transitions end (a dialog fading in is measured at its final colours, not half transparent), waiting 2 s at most.
 *
 * Only the rules that can find something serious or critical are run: every axe rule has an impact of its own, and
 * axe gives each of a rule's findings that impact (axe-core's finalizeRuleResult), so a rule whose impact is minor or
 * moderate (`region`, the landmark and heading rules ...) can never give one of the findings answered here. Leaving
 * them out answers the same findings with about a fifth less of axe's work (32 of axe-core 4.14's 105 rules). The
 * rules are read from the loaded axe itself, so a new axe version's rules are sorted the same way.
 */
import fs from 'node:fs';
import type { Page } from 'playwright-core';

const AXE_SOURCE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

export async function seriousAxeFindings(page: Page): Promise<string[]> {
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.evaluate(AXE_SOURCE);
  const violations = (await page.evaluate(`(async () => {
    const settling = document.getAnimations()
      .filter((a) => a.effect && Number.isFinite(a.effect.getComputedTiming().endTime))
      .map((a) => a.finished.catch(() => undefined));
    await Promise.race([Promise.all(settling), new Promise((resolve) => setTimeout(resolve, 2000))]);
    const dialog = document.querySelector('dialog[open]');
    const notSerious = window.axe._audit.rules.filter((rule) => rule.impact === 'minor' || rule.impact === 'moderate');
    const rules = Object.fromEntries(notSerious.map((rule) => [rule.id, { enabled: false }]));
    return (await window.axe.run(dialog || document, { resultTypes: ['violations'], rules })).violations;
  })()`)) as AxeViolation[];
  return violations
    .filter((v) => v.impact === 'critical' || v.impact === 'serious')
    .map((v) => `${v.impact} ${v.id} (${v.help}): ${v.nodes.map((n) => n.target.join(' ')).slice(0, 4).join(', ')}`);
}

/** No serious or critical axe finding on the page as it is now (the findings are the failure's message). */
export async function expectAxeClean(page: Page): Promise<void> {
  expect(await seriousAxeFindings(page)).toEqual([]);
}
