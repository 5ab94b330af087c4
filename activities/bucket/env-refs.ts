import { ApplicationFailure } from '@temporalio/common';

import { BUCKET_ENV } from '@shared/buckets/env';
import type { LinkSecretSealer } from '@shared/buckets/link-secrets';
import type { BucketStore } from '@shared/buckets/store';
import type { EnvRefResolver } from '@shared/deployments/attachments';

import { bridgeName } from '../providers/engine-network';
import { allowLoopbackForward, s3ForwardFor } from '../providers/host-firewall';

/** Where an app reaches the object store, and how its SDK should address it. */
export interface AppS3Address {
  endpoint: string;
  region: string;
  forcePathStyle: boolean;
}

/**
 * Resolves a release's references to linked buckets, when one of its containers starts: the bucket's real name, the
 * store's address as the app reaches it (`address`, per organisation: its network's gateway with the embedded store)
 * and the link's own key, opened here. The bucket must be the deployment's organisation's whatever the reference
 * document says, and the key must be this deployment's link's.
 */
export function createBucketEnvResolver(deps: {
  store: Pick<BucketStore, 'getAny' | 'credentials'>;
  sealer: Pick<LinkSecretSealer, 'open'>;
  address: (orgId: string) => Promise<AppS3Address>;
}): EnvRefResolver {
  return async (orgId, deploymentId, refs) => {
    const values: Record<string, string> = {};
    const ours = refs.filter((r) => r.ref.type === 'bucket');
    if (ours.length === 0) return values;
    const address = await deps.address(orgId);
    for (const { name, ref } of ours) {
      if (ref.type !== 'bucket') continue;
      const b = await deps.store.getAny(ref.bucketId);
      if (!b || b.orgId !== orgId)
        throw ApplicationFailure.nonRetryable(
          `${name} refers to bucket ${ref.bucketId}, which no longer exists; unlink it and redeploy`,
          'EnvRefUnresolved',
        );
      const value = await (async () => {
        switch (ref.field) {
          case 'endpoint':
            return address.endpoint;
          case 'bucket':
            return b.s3Name;
          case 'region':
            return address.region;
          case 'forcePathStyle':
            return String(address.forcePathStyle);
          case 'accessKeyId':
          case 'secretAccessKey': {
            const key = (await deps.store.credentials.ofDeployment(deploymentId)).find(
              (c) => c.bucketId === b._id && c.orgId === orgId && c.secretSealed,
            );
            if (!key?.secretSealed)
              throw ApplicationFailure.nonRetryable(
                `${BUCKET_ENV[ref.field]} refers to the key of this deployment's link with bucket ${b.name}, which was revoked; unlink the bucket and link it again`,
                'EnvRefUnresolved',
              );
            return ref.field === 'accessKeyId' ? key._id : deps.sealer.open({ ...key, secretSealed: key.secretSealed });
          }
        }
      })();
      values[name] = value;
    }
    return values;
  };
}

/** Several resolvers, each given every reference and answering those of its kind, as one. */
export function joinEnvResolvers(...resolvers: EnvRefResolver[]): EnvRefResolver {
  return async (orgId, deploymentId, refs) => {
    const values: Record<string, string> = {};
    for (const r of resolvers) Object.assign(values, await r(orgId, deploymentId, refs));
    return values;
  };
}

/**
 * Where an organisation's apps reach the object store: S3_APP_ENDPOINT when set; with the embedded store on loopback,
 * its port on the org network's gateway, which the host firewall forwards to it (providers/host-firewall.ts), the
 * bridge allowed to route to loopback first; S3_ENDPOINT as it is otherwise.
 */
export function appS3Address(
  cfg: {
    S3_ENDPOINT?: string | undefined;
    S3_APP_ENDPOINT?: string | undefined;
    S3_REGION: string;
    S3_FORCE_PATH_STYLE: boolean;
  },
  networks: { ensure(orgId: string): Promise<string> },
  inspect: (networkId: string) => Promise<{ IPAM?: { Config?: { Gateway?: string }[] } }>,
): (orgId: string) => Promise<AppS3Address> {
  const forward = s3ForwardFor(cfg);
  const fixed = cfg.S3_APP_ENDPOINT ?? cfg.S3_ENDPOINT ?? `https://s3.${cfg.S3_REGION}.amazonaws.com`;
  const style = { region: cfg.S3_REGION, forcePathStyle: cfg.S3_FORCE_PATH_STYLE };
  return async (orgId) => {
    if (!forward) return { endpoint: fixed, ...style };
    const network = await networks.ensure(orgId);
    const gateway = (await inspect(network)).IPAM?.Config?.find((c) => c.Gateway && !c.Gateway.includes(':'))?.Gateway;
    if (!gateway) throw new Error(`the network of organisation ${orgId} has no IPv4 gateway`);
    await allowLoopbackForward(bridgeName(orgId));
    return { endpoint: `http://${gateway}:${forward.port}`, ...style };
  };
}
