import {
  Connection,
  isGrpcDeadlineError,
  type OperatorService,
  WorkflowUpdateRPCTimeoutOrCancelledError,
} from '@temporalio/client';
import type { SearchAttributeType } from '@temporalio/common';
import { temporal } from '@temporalio/proto';

import type { Config } from './config';
import { SEARCH_ATTRIBUTES } from './constants';

/**
 * A call given up at the deadline its caller set (`withDeadline`): DEADLINE_EXCEEDED, or CANCELLED when the deadline
 * fires while grpc-js has the call in flight, which the update API wraps as WorkflowUpdateRPCTimeoutOrCancelledError.
 * Either way the workflow had not taken the update by then; only our wait ended.
 */
export const isWaitOver = (err: unknown): boolean =>
  err instanceof WorkflowUpdateRPCTimeoutOrCancelledError || isGrpcDeadlineError(err);

export function connectTemporal(cfg: Pick<Config, 'TEMPORAL_ADDRESS' | 'TEMPORAL_API_KEY' | 'TEMPORAL_TLS'>) {
  return Connection.connect({
    address: cfg.TEMPORAL_ADDRESS,
    tls: cfg.TEMPORAL_TLS || Boolean(cfg.TEMPORAL_API_KEY),
    apiKey: cfg.TEMPORAL_API_KEY,
  });
}

const INDEXED = temporal.api.enums.v1.IndexedValueType;
const INDEXED_TYPES: Record<SearchAttributeType, temporal.api.enums.v1.IndexedValueType> = {
  TEXT: INDEXED.INDEXED_VALUE_TYPE_TEXT,
  KEYWORD: INDEXED.INDEXED_VALUE_TYPE_KEYWORD,
  INT: INDEXED.INDEXED_VALUE_TYPE_INT,
  DOUBLE: INDEXED.INDEXED_VALUE_TYPE_DOUBLE,
  BOOL: INDEXED.INDEXED_VALUE_TYPE_BOOL,
  DATETIME: INDEXED.INDEXED_VALUE_TYPE_DATETIME,
  KEYWORD_LIST: INDEXED.INDEXED_VALUE_TYPE_KEYWORD_LIST,
};

/**
 * Registers the deployment workflows' search attributes on a server that lacks them (the dev server gets them by
 * flag). A start or an upsert naming an attribute the namespace does not know is refused, so both the api (which
 * starts workflows with them) and the worker (whose workflows upsert them) call this before they serve.
 */
export async function ensureSearchAttributes(
  connection: { operatorService: Pick<OperatorService, 'listSearchAttributes' | 'addSearchAttributes'> },
  namespace: string,
): Promise<void> {
  const missing = async () => {
    const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
    return Object.values(SEARCH_ATTRIBUTES).filter(({ name }) => !(name in customAttributes));
  };
  const lacking = await missing();
  if (lacking.length === 0) return;
  try {
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(lacking.map(({ name, type }) => [name, INDEXED_TYPES[type]])),
    });
  } catch (err) {
    // The api and the worker start together: the other one may have just added them.
    if ((await missing()).length > 0) throw err;
  }
}
