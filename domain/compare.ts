/**
 * What an item is compared with (DESIGN.md "Review", issue 42 item 3): the item and the versions before it, each
 * with a picture or video to show. Types shared by the service (services/review/compareVersions.ts), the route and
 * the front end's Compare dialog.
 */

export interface CompareMedia {
  /** a lineage kind (render, image, clip, compiled_video, generated), or approval for an item still pending */
  kind: string;
  id: string;
  name: string;
  /** how it is shown: a picture, or a video (clips and assembled videos) */
  media: 'image' | 'video';
  url: string | null;
  created_at: string | null;
}

export interface CompareVersion extends CompareMedia {
  /** 'source': the render the chain started from; 'earlier': a later step that is still before this item */
  relation: 'source' | 'earlier';
  /** steps before the item: 1 = what it was made from directly */
  depth: number;
}

export interface CompareVersions {
  item: CompareMedia;
  /** nearest first */
  versions: CompareVersion[];
}
