import type { JSONSchema } from 'objection';
import { BaseModel, schema } from './BaseModel';

/**
 * A "request changes" on a pending item (services/review/changeRequests.ts): the item rejected, the request kept in
 * its thread, and the job started from the same source whose item is the item's next version.
 */
export class ChangeRequest extends BaseModel {
  static override tableName = 'change_requests';
  static override jsonAttributes = ['settings'];

  id!: string;
  workspaceId!: string;
  /** the rejected item */
  approvalId!: string;
  requestedBy!: string | null;
  /** the comment that holds the request */
  commentId!: string | null;
  request!: string;
  settings!: Record<string, unknown>;
  nextJobKind!: 'image' | 'clip';
  nextJobId!: string;
  /** the next version, once its job made it */
  nextApprovalId!: string | null;
  /** why the new job could not start */
  startError!: string | null;
  createdAt!: Date;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['workspaceId', 'approvalId', 'request', 'settings', 'nextJobKind', 'nextJobId'],
    properties: {
      id: schema.uuid,
      workspaceId: schema.uuid,
      approvalId: schema.uuid,
      requestedBy: schema.nullableUuid,
      commentId: schema.nullableUuid,
      request: schema.nonBlank,
      settings: schema.jsonObject,
      nextJobKind: { type: 'string', enum: ['image', 'clip'] },
      nextJobId: schema.uuid,
      nextApprovalId: schema.nullableUuid,
      startError: schema.nullableText,
    },
  };
}
