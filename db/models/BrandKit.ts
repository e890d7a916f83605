import type { JSONSchema } from 'objection';
import { BRAND_FONT_FAMILIES } from '../../domain/brandKit';
import { BaseModel, schema } from './BaseModel';

/** A workspace's brand kit (services/workspaces/brandKit.ts); the logo is a PNG in the images bucket. */
export class BrandKit extends BaseModel {
  static override tableName = 'brand_kits';
  static override idColumn = 'workspace_id';

  workspaceId!: string;
  primaryColor!: string;
  secondaryColor!: string;
  font!: string;
  company!: string;
  phone!: string;
  website!: string;
  callToAction!: string;
  logoKey!: string | null;
  logoWidth!: number | null;
  logoHeight!: number | null;
  updatedBy!: string | null;
  createdAt!: Date;
  updatedAt!: Date;

  static override jsonSchema: JSONSchema = {
    type: 'object',
    required: ['workspaceId', 'primaryColor', 'secondaryColor', 'font'],
    properties: {
      workspaceId: schema.uuid,
      primaryColor: { type: 'string', pattern: '^#[0-9A-Fa-f]{6}$' },
      secondaryColor: { type: 'string', pattern: '^#[0-9A-Fa-f]{6}$' },
      font: { type: 'string', enum: [...BRAND_FONT_FAMILIES] },
      logoKey: schema.nullableText,
      updatedBy: schema.nullableUuid,
    },
  };
}
