import type { JSONSchema } from 'objection';
import { MUSIC_FORMATS, MUSIC_MAX_BYTES, MUSIC_NAME_MAX_LENGTH } from '../../domain/music';
import { BaseModel, schema } from './BaseModel';

/** A workspace's music track (services/content/musicTracks.ts); the file is in the videos bucket under music/<workspaceId>/. */
export class MusicTrack extends BaseModel {
  static override tableName = 'music_tracks';

  id!: string;
  workspaceId!: string;
  name!: string;
  format!: (typeof MUSIC_FORMATS)[number];
  mime!: string;
  durationSeconds!: number;
  sizeBytes!: number;
  channels!: number;
  sampleRate!: number;
  storageBucket!: string;
  storagePath!: string;
  createdBy!: string | null;
  createdAt!: Date;
  updatedAt!: Date;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['workspaceId', 'name', 'format', 'mime', 'durationSeconds', 'sizeBytes', 'channels', 'sampleRate', 'storageBucket', 'storagePath'],
    properties: {
      id: schema.uuid,
      workspaceId: schema.uuid,
      name: { type: 'string', minLength: 1, maxLength: MUSIC_NAME_MAX_LENGTH },
      format: { type: 'string', enum: [...MUSIC_FORMATS] },
      mime: schema.text,
      durationSeconds: { type: 'number', exclusiveMinimum: 0 },
      sizeBytes: { type: 'integer', minimum: 1, maximum: MUSIC_MAX_BYTES },
      channels: { type: 'integer', minimum: 1 },
      sampleRate: { type: 'integer', minimum: 1 },
      storageBucket: schema.text,
      storagePath: schema.text,
      createdBy: schema.nullableUuid,
    },
  };
}
