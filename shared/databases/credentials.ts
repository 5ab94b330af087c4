import type { Sealed } from '../secrets/box';
import { requiredSecretBox } from '../secrets/box';
import type { DatabaseCredentials } from './engines';

/**
 * A database's credentials at rest: sealed under SECRETS_KEY with the database's identity as associated data, so a
 * sealed value copied onto another database (another organisation's) fails to open. Opened only where a container
 * gets them (the database's own, and the env of the deployments it serves) and by an audited reveal.
 */
export function createCredentialSealer(secretsKey: string | undefined) {
  const box = requiredSecretBox(secretsKey, 'database credentials cannot be stored or read without it');
  const aad = (d: { _id: string; orgId: string }) => `database-credentials/${d.orgId}/${d._id}`;
  return {
    seal: (d: { _id: string; orgId: string }, creds: DatabaseCredentials): Sealed =>
      box().seal(JSON.stringify(creds), aad(d)),
    open: (d: { _id: string; orgId: string; credentialsSealed: Sealed }): DatabaseCredentials =>
      JSON.parse(box().open(d.credentialsSealed, aad(d))) as DatabaseCredentials,
  };
}

export type CredentialSealer = ReturnType<typeof createCredentialSealer>;
