import { createHash } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import type { Knex } from 'knex';
import { Project } from '../db/models/Project';
import { textInputProblem } from '../domain/textInput';
import { ONBOARDING_INVALID_INPUT, ONBOARDING_PROFILE_MISSING } from '../domain/workflowContracts/tryItOnboarding';
import type { ActivityDeps } from './deps';

export const DEFAULT_ONBOARDING_PROJECT_NAME = 'My First Project';
const MAX_PROJECT_NAME_LENGTH = 80;

/** Fixed namespace of the name-based (v5) ids of onboarding projects. Never change it: ids already stored depend on it. */
const ONBOARDING_PROJECT_NAMESPACE = '0b4f9a8e-6f8c-4d0e-9a43-3c2a5f1d7e21';

export interface CreateOnboardingProjectInput {
  userId: string;
  fileName: string;
}

export interface CreateOnboardingProjectResult {
  projectId: string;
  projectName: string;
  /** false when an earlier attempt or run had already created the project */
  created: boolean;
}

/** RFC 4122 version-5 (SHA-1, name-based) UUID. */
export function uuidV5(name: string, namespace: string): string {
  const hash = createHash('sha1').update(Buffer.from(namespace.replace(/-/g, ''), 'hex')).update(name, 'utf8').digest();
  const bytes = hash.subarray(0, 16);
  bytes[6] = (bytes[6] & 0x0f) | 0x50;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The first project's id is derived from the user id, so a retried activity or a re-run of the onboarding
 * workflow finds the project it already made instead of creating a second one.
 */
export function onboardingProjectId(userId: string): string {
  return uuidV5(`onboarding:${userId}`, ONBOARDING_PROJECT_NAMESPACE);
}

/** "kitchen_render-final.v2.jpg" -> "kitchen render final.v2"; nothing usable -> "My First Project". */
export function onboardingProjectName(fileName: string): string {
  const base = fileName.replace(/^.*[\\/]/, '').replace(/\.[A-Za-z0-9]{1,5}$/, '');
  const words = base.replace(/[_-]+/g, ' ').replace(/\s+/g, ' ').trim();
  if (!/[\p{L}\p{N}]/u.test(words)) return DEFAULT_ONBOARDING_PROJECT_NAME;
  return words.length > MAX_PROJECT_NAME_LENGTH ? words.slice(0, MAX_PROJECT_NAME_LENGTH).trimEnd() : words;
}

const PG_FOREIGN_KEY_VIOLATION = '23503';

function pgCode(err: unknown): string | null {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : null;
}

function invalidInput(message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: ONBOARDING_INVALID_INPUT, message, nonRetryable: true });
}

async function createOnboardingProjectIn(knex: Knex, input: CreateOnboardingProjectInput): Promise<CreateOnboardingProjectResult> {
  // the API refuses such text already; a workflow started any other way must fail at once, not retry
  const problem = textInputProblem(input.fileName, 'single-line');
  if (problem) throw invalidInput(`The file name ${problem}`);
  const id = onboardingProjectId(input.userId);
  const name = onboardingProjectName(input.fileName);
  try {
    // the project goes into the user's personal workspace, whose account row (profiles) holds its credits
    if (!(await knex('profiles').where({ id: input.userId }).first('id'))) throw profileMissing(input.userId);
    const inserted = await knex('projects')
      .insert({ id, workspace_id: input.userId, name })
      .onConflict('id')
      .ignore()
      .returning<{ id: string }[]>('id');
    // on conflict nothing is inserted; read back what the first run stored (the user may have renamed it since)
    const project = await Project.query(knex).findById(id).where('workspace_id', input.userId);
    if (!project) throw new Error(`onboarding project ${id} neither inserted nor found for user ${input.userId}`);
    return { projectId: project.id, projectName: project.name, created: inserted.length > 0 };
  } catch (err) {
    // PostgreSQL class 22: a value it cannot take as data (bad encoding, bad uuid text ...)
    if (pgCode(err)?.startsWith('22')) throw invalidInput('The onboarding input is not valid');
    if (pgCode(err) === PG_FOREIGN_KEY_VIOLATION) throw profileMissing(input.userId);
    throw err;
  }
}

function profileMissing(userId: string): ApplicationFailure {
  return ApplicationFailure.create({ type: ONBOARDING_PROFILE_MISSING, message: `No profile for user ${userId}`, nonRetryable: true });
}

export function createOnboardingActivities(deps: Pick<ActivityDeps, 'knex'>) {
  return {
    /** Creates the user's first project from the try-it file name, at most once per user. */
    createOnboardingProject: (input: CreateOnboardingProjectInput): Promise<CreateOnboardingProjectResult> =>
      createOnboardingProjectIn(deps.knex, input),
  };
}
