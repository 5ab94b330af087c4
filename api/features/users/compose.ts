import type { Core } from '../../core';
import type { FeatureContext } from '../feature';
import { createUserService } from './service';

/** The user service, over the core's identity and its per-organisation lock (an organisation keeps an owner). */
export const composeUsers = (core: Core) => ({
  users: createUserService({ identity: core.identity, lock: core.lock }),
});

export type UsersContext = FeatureContext<ReturnType<typeof composeUsers>>;
