import type { JSONSchema, RelationMappings } from 'objection';
import { BaseModel, schema } from './BaseModel';
import { Project } from './Project';

export interface AestheticChatMessage {
  role: 'user' | 'assistant';
  content: string;
  [key: string]: unknown;
}

/** The aesthetic assistant's conversation and learned preferences, one row per project. */
export class AestheticChat extends BaseModel {
  static override tableName = 'aesthetic_chats';
  static override idColumn = 'project_id';
  static override touchesUpdatedAt = true;
  static override jsonAttributes = ['chatHistory', 'preferences', 'editingConfig', 'analysis', 'workflowAnalysis', 'clipSuggestions'];

  projectId!: string;
  workspaceId!: string;
  chatHistory!: AestheticChatMessage[];
  preferences!: Record<string, unknown>;
  editingConfig!: Record<string, unknown>;
  analysis!: Record<string, unknown>;
  workflowAnalysis!: Record<string, unknown>;
  clipSuggestions!: Array<Record<string, unknown>>;
  updatedAt!: Date;

  project?: Project;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['projectId', 'workspaceId'],
    properties: {
      projectId: schema.uuid,
      workspaceId: schema.uuid,
      chatHistory: {
        type: 'array',
        items: {
          type: 'object',
          required: ['role', 'content'],
          properties: { role: { type: 'string', enum: ['user', 'assistant'] }, content: { type: 'string' } },
        },
      },
      preferences: schema.jsonObject,
      editingConfig: schema.jsonObject,
      analysis: schema.jsonObject,
      workflowAnalysis: schema.jsonObject,
      clipSuggestions: { type: 'array', items: { type: 'object' } },
    },
  };

  static override relationMappings = (): RelationMappings => ({
    project: {
      relation: BaseModel.BelongsToOneRelation,
      modelClass: Project,
      join: { from: 'aesthetic_chats.project_id', to: 'projects.id' },
    },
  });
}
