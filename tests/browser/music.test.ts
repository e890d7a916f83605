/**
 * Music (issue 44, acceptance 3 and 7): the workspace's Music page (upload with progress, the list, play, rename,
 * delete; a viewer only lists and plays) and the music picker of Video Assembly (track, start, volume, fades), whose
 * choice the edit preview shows as a Music track and the chat's summary in words. At 1440x900 and 390x844, with axe
 * and no sideways scroll. The audio is made by ffmpeg in the test.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BrowserContext } from 'playwright-core';
import { loadConfig } from '../../config/env';
import { createStorage } from '../../storage';
import { createTestUser } from '../support/accounts';
import { makeAudio } from '../support/audio';
import { expectAxeClean } from '../support/axe';
import { expectNoSidewaysScroll, pageAs, startBrowserApp, type BrowserApp } from '../support/browser';
import { closeTestKnex, testKnex } from '../support/db';
import { request } from '../support/http';
import { createTeamWorkspace, joinWorkspace } from '../support/workspaces';
import { insertApprovedClips } from '../videoAssembly/clipFixtures';

const SIZES = [
  { name: 'desktop', viewport: { width: 1440, height: 900 } },
  { name: 'phone', viewport: { width: 390, height: 844 } },
] as const;

describe('Music page and the music picker', () => {
  let app: BrowserApp;
  const contexts: BrowserContext[] = [];
  let dir: string;
  let calmFile: string;
  let notAudioFile: string;

  beforeAll(async () => {
    app = await startBrowserApp();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'music-browser-'));
    calmFile = path.join(dir, 'Calm piano.mp3');
    fs.writeFileSync(calmFile, await makeAudio('mp3', { seconds: 12, channels: 2 }));
    notAudioFile = path.join(dir, 'Not a song.mp3');
    fs.writeFileSync(notAudioFile, 'These are the lyrics, not the song.\n'.repeat(40));
  });

  afterAll(async () => {
    for (const context of contexts) await context.close();
    await app?.close();
    fs.rmSync(dir, { recursive: true, force: true });
    await closeTestKnex();
  });

  for (const size of SIZES) {
    it(`a member uploads, plays, renames and deletes tracks; a viewer only plays them (${size.name})`, async () => {
      const team = await createTeamWorkspace(app.baseUrl);
      const member = await joinWorkspace(app.baseUrl, team, 'member');
      const viewer = await joinWorkspace(app.baseUrl, team, 'viewer');
      const { page, errors } = await pageAs(app, member, size.viewport, contexts);
      await page.goto(`/?view=music&workspace=${team.id}`);
      await page.getByRole('heading', { name: 'Music', level: 1 }).waitFor();
      await page.getByText('No music yet', { exact: false }).waitFor();

      await page.locator('#music-file').setInputFiles(calmFile);
      await page.getByRole('status').getByText('Calm piano added.').waitFor();
      const list = page.getByRole('list', { name: 'Music tracks' });
      await list.getByRole('heading', { name: 'Calm piano' }).waitFor();
      await list.getByText('0:12 · MP3', { exact: false }).waitFor();
      const player = list.locator('audio[aria-label="Play Calm piano"]');
      expect(await player.getAttribute('src')).toMatch(/\/api\/files\/videos\/music\/|music%2F|\/music\//);

      // a file that is not audio: the server's words, nothing added
      await page.locator('#music-file').setInputFiles(notAudioFile);
      await page.getByRole('alert').getByText('This file is not audio we can read', { exact: false }).waitFor();
      expect(await list.getByRole('listitem').count()).toBe(1);

      await list.getByRole('button', { name: 'Rename Calm piano' }).click();
      await page.getByLabel('Name of Calm piano').fill('Calm piano (sunrise)');
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      await list.getByRole('heading', { name: 'Calm piano (sunrise)' }).waitFor();
      expect((await testKnex()('music_tracks').where({ workspace_id: team.id }).first('name')).name).toBe('Calm piano (sunrise)');

      await expectNoSidewaysScroll(page);
      await expectAxeClean(page);
      await app.screenshot(`music-member-${size.name}`, page);

      const asViewer = await pageAs(app, viewer, size.viewport, contexts);
      await asViewer.page.goto(`/?view=music&workspace=${team.id}`);
      await asViewer.page.getByRole('heading', { name: 'Calm piano (sunrise)' }).waitFor();
      await asViewer.page.getByText('but not add or delete music', { exact: false }).waitFor();
      expect(await asViewer.page.locator('#music-file').count()).toBe(0);
      expect(await asViewer.page.getByRole('button', { name: 'Delete Calm piano (sunrise)' }).count()).toBe(0);
      await expectNoSidewaysScroll(asViewer.page);
      await expectAxeClean(asViewer.page);
      expect(asViewer.errors).toEqual([]);

      await list.getByRole('button', { name: 'Delete Calm piano (sunrise)' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
      await page.getByText('No music yet', { exact: false }).waitFor();
      expect(await testKnex()('music_tracks').where({ workspace_id: team.id }).first()).toBeUndefined();
      // the refused upload's 400 is the only failed request the page saw
      expect(errors.filter((e) => !/status of 400/.test(e))).toEqual([]);
    });

    it(`the assembly editor's music picker sets the track, start, volume and fades (${size.name})`, async () => {
      const user = await createTestUser(app.baseUrl, { name: 'Mia Music' });
      const project = await request<{ project: { id: string } }>(app.baseUrl, '/api/projects', { token: user.token, json: { name: 'Harbour Villas' } });
      const projectId = project.body.project.id;
      await insertApprovedClips(testKnex(), createStorage(loadConfig()), { userId: user.id, projectId }, [{ fileName: 'lobby.mp4', orientation: 'landscape', color: '#b45309' }]);
      const track = await request<{ track: { id: string } }>(app.baseUrl, `/api/workspaces/${user.id}/music?name=Calm%20piano.mp3`, {
        method: 'POST',
        token: user.token,
        body: fs.readFileSync(calmFile),
        headers: { 'content-type': 'application/octet-stream' },
      });
      expect(track.status).toBe(201);

      const { page, errors } = await pageAs(app, user, size.viewport, contexts);
      await page.goto(`/?view=video-assembly&project=${projectId}`);
      await page.getByRole('button', { name: 'Select lobby.mp4' }).click();
      const picker = page.getByRole('region', { name: 'Music', exact: true });
      await picker.getByText('No music (silent)').first().waitFor();
      await picker.getByLabel('Track').selectOption({ label: 'Calm piano' });
      await picker.getByLabel('Start at (seconds)').fill('2');
      await picker.getByLabel(/^Volume/).fill('70');
      await picker.getByLabel('Fade in (seconds)').fill('0.5');
      await picker.getByLabel('Fade out (seconds)').fill('1.5');
      await picker.getByRole('button', { name: 'Use this music' }).click();
      await picker.getByRole('status').getByText('Calm piano at 70% volume, from 0:02, fading in over 0.5 s and out over 1.5 s').waitFor();
      const chat = await testKnex()('aesthetic_chats').where({ project_id: projectId }).first('editing_config');
      expect(chat.editing_config.music).toEqual({ track_id: track.body.track.id, offset_seconds: 2, volume: 0.7, fade_in_seconds: 0.5, fade_out_seconds: 1.5 });
      // the edit preview plays it: a Music track under the video
      await page.locator('.timeline-clip-audio').first().waitFor();
      // the chat's summary says it in words
      await page.getByText('Calm piano at 70% volume', { exact: false }).first().waitFor();

      await expectNoSidewaysScroll(page);
      await expectAxeClean(page);
      await app.screenshot(`music-picker-${size.name}`, page);

      await picker.getByLabel('Track').selectOption({ label: 'No music (silent)' });
      await picker.getByRole('button', { name: 'Use this music' }).click();
      await picker.getByRole('status').getByText('No music (silent)').waitFor();
      expect((await testKnex()('aesthetic_chats').where({ project_id: projectId }).first('editing_config')).editing_config.music).toBeNull();
      expect(errors).toEqual([]);
    });
  }
});
