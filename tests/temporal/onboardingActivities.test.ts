import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { createOnboardingActivities, onboardingProjectId, onboardingProjectName, uuidV5 } from '../../activities/onboarding';
import { ONBOARDING_PROFILE_MISSING } from '../../workflows';
import { closeTestKnex, testKnex } from '../support/db';
import { createPersonalWorkspace } from '../../services/workspaces/personalWorkspace';

describe('onboarding activities', () => {
  afterAll(closeTestKnex);

  it('derives version-5 UUIDs as RFC 4122 specifies', () => {
    // the RFC's DNS namespace example, as computed by every uuid v5 implementation
    expect(uuidV5('www.example.com', '6ba7b810-9dad-11d1-80b4-00c04fd430c8')).toBe('2ed6657d-e927-568b-95e1-2665a8aea6a2');
    const userId = randomUUID();
    expect(onboardingProjectId(userId)).toBe(onboardingProjectId(userId));
    expect(onboardingProjectId(userId)).not.toBe(onboardingProjectId(randomUUID()));
  });

  it('names the project after the file, falling back to "My First Project"', () => {
    expect(onboardingProjectName('kitchen_render-final.jpg')).toBe('kitchen render final');
    expect(onboardingProjectName('C:\\Users\\me\\Lake House.webp')).toBe('Lake House');
    expect(onboardingProjectName('___.png')).toBe('My First Project');
    expect(onboardingProjectName('')).toBe('My First Project');
    expect(onboardingProjectName(`${'a'.repeat(200)}.png`)).toHaveLength(80);
  });

  it('creates the project once and finds it again on a retry, keeping a rename', async () => {
    const knex = testKnex();
    const email = `activity-${randomUUID()}@example.com`;
    const [user] = await knex('users').insert({ email, password_hash: 'x' }).returning<{ id: string }[]>('id');
    await createPersonalWorkspace(knex, { id: user.id, email });
    const { createOnboardingProject } = createOnboardingActivities({ knex });

    const first = await createOnboardingProject({ userId: user.id, fileName: 'villa.jpg' });
    await knex('projects').where({ id: first.projectId }).update({ name: 'Villa (renamed)' });
    const again = await createOnboardingProject({ userId: user.id, fileName: 'villa.jpg' });

    expect(first).toEqual({ projectId: onboardingProjectId(user.id), projectName: 'villa', created: true });
    expect(again).toEqual({ projectId: first.projectId, projectName: 'Villa (renamed)', created: false });
    expect(await knex('projects').where({ workspace_id: user.id }).count<{ count: string }[]>('* as count')).toEqual([{ count: '1' }]);
  });

  it('refuses a user without a profile with a non-retryable failure', async () => {
    const { createOnboardingProject } = createOnboardingActivities({ knex: testKnex() });
    const attempt = createOnboardingProject({ userId: randomUUID(), fileName: 'x.jpg' });
    await expect(attempt).rejects.toBeInstanceOf(ApplicationFailure);
    await expect(attempt).rejects.toMatchObject({ type: ONBOARDING_PROFILE_MISSING, nonRetryable: true });
  });
});
