import { defineFeature } from '../feature';
import { consoleSessionRoutes } from './routes.platform';

/** The web console's sign-in: a bearer token exchanged for an httpOnly session cookie, and sign-out. */
export const consoleSessionFeature = defineFeature({
  name: 'console-session',
  routes: { platform: consoleSessionRoutes },
});
