import { defineFeature } from '../feature';
import { userRoutes } from './routes.platform';

export const usersFeature = defineFeature({ name: 'users', routes: { platform: userRoutes } });
