/**
 * Activities scheduled before the workspace id rename carry the workspace as `userId`: their next attempt gets it as
 * `workspaceId` too (activities/legacyWorkspaceInput.ts), and inputs that already name it, or name nothing, pass as given.
 */
import { acceptingLegacyWorkspaceInput } from '../../activities/legacyWorkspaceInput';

describe('activity inputs recorded before the rename', () => {
  const seen: unknown[][] = [];
  const activities = acceptingLegacyWorkspaceInput({
    record: async (...args: unknown[]) => {
      seen.push(args);
      return args.length;
    },
  });

  beforeEach(() => {
    seen.length = 0;
  });

  it('gives an input that names the workspace as userId the workspaceId too', async () => {
    await activities.record({ jobId: 'j', userId: 'w-1' }, 'second');
    expect(seen).toEqual([[{ jobId: 'j', userId: 'w-1', workspaceId: 'w-1' }, 'second']]);
  });

  it('leaves inputs that name workspaceId, or no workspace, as they are', async () => {
    const current = { jobId: 'j', workspaceId: 'w-2', userId: 'person' };
    await activities.record(current);
    await activities.record('clip-1');
    await activities.record({ jobId: 'k' });
    await activities.record(null);
    expect(seen).toEqual([[current], ['clip-1'], [{ jobId: 'k' }], [null]]);
    expect(seen[0][0]).toBe(current);
  });

  it('keeps what the activity answers', async () => {
    await expect(activities.record({ userId: 'w' }, 1, 2)).resolves.toBe(3);
  });
});
