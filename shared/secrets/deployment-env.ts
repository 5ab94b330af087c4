import type { DeploymentRecord } from '../deployments/types';
import { AppError } from '../errors';
import { type Sealed, secretBoxFrom } from './box';

/**
 * Deployment environment values at rest: sealed as one JSON map per deployment under SECRETS_KEY, opened only by
 * the activity that starts the container. The deployment's identity is the associated data, so a sealed map copied
 * onto another deployment (another org's) fails to open.
 */
export function createEnvSealer(secretsKey: string | undefined) {
  const box = secretBoxFrom(secretsKey);
  const aad = (d: Pick<DeploymentRecord, '_id' | 'orgId'>) => `deployment-env/${d.orgId}/${d._id}`;

  return {
    /** The sealed map, or undefined for an empty one (nothing to protect, and no key needed). */
    seal(d: Pick<DeploymentRecord, '_id' | 'orgId'>, env: Record<string, string>): Sealed | undefined {
      if (Object.keys(env).length === 0) return undefined;
      if (!box) {
        throw new AppError(
          'INTERNAL_ERROR',
          'This server has no SECRETS_KEY, so it cannot store environment values safely; deploy without envVars or ask the operator to set SECRETS_KEY.',
        );
      }
      return box.seal(JSON.stringify(env), aad(d));
    },

    /** The values of a record: sealed ones opened, and those of records written before sealing read as they are. */
    open(d: Pick<DeploymentRecord, '_id' | 'orgId' | 'envSealed' | 'envVars'>): Record<string, string> {
      if (!d.envSealed) return { ...(d.envVars ?? {}) };
      if (!box) throw new Error('SECRETS_KEY is not set: the environment values of this deployment cannot be opened');
      return JSON.parse(box.open(d.envSealed, aad(d))) as Record<string, string>;
    },
  };
}

export type EnvSealer = ReturnType<typeof createEnvSealer>;
