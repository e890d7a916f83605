import type { BrandKitFields, BrandKitView } from '../../../domain/brandKit';
import { api } from './client';

export type { BrandKitView };

const path = (workspaceId: string, ...rest: string[]) => ['workspaces', encodeURIComponent(workspaceId), 'brand-kit', ...rest].join('/');

/** The workspace's brand kit (the default one until an admin saves one). */
export async function fetchBrandKit(workspaceId: string): Promise<BrandKitView> {
  return (await api.get(path(workspaceId)).json<{ success: true; brandKit: BrandKitView }>()).brandKit;
}

/** Saves colours, font, contact lines and call to action: owners and admins. */
export async function saveBrandKit(workspaceId: string, fields: BrandKitFields): Promise<BrandKitView> {
  return (await api.put(path(workspaceId), { json: fields }).json<{ success: true; brandKit: BrandKitView }>()).brandKit;
}

/** Replaces the logo with the file as the request body: owners and admins. */
export async function uploadBrandLogo(workspaceId: string, file: Blob): Promise<BrandKitView> {
  return (await api.put(path(workspaceId, 'logo'), { body: file, headers: { 'content-type': 'application/octet-stream' } }).json<{ success: true; brandKit: BrandKitView }>()).brandKit;
}

export async function removeBrandLogo(workspaceId: string): Promise<BrandKitView> {
  return (await api.delete(path(workspaceId, 'logo')).json<{ success: true; brandKit: BrandKitView }>()).brandKit;
}
