import type { JSONSchema, RelationMappings } from 'objection';
import { BaseModel, schema } from './BaseModel';
import { DraftImage } from './DraftImage';
import { DraftJob } from './DraftJob';
import { Project } from './Project';

export const DRAFT_STATUSES = ['active', 'committed'] as const;
export type DraftStatus = (typeof DRAFT_STATUSES)[number];

/** An Enhance Renders draft project; committing it links the project it became. */
export class Draft extends BaseModel {
  static override tableName = 'drafts';
  static override touchesUpdatedAt = true;

  id!: string;
  workspaceId!: string;
  name!: string;
  status!: DraftStatus;
  committedProjectId!: string | null;
  createdAt!: Date;
  updatedAt!: Date;

  images?: DraftImage[];
  jobs?: DraftJob[];
  committedProject?: Project | null;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['workspaceId', 'name'],
    properties: {
      id: schema.uuid,
      workspaceId: schema.uuid,
      name: { ...schema.nonBlank, maxLength: 200 },
      status: { type: 'string', enum: [...DRAFT_STATUSES] },
      committedProjectId: schema.nullableUuid,
    },
  };

  static override relationMappings = (): RelationMappings => ({
    images: { relation: BaseModel.HasManyRelation, modelClass: DraftImage, join: { from: 'drafts.id', to: 'draft_images.draft_id' } },
    jobs: { relation: BaseModel.HasManyRelation, modelClass: DraftJob, join: { from: 'drafts.id', to: 'draft_jobs.draft_id' } },
    committedProject: {
      relation: BaseModel.BelongsToOneRelation,
      modelClass: Project,
      join: { from: 'drafts.committed_project_id', to: 'projects.id' },
    },
  });
}
