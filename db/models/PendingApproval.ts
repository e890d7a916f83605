import type { JSONSchema, RelationMappings } from 'objection';
import { BaseModel, schema } from './BaseModel';
import { Project } from './Project';

export const APPROVAL_CONTENT_TYPES = ['image', 'clip', 'assembly'] as const;
export type ApprovalContentType = (typeof APPROVAL_CONTENT_TYPES)[number];
export const APPROVAL_STATUSES = ['pending', 'approved', 'rejected', 'expired'] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

/** A generated item waiting in the approval queue; its approval workflow is `workflowId`. */
export class PendingApproval extends BaseModel {
  static override tableName = 'pending_approvals';
  static override jsonAttributes = ['metadata', 'approvalPolicy'];

  id!: string;
  /** the owning workspace (its account) */
  workspaceId!: string;
  /** the member who started it; null once their account is deleted */
  createdBy!: string | null;
  projectId!: string;
  contentType!: ApprovalContentType;
  status!: ApprovalStatus;
  aspectRatio!: string | null;
  fileName!: string;
  originalBucket!: string;
  originalPath!: string;
  watermarkedBucket!: string;
  watermarkedPath!: string;
  thumbnailPath!: string | null;
  approvalDeadline!: Date;
  cost!: number;
  remainingCost!: number;
  reservationId!: string | null;
  workflowId!: string;
  sourceJobId!: string | null;
  metadata!: Record<string, unknown>;
  /** the approval policy it started with (domain/approvalPolicy.ts); null on items from before policies */
  approvalPolicy!: Record<string, unknown> | null;
  contentId!: string | null;
  createdAt!: Date;
  decidedAt!: Date | null;
  /** who made the final decision (the approval that met the policy, or the rejection); null for expiry */
  decidedBy!: string | null;
  /** 1, or the next version of the item a "request changes" rejected (previousApprovalId) */
  version!: number;
  previousApprovalId!: string | null;

  project?: Project;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: [
      'workspaceId',
      'projectId',
      'contentType',
      'fileName',
      'originalBucket',
      'originalPath',
      'watermarkedBucket',
      'watermarkedPath',
      'approvalDeadline',
      'cost',
      'remainingCost',
      'workflowId',
    ],
    properties: {
      id: schema.uuid,
      workspaceId: schema.uuid,
      createdBy: schema.nullableUuid,
      projectId: schema.uuid,
      contentType: { type: 'string', enum: [...APPROVAL_CONTENT_TYPES] },
      status: { type: 'string', enum: [...APPROVAL_STATUSES] },
      aspectRatio: schema.nullableText,
      fileName: schema.nonBlank,
      originalBucket: schema.nonBlank,
      originalPath: schema.nonBlank,
      watermarkedBucket: schema.nonBlank,
      watermarkedPath: schema.nonBlank,
      thumbnailPath: schema.nullableText,
      cost: schema.nonNegativeInt,
      remainingCost: schema.nonNegativeInt,
      reservationId: schema.nullableUuid,
      workflowId: schema.nonBlank,
      sourceJobId: schema.nullableText,
      metadata: schema.jsonObject,
      approvalPolicy: { type: ['object', 'null'] },
      contentId: schema.nullableText,
      version: { type: 'integer', minimum: 1 },
      previousApprovalId: schema.nullableUuid,
    },
  };

  static override relationMappings = (): RelationMappings => ({
    project: {
      relation: BaseModel.BelongsToOneRelation,
      modelClass: Project,
      join: { from: 'pending_approvals.project_id', to: 'projects.id' },
    },
  });
}
