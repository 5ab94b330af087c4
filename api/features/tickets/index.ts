import { defineFeature } from '../feature';
import { composeTickets } from './compose';
import { ticketRoutes } from './routes.platform';
import { ticketTools } from './tools.mcp';

/** Support tickets: opened, commented and moved through their statuses by the organisation's members. */
export const ticketsFeature = defineFeature({
  name: 'tickets',
  compose: composeTickets,
  routes: { platform: ticketRoutes },
  tools: ticketTools,
});
