/**
 * npm start's Enhance Renders access code (scripts/lib/secrets.js ensureLocalAccessCode): generated once into
 * DATA_DIR/secrets.json beside the other secrets and reused; the environment's wins; nothing for a non-local start.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const secrets = require('../../scripts/lib/secrets') as {
  ensureLocalAccessCode: (dataDir: string, env: Record<string, string | undefined>) => { code: string | null; file: string; generated: boolean };
  ensureLocalSecrets: (dataDir: string, env: Record<string, string | undefined>) => { values: Record<string, string> };
};

describe('npm start: the Enhance Renders access code', () => {
  let dataDir: string;

  beforeEach(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-access-code-'));
  });

  afterEach(() => {
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('generates a code once, keeps it beside the secrets (0600) and reuses it', () => {
    const signing = secrets.ensureLocalSecrets(dataDir, {}).values.SIGNING_SECRET;
    const first = secrets.ensureLocalAccessCode(dataDir, {});
    expect(first.generated).toBe(true);
    expect(first.code).toMatch(/^BETA-[0-9A-F]{10}$/);
    const second = secrets.ensureLocalAccessCode(dataDir, {});
    expect(second).toEqual({ code: first.code, file: first.file, generated: false });
    const stored = JSON.parse(fs.readFileSync(first.file, 'utf8'));
    expect(stored).toEqual({ SIGNING_SECRET: signing, ENHANCE_ACCESS_CODE: first.code });
    expect(fs.statSync(first.file).mode & 0o777).toBe(0o600);
  });

  it('leaves a code set in the environment alone, and generates nothing for a start that is not local', () => {
    expect(secrets.ensureLocalAccessCode(dataDir, { ENHANCE_ACCESS_CODE: 'my-code' }).code).toBeNull();
    expect(secrets.ensureLocalAccessCode(dataDir, { NODE_ENV: 'production' }).code).toBeNull();
    expect(secrets.ensureLocalAccessCode(dataDir, { PUBLIC_URL: 'https://renders.example.com' }).code).toBeNull();
    expect(fs.existsSync(path.join(dataDir, 'secrets.json'))).toBe(false);
  });
});
