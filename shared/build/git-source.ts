import type { Config } from '../config';
import { AppError } from '../errors';
import type { Principal } from '../identity/service';
import { privateTargetReason } from '../net-guard';
import { roleAllows } from '../permissions';
import type { SecretEnvironment } from '../secrets/store';
import { gitSecretRefusal, type Vault } from '../secrets/vault';

/**
 * The rules a Git source is held to wherever one is named (a source deploy, a project's repository): one code path,
 * so a project cannot store what a deploy would refuse.
 */
export function createGitSourceCheck(deps: {
  vault: Pick<Vault, 'describe'>;
  config: Pick<Config, 'ALLOW_PRIVATE_GIT_HOSTS'>;
}) {
  return {
    /**
     * A Git token leaves the vault only for a caller allowed to send secrets (secret.use, beyond deployment.create),
     * over https to a host the secret is bound to, from the given vault environment. The worker checks the binding
     * again before it opens the value.
     */
    async secret(principal: Principal, id: string, repoUrl: string, environment: SecretEnvironment) {
      if (!principal.token.scopes.includes('secret.use') || !roleAllows(principal.user.role, 'secret.use')) {
        throw new AppError(
          'INSUFFICIENT_SCOPE',
          "gitTokenSecretId needs the secret.use permission (in the token's scopes and your role); leave it out or use a token that has it.",
          { required: 'secret.use' },
        );
      }
      const summary = await deps.vault.describe(principal.org._id, id);
      if (!summary) {
        throw new AppError(
          'INVALID_REQUEST',
          `gitTokenSecretId ${id} is not a secret of this organisation; create one with POST /platform/secrets.`,
          { gitTokenSecretId: id },
        );
      }
      const refusal = gitSecretRefusal(summary, {
        url: repoUrl,
        environment,
        allowHttp: deps.config.ALLOW_PRIVATE_GIT_HOSTS,
      });
      if (refusal)
        throw new AppError('INVALID_REQUEST', `gitTokenSecretId is refused: ${refusal}.`, { gitTokenSecretId: id });
      return id;
    },

    /** Refused here so the caller hears at once; the worker checks again when it clones (DNS may change). */
    async repoUrl(repoUrl: string): Promise<void> {
      const blocked = await privateTargetReason(new URL(repoUrl), {
        allowPrivate: deps.config.ALLOW_PRIVATE_GIT_HOSTS,
      });
      if (blocked) {
        throw new AppError('INVALID_REQUEST', `repoUrl is refused: ${blocked}. Use a publicly reachable Git host.`, {
          repoUrl,
        });
      }
    },
  };
}

export type GitSourceCheck = ReturnType<typeof createGitSourceCheck>;
