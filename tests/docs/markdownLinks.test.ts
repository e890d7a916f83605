/**
 * Links between the docs resolve: every relative link of README.md, CHANGELOG.md and docs/*.md names a file of
 * the repository, and every #anchor a heading of the file it points at. Links into the running app are checked
 * by tests/browser/docLinks.test.ts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { anchorsOf, appPathOf, documentationFiles, linksOf, ROOT, slug } from './markdown';

/** Broken links of the given markdown files, as `file:line target (why)`. */
function brokenLinks(files: string[]): string[] {
  const broken: string[] = [];
  for (const file of files) {
    for (const link of linksOf(file)) {
      const { target } = link;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || appPathOf(target) !== null) continue;
      const [pathPart, anchor] = target.split('#', 2);
      const resolved = pathPart === '' ? file : path.resolve(path.dirname(file), decodeURIComponent(pathPart));
      const where = `${link.file}:${link.line} ${target}`;
      if (!fs.existsSync(resolved)) {
        broken.push(`${where} (no such file)`);
        continue;
      }
      if (anchor !== undefined) {
        if (!resolved.endsWith('.md')) broken.push(`${where} (an anchor into a file that is not markdown)`);
        else if (!anchorsOf(resolved).has(anchor)) broken.push(`${where} (no heading with this anchor in ${path.relative(ROOT, resolved)})`);
      }
    }
  }
  return broken;
}

describe('links between the docs', () => {
  test('every relative link and #anchor of README.md, CHANGELOG.md and docs/*.md resolves', () => {
    expect(brokenLinks(documentationFiles())).toEqual([]);
  });

  test('README.md links into docs/ and shows its screenshots', () => {
    const targets = linksOf(path.join(ROOT, 'README.md')).map((l) => l.target);
    expect(targets.filter((t) => t.startsWith('docs/') && t.endsWith('.md')).length).toBeGreaterThanOrEqual(6);
    expect(targets.filter((t) => /^docs\/images\/.+\.(png|webp)$/.test(t)).length).toBeGreaterThanOrEqual(2);
  });

  test('the checker finds a missing file, a missing anchor and a good link as such', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-doc-links-'));
    try {
      fs.writeFileSync(path.join(dir, 'other.md'), '# Other\n\n## A `code` heading: with punctuation!\n\n## Twice\n\n## Twice\n');
      fs.writeFileSync(
        path.join(dir, 'doc.md'),
        [
          '# Doc',
          '[fine](other.md) [anchor](other.md#a-code-heading-with-punctuation) [second](other.md#twice-1) [self](#doc)',
          '[gone](missing.md) [bad anchor](other.md#nowhere) [web](https://example.com/x) [app](/api/docs)',
          '```',
          '[in code](ignored.md)',
          '```',
          'and `[inline](ignored.md)`',
        ].join('\n'),
      );
      const broken = brokenLinks([path.join(dir, 'doc.md')]).map((line) => line.replace(/^.*?:(\d+) /, '$1 '));
      expect(broken).toEqual(['3 missing.md (no such file)', expect.stringMatching(/^3 other\.md#nowhere \(no heading/)]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test("GitHub's anchors", () => {
    expect(slug('Operations: health, metrics & PromQL')).toBe('operations-health-metrics--promql');
    expect(slug('`npm start` prints')).toBe('npm-start-prints');
    expect(slug('Runbook: a user locked out')).toBe('runbook-a-user-locked-out');
  });
});
