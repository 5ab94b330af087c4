import { z } from 'zod';

export const ConsoleSession = z
  .object({
    id: z.string().meta({ description: "The session's token ID (the audit trail's actor.tokenId for its changes)" }),
    csrfToken: z.string().meta({
      description: 'Send it as X-CSRF-Token with every change made with the session cookie; derived from the session',
    }),
    expiresAt: z.string().meta({
      description: 'When the session ends: at most CONSOLE_SESSION_TTL_S, never after the token it came from',
    }),
  })
  .meta({ id: 'ConsoleSession' });
