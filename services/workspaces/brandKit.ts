/**
 * A workspace's brand kit (issue 44): reading it (any member; the default kit when none is stored), saving its
 * fields, and replacing or removing its logo (admins; the route checks the grant). A logo is accepted by its
 * content, never its name: PNG, JPEG, WebP or a safe SVG (domain/brandKit.ts `svgProblem`), stored as a PNG at
 * images/brand/<workspaceId>/logo-<uuid>.png; the file it replaces is removed once the row names the new one.
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import {
  BRAND_KIT_CODES,
  BRAND_KIT_MSG,
  BRAND_LOGO_MAX_BYTES,
  BRAND_LOGO_MAX_SIDE,
  DEFAULT_BRAND_KIT,
  isBrandFont,
  svgProblem,
  type BrandKitFields,
  type BrandKitView,
} from '../../domain/brandKit';
import { DomainError } from '../../domain/errors';
import { detectLogoFormat, rasteriseLogo } from '../../providers/media/brandLogo';
import { fileUrl, type Bucket, type Storage } from '../../storage';
import type { BrandSource } from '../../domain/brandVideo';
import type { ChatBrandKit } from '../../providers';

type Db = Knex | Knex.Transaction;

export const BRAND_LOGO_BUCKET: Bucket = 'images';

interface BrandKitRow {
  workspace_id: string;
  primary_color: string;
  secondary_color: string;
  font: string;
  company: string;
  phone: string;
  website: string;
  call_to_action: string;
  logo_key: string | null;
  logo_width: number | null;
  logo_height: number | null;
  updated_by: string | null;
  updated_at: Date;
}

/** The kit's fields as the assembly uses them, with the logo's storage key (null without one). */
export interface StoredBrandKit extends BrandKitFields {
  logoKey: string | null;
  logoWidth: number | null;
  logoHeight: number | null;
}

function fieldsOf(row: BrandKitRow | undefined): StoredBrandKit {
  if (!row) return { ...DEFAULT_BRAND_KIT, contact: { ...DEFAULT_BRAND_KIT.contact }, logoKey: null, logoWidth: null, logoHeight: null };
  return {
    primaryColor: row.primary_color.toUpperCase(),
    secondaryColor: row.secondary_color.toUpperCase(),
    font: isBrandFont(row.font) ? row.font : DEFAULT_BRAND_KIT.font,
    contact: { company: row.company, phone: row.phone, website: row.website },
    callToAction: row.call_to_action,
    logoKey: row.logo_key,
    logoWidth: row.logo_width,
    logoHeight: row.logo_height,
  };
}

/** The workspace's kit (the default one when none is stored), with its logo's key. */
export async function storedBrandKit(db: Db, workspaceId: string): Promise<StoredBrandKit> {
  return fieldsOf((await db('brand_kits').where({ workspace_id: workspaceId }).first()) as BrandKitRow | undefined);
}

async function viewOf(db: Db, storage: Storage, workspaceId: string): Promise<BrandKitView> {
  const row = (await db('brand_kits').where({ workspace_id: workspaceId }).first()) as BrandKitRow | undefined;
  const kit = fieldsOf(row);
  return {
    workspaceId,
    primaryColor: kit.primaryColor,
    secondaryColor: kit.secondaryColor,
    font: kit.font,
    contact: kit.contact,
    callToAction: kit.callToAction,
    logoUrl: kit.logoKey ? storage.urls.sign(BRAND_LOGO_BUCKET, kit.logoKey) : null,
    logoWidth: kit.logoWidth,
    logoHeight: kit.logoHeight,
    updatedAt: row ? new Date(row.updated_at).toISOString() : null,
    updatedBy: row?.updated_by ?? null,
  };
}

export async function getBrandKit(knex: Knex, storage: Storage, workspaceId: string): Promise<BrandKitView> {
  return viewOf(knex, storage, workspaceId);
}

/** Saves the kit's fields (validated by the route); the logo stays as it is. */
export async function saveBrandKit(knex: Knex, storage: Storage, input: { workspaceId: string; userId: string; fields: BrandKitFields }): Promise<BrandKitView> {
  const { fields } = input;
  if (!isBrandFont(fields.font)) throw new DomainError(400, BRAND_KIT_CODES.invalid, BRAND_KIT_MSG.fontRequired);
  const values = {
    primary_color: fields.primaryColor.toUpperCase(),
    secondary_color: fields.secondaryColor.toUpperCase(),
    font: fields.font,
    company: fields.contact.company,
    phone: fields.contact.phone,
    website: fields.contact.website,
    call_to_action: fields.callToAction,
    updated_by: input.userId,
  };
  await knex('brand_kits')
    .insert({ workspace_id: input.workspaceId, ...values })
    .onConflict('workspace_id')
    .merge({ ...values, updated_at: knex.fn.now() });
  return viewOf(knex, storage, input.workspaceId);
}

/**
 * Replaces the logo with `file` (at most BRAND_LOGO_MAX_BYTES, checked by the caller while reading): refused with 400
 * unless its content is a PNG, JPEG, WebP or safe SVG that decodes; nothing is stored then.
 */
