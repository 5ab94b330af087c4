import type Docker from 'dockerode';

import type { CredentialSealer } from '../databases/credentials';
import { databaseContainerName, ENGINE_PORT } from '../databases/engines';
import type { DatabaseStore } from '../databases/store';
import type { DatabaseRecord } from '../databases/types';
import { ignore } from '../ignore';
import { type LookupAll, OutboundTargetError, resolveTarget } from '../net-guard';
import { requiredSecretBox, type Sealed } from '../secrets/box';
import type { SourceEndpoint } from './endpoint';
import type { DatabaseSourceRecord, SourceEngine } from './types';

/** Why a source cannot be reached as configured: the caller's to fix (its host, or its managed database's state). */
export class SourceTargetError extends Error {
  override name = 'SourceTargetError';
}

/** The engine a managed database speaks as a source; Redis is not one. */
export const SOURCE_ENGINE_OF: Partial<Record<DatabaseRecord['engine'], SourceEngine>> = {
  postgresql: 'postgres',
  mariadb: 'mysql',
};

/**
 * `host:port` as a URL net-guard reads, an IPv6 literal in brackets; undefined for text no URL takes as a host (an
 * IPv6 address with too many groups, say), which is then no host at all.
 */
function targetUrl(host: string, port: number): URL | undefined {
  try {
    return new URL(`tcp://${host.includes(':') ? `[${host}]` : host}:${port}`);
  } catch {
    // The URL parser's refusal is the answer: not a host name nor an address.
    return undefined;
  }
}

const NOT_A_HOST = (host: string) => `${host} is neither a host name nor an IPv4 or IPv6 address`;

/**
 * Where a source's queries connect, and as whom. An external server's name is resolved once and refused when any of
 * its addresses is loopback, private or special (unless ALLOW_PRIVATE_DATABASE_SOURCES; metadata never), the checked
 * address pinned for the connection. A managed database is reached at its container's address on its organisation's
 * network, with its own credentials: it must belong to the source's organisation, whatever the record says.
 */
export function createEndpointResolver(deps: {
  secretsKey: string | undefined;
  allowPrivate: boolean;
  databases: Pick<DatabaseStore, 'get'>;
  databaseCredentials: CredentialSealer;
  docker: Docker;
  lookup?: LookupAll;
}) {
  const box = requiredSecretBox(deps.secretsKey, 'database source passwords cannot be stored or read without it');
  const aad = (s: { _id: string; orgId: string }) => `database-source/${s.orgId}/${s._id}`;

  /** The reason a host would be refused, or undefined; for create and update, before anything is stored. */
  async function hostRefusal(host: string, port: number): Promise<string | undefined> {
    const url = targetUrl(host, port);
    if (!url) return NOT_A_HOST(host);
    try {
      await resolveTarget(url, { allowPrivate: deps.allowPrivate, lookup: deps.lookup });
      return undefined;
    } catch (err) {
      if (!(err instanceof OutboundTargetError)) throw err;
      return err.openable
        ? `${err.reason} (an operator may allow private networks with ALLOW_PRIVATE_DATABASE_SOURCES)`
        : err.reason;
    }
  }

  async function managedEndpoint(source: DatabaseSourceRecord, databaseId: string): Promise<SourceEndpoint> {
    const d = await deps.databases.get(source.orgId, databaseId);
    if (!d)
      throw new SourceTargetError(
        `the managed database ${databaseId} this source refers to no longer exists; delete the source`,
      );
    if (d.status !== 'ready')
      throw new SourceTargetError(
        `the managed database ${d.name} is ${d.status}; query it once GET /platform/databases/${d._id} reads ready`,
      );
    const info = await deps.docker
      .getContainer(databaseContainerName(d._id))
      .inspect()
      .catch(ignore('no container: said below as not running', undefined));
    const address = Object.values(info?.NetworkSettings?.Networks ?? {}).find((n) => n.IPAddress)?.IPAddress;
    if (!info?.State?.Running || !address)
      throw new SourceTargetError(`the managed database ${d.name} is not running right now; try again in a moment`);
    const creds = deps.databaseCredentials.open(d);
    return {
      engine: source.engine,
      host: d.host,
      address,
      port: ENGINE_PORT[d.engine],
      database: creds.database,
      user: creds.user,
      password: creds.password,
      // Its organisation's bridge, on this host: no network between them to protect.
      tls: 'disable',
    };
  }

  return {
    hostRefusal,

    sealPassword: (s: { _id: string; orgId: string }, password: string): Sealed => box().seal(password, aad(s)),

    async resolve(source: DatabaseSourceRecord): Promise<SourceEndpoint> {
      if (source.databaseId) return managedEndpoint(source, source.databaseId);
      const { host, port, database, user, passwordSealed } = source;
      if (!host || !port || !database || !user || !passwordSealed)
        throw new SourceTargetError('the source is missing its host, port, database, user or password; PATCH it');
      const url = targetUrl(host, port);
      if (!url) throw new SourceTargetError(`the source's host is refused: ${NOT_A_HOST(host)}`);
      let target;
      try {
        target = await resolveTarget(url, { allowPrivate: deps.allowPrivate, lookup: deps.lookup });
      } catch (err) {
        if (!(err instanceof OutboundTargetError)) throw err;
        throw new SourceTargetError(`the source's host is refused: ${err.reason}`);
      }
      return {
        engine: source.engine,
        host,
        address: target.address,
        port,
        database,
        user,
        password: box().open(passwordSealed, aad(source)),
        tls: source.tls,
      };
    },
  };
}

export type EndpointResolver = ReturnType<typeof createEndpointResolver>;
