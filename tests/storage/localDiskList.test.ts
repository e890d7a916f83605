/**
 * The disk storage's listing while objects are removed meanwhile (a sweep or a delete in another process): a file
 * gone between the directory read and its look is left out, as an object store's listing would leave it out, and the
 * listing does not fail (a CI run once failed a draft-upload test with ENOENT from the listing's stat).
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { LocalDiskStorage } from '../../storage/localDiskStorage';

let root: string;

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'rs-list-'));
});

afterEach(() => {
  jest.restoreAllMocks();
  fs.rmSync(root, { recursive: true, force: true });
});

it('leaves out a file removed between the directory read and its look, and lists the rest', async () => {
  const storage = new LocalDiskStorage(root);
  for (const name of ['a.png', 'b.png', 'c.png']) await storage.put('drafts', `p/${name}`, Buffer.from(name));
  const stat = fsp.stat.bind(fsp);
  // b.png goes just before the listing looks at it
  jest.spyOn(fsp, 'stat').mockImplementation(async (file, options) => {
    if (String(file).endsWith(`${path.sep}b.png`)) await fsp.rm(file, { force: true });
    return stat(file, options as never);
  });
  const listed = await storage.list('drafts', 'p');
  expect(listed.map((o) => o.path)).toEqual(['p/a.png', 'p/c.png']);
});

it('still fails on any other error of the look', async () => {
  const storage = new LocalDiskStorage(root);
  await storage.put('drafts', 'p/a.png', Buffer.from('a'));
  jest.spyOn(fsp, 'stat').mockRejectedValue(Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' }));
  await expect(storage.list('drafts', 'p')).rejects.toThrow('EACCES');
});
