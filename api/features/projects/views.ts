import type { ProjectRecord } from '@shared/projects/types';

import type { MemberWithUser } from './members';

export function projectView(p: ProjectRecord, deploymentCount?: number) {
  return {
    id: p._id,
    name: p.name,
    ...(p.description !== undefined ? { description: p.description } : {}),
    ...(p.framework !== undefined ? { framework: p.framework } : {}),
    ...(p.repoUrl !== undefined ? { repoUrl: p.repoUrl } : {}),
    ...(p.gitBranch !== undefined ? { gitBranch: p.gitBranch } : {}),
    ...(p.gitTokenSecretId !== undefined ? { gitTokenSecretId: p.gitTokenSecretId } : {}),
    ...(p.vaultEnvironment !== undefined ? { vaultEnvironment: p.vaultEnvironment } : {}),
    createdAt: p.createdAt.toISOString(),
    updatedAt: p.updatedAt.toISOString(),
    createdBy: p.createdBy,
    ...(deploymentCount !== undefined ? { deploymentCount } : {}),
  };
}

export function memberView(m: MemberWithUser) {
  return {
    userId: m.userId,
    ...(m.email !== undefined ? { email: m.email } : {}),
    ...(m.name !== undefined ? { name: m.name } : {}),
    role: m.role,
    addedAt: m.addedAt.toISOString(),
    addedBy: m.addedBy,
  };
}
