import { temporal } from '@temporalio/proto';
import type { NativeConnection } from '@temporalio/worker';

import { SEARCH_ATTRIBUTES } from '../shared/constants';

/** Registers the workflows' search attributes on a server that lacks them (the dev server gets them by flag). */
export async function ensureSearchAttributes(connection: NativeConnection, namespace: string): Promise<void> {
  const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
  const missing = Object.values(SEARCH_ATTRIBUTES).filter((name) => !(name in customAttributes));
  if (missing.length === 0) return;
  const keyword = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
  await connection.operatorService.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(missing.map((name) => [name, keyword])),
  });
}
