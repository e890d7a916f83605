import type { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { RS_SEARCH_ATTRIBUTES } from '../../domain/searchAttributes';

/**
 * Registers the custom search attributes (RsWorkspaceId, RsUserId, RsProjectId, RsJobKind, RsItemId) on the namespace when it lacks
 * any: `npm start` and the compose set-up register them already, this covers a Temporal server of your own and a
 * dev-server database from before they existed. Lists first and adds only the missing ones, so it is a no-op once
 * registered. Throws when the server refuses (a Temporal Cloud namespace: register them in its console).
 */
export async function ensureSearchAttributes(connection: Connection, namespace: string): Promise<string[]> {
  const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
  const missing = RS_SEARCH_ATTRIBUTES.filter((key) => !(key.name in (customAttributes ?? {})));
  if (missing.length === 0) return [];
  const keyword = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
  await connection.operatorService.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(missing.map((key) => [key.name, keyword])),
  });
  return missing.map((key) => key.name);
}
