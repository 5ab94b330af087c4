import { defineFeature } from '../feature';
import { composeUsers } from './compose';
import { userRoutes } from './routes.platform';

export const usersFeature = defineFeature({ name: 'users', compose: composeUsers, routes: { platform: userRoutes } });
