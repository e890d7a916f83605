import { JSONSchema, Model, ModelOptions, Pojo, QueryContext, snakeCaseMappers } from 'objection';

/**
 * Shared by every model: camelCase properties over snake_case columns, jsonb columns named explicitly
 * (objection would otherwise also JSON-encode `uuid[]` columns such as clip_ids), numeric columns that
 * pg returns as strings (bigint, numeric) parsed to numbers, and `updated_at` touched on update.
 */
export abstract class BaseModel extends Model {
  static override columnNameMappers = snakeCaseMappers();
  static override jsonAttributes: string[] = [];
  /** bigint / numeric properties (camelCase) to hand out as numbers; file sizes stay far below 2^53. */
  static numericAttributes: string[] = [];
  static touchesUpdatedAt = false;

  override $parseDatabaseJson(json: Pojo): Pojo {
    const parsed = super.$parseDatabaseJson(json);
    for (const key of (this.constructor as typeof BaseModel).numericAttributes) {
      const value = parsed[key];
      if (typeof value === 'string') parsed[key] = Number(value);
    }
    return parsed;
  }

  override $beforeUpdate(opt: ModelOptions, context: QueryContext): void | Promise<void> {
    if ((this.constructor as typeof BaseModel).touchesUpdatedAt) (this as { updatedAt?: Date }).updatedAt = new Date();
    return super.$beforeUpdate(opt, context);
  }
}

/** JSON-schema fragments used by the models' input validation. */
export const schema = {
  uuid: { type: 'string', format: 'uuid' },
  nullableUuid: { type: ['string', 'null'], format: 'uuid' },
  text: { type: 'string' },
  nonBlank: { type: 'string', minLength: 1, pattern: '\\S' },
  nullableText: { type: ['string', 'null'] },
  nullableInt: { type: ['integer', 'null'] },
  nonNegativeInt: { type: 'integer', minimum: 0 },
  nullableNonNegativeNumber: { type: ['number', 'null'], minimum: 0 },
  jsonObject: { type: 'object' },
  nullableJsonObject: { type: ['object', 'null'] },
  uuidArray: { type: 'array', items: { type: 'string', format: 'uuid' } },
  jobStatus: { type: 'string', enum: ['pending', 'processing', 'completed', 'failed', 'cancelled'] },
  progress: { type: 'integer', minimum: 0, maximum: 100 },
} satisfies Record<string, JSONSchema>;

export const JOB_STATUSES = ['pending', 'processing', 'completed', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** Columns that tell where a stored file lives behind the storage interface. */
export const storageSchemaProperties = {
  storageBucket: schema.nullableText,
  storagePath: schema.nullableText,
  storageMime: schema.nullableText,
  storageSize: { type: ['integer', 'null'], minimum: 0 },
} satisfies Record<string, JSONSchema>;

/**
 * A row that points at a file behind the storage interface (renders, images, clips, compiled videos, generated
 * content): the storage columns, validated by `storageSchemaProperties` in each model's jsonSchema.
 */
export abstract class StoredFileModel extends BaseModel {
  storageBucket!: string | null;
  storagePath!: string | null;
  storageMime!: string | null;
  storageSize!: number | null;
}