export async function replaceBrandLogo(knex: Knex, storage: Storage, input: { workspaceId: string; userId: string; file: Buffer }): Promise<BrandKitView> {
  const { file } = input;
  if (file.length === 0) throw new DomainError(400, BRAND_KIT_CODES.logoInvalid, BRAND_KIT_MSG.logoEmpty);
  if (file.length > BRAND_LOGO_MAX_BYTES) throw new DomainError(413, BRAND_KIT_CODES.logoTooLarge, BRAND_KIT_MSG.logoTooLarge);
  const format = await detectLogoFormat(file);
  // an SVG librsvg refuses to read (one declaring entities, say) is still told why when it is unsafe
  const svgText = format === 'svg' || (format === null && /<svg[\s>]/i.test(file.subarray(0, 64 * 1024).toString('utf8')));
  if (svgText) {
    const problem = svgProblem(file.toString('utf8'));
    if (problem) throw new DomainError(400, BRAND_KIT_CODES.svgUnsafe, BRAND_KIT_MSG.svgUnsafe(problem));
  }
  if (!format) throw new DomainError(400, BRAND_KIT_CODES.logoInvalid, BRAND_KIT_MSG.logoUnreadable);
  let raster: Awaited<ReturnType<typeof rasteriseLogo>>;
  try {
    raster = await rasteriseLogo(file, format, BRAND_LOGO_MAX_SIDE);
  } catch {
    throw new DomainError(400, BRAND_KIT_CODES.logoInvalid, BRAND_KIT_MSG.logoUnreadable);
  }
  const key = `brand/${input.workspaceId}/logo-${randomUUID()}.png`;
  await storage.objects.put(BRAND_LOGO_BUCKET, key, raster.png);
  let previous: string | null = null;
  try {
    await knex.transaction(async (trx) => {
      const row = (await trx('brand_kits').where({ workspace_id: input.workspaceId }).forUpdate().first('logo_key')) as { logo_key: string | null } | undefined;
      previous = row?.logo_key ?? null;
      const logo = { logo_key: key, logo_width: raster.width, logo_height: raster.height, updated_by: input.userId };
      if (row) await trx('brand_kits').where({ workspace_id: input.workspaceId }).update({ ...logo, updated_at: trx.fn.now() });
      else
        await trx('brand_kits').insert({
          workspace_id: input.workspaceId,
          primary_color: DEFAULT_BRAND_KIT.primaryColor,
          secondary_color: DEFAULT_BRAND_KIT.secondaryColor,
          font: DEFAULT_BRAND_KIT.font,
          call_to_action: DEFAULT_BRAND_KIT.callToAction,
          ...logo,
        });
    });
  } catch (err) {
    await storage.objects.remove(BRAND_LOGO_BUCKET, [key]).catch(() => undefined);
    throw err;
  }
  if (previous) await storage.objects.remove(BRAND_LOGO_BUCKET, [previous]).catch(() => undefined);
  return viewOf(knex, storage, input.workspaceId);
}

export async function removeBrandLogo(knex: Knex, storage: Storage, input: { workspaceId: string; userId: string }): Promise<BrandKitView> {
  const old = await knex.transaction(async (trx) => {
    const row = (await trx('brand_kits').where({ workspace_id: input.workspaceId }).forUpdate().first('logo_key')) as { logo_key: string | null } | undefined;
    if (!row?.logo_key) return null;
    await trx('brand_kits')
      .where({ workspace_id: input.workspaceId })
      .update({ logo_key: null, logo_width: null, logo_height: null, updated_by: input.userId, updated_at: trx.fn.now() });
    return row.logo_key;
  });
  if (old) await storage.objects.remove(BRAND_LOGO_BUCKET, [old]).catch(() => undefined);
  return viewOf(knex, storage, input.workspaceId);
}

/** The workspace's kit as the assembly chat speaks of it (providers' ChatBrandKit); null when none is stored. */
export async function chatBrandKit(db: Db, workspaceId: string): Promise<ChatBrandKit | null> {
  const row = (await db('brand_kits').where({ workspace_id: workspaceId }).first()) as BrandKitRow | undefined;
  if (!row) return null;
  const kit = fieldsOf(row);
  return { hasLogo: kit.logoKey !== null, company: kit.contact.company, phone: kit.contact.phone, website: kit.contact.website, callToAction: kit.callToAction };
}

/**
 * What the workspace's kit brings into an assembly's edit (domain/brandVideo.ts): null when the workspace has no
 * stored kit (the edit then has no brand parts, as before brand kits). The title is the assembly's own text, else
 * the project's name.
 */
export async function brandSourceFor(db: Db, workspaceId: string, input: { titleText: string | null; projectName: string }): Promise<BrandSource | null> {
  const row = (await db('brand_kits').where({ workspace_id: workspaceId }).first()) as BrandKitRow | undefined;
  if (!row) return null;
  const kit = fieldsOf(row);
  return {
    primaryColor: kit.primaryColor,
    secondaryColor: kit.secondaryColor,
    font: kit.font,
    logo: kit.logoKey && kit.logoWidth && kit.logoHeight ? { src: fileUrl(BRAND_LOGO_BUCKET, kit.logoKey), width: kit.logoWidth, height: kit.logoHeight } : null,
    contactLines: [kit.contact.company, kit.contact.phone, kit.contact.website].map((line) => line.trim()).filter(Boolean),
    callToAction: kit.callToAction.trim(),
    title: (input.titleText ?? '').trim() || input.projectName.trim(),
  };
}
