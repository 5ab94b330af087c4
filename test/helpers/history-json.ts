import path from 'node:path';

import * as proto from '@temporalio/proto';
import { patchProtobufRoot } from '@temporalio/proto/lib/patch-protobuf-root';

/**
 * Temporal's JSON history format (the one `temporal workflow show --output json` and the web UI export), written and
 * read with the protobufjs copy that @temporalio/proto's types belong to. The SDK's own historyToJSON and
 * historyFromJSON (@temporalio/common/lib/proto-utils) pair @temporalio/common's nested protobufjs with
 * @temporalio/proto's, and with two copies installed side by side (each package nests its own, because grpc keeps
 * protobufjs 7 at the root) every call fails "type must be a Type".
 */
interface ProtoJson {
  toJson(type: unknown, message: unknown): unknown;
  fromJson(type: unknown, json: unknown, options?: { ignoreUnknownFields?: boolean }): unknown;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const protojson = require(
  require.resolve('protobufjs/ext/protojson', { paths: [path.dirname(require.resolve('@temporalio/proto'))] }),
) as ProtoJson;

export type History = proto.temporal.api.history.v1.IHistory;
const historyType = (patchProtobufRoot(proto) as unknown as { lookupType(name: string): unknown }).lookupType(
  'temporal.api.history.v1.History',
);

export function historyToJSON(history: History): string {
  return JSON.stringify(
    protojson.toJson(historyType, proto.temporal.api.history.v1.History.fromObject(history)),
    null,
    1,
  );
}

export function historyFromJSON(json: unknown): History {
  return protojson.fromJson(historyType, json, { ignoreUnknownFields: true }) as History;
}

/** An env value the recorded deployments are given: values are sealed, only names may travel through Temporal. */
export const SECRET_VALUE = 'sk-record-histories-never-in-history-5e1f';

/** Every string of a JSON history, as written and base64-decoded (payloads are base64 in the JSON). */
export function historyStrings(json: string): string[] {
  const strings: string[] = [];
  JSON.parse(json, (_k, v: unknown) => {
    if (typeof v === 'string') strings.push(v, Buffer.from(v, 'base64').toString('latin1'));
    return v;
  });
  return strings;
}

export function carriesSecret(json: string, secret = SECRET_VALUE): boolean {
  return historyStrings(json).some((v) => v.includes(secret));
}
