import { defineFeature } from '../feature';
import { secretRoutes } from './routes.platform';

export const secretsFeature = defineFeature({ name: 'secrets', routes: { platform: secretRoutes } });
