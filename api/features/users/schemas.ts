import { z } from 'zod';

import { ORG_ROLES } from '@shared/permissions';

import { email } from '../../http/fields';

const OrgRole = z.enum(ORG_ROLES);

export const CreateUserRequest = z
  .object({
    email: email('an e-mail address').max(254).meta({ description: 'Unique in the organisation (case-insensitive)' }),
    name: z
      .string()
      .min(1)
      .max(100)
      // eslint-disable-next-line no-control-regex
      .regex(/^[^\u0000-\u001F\u007F]*$/, 'no control characters')
      .optional(),
    role: OrgRole.meta({ description: 'Org role; only an owner can add an owner' }),
  })
  .strict()
  .meta({ id: 'CreateUserRequest' });

export const UpdateUserRequest = z
  .object({ role: OrgRole.meta({ description: 'Only an owner can grant or take away owner' }) })
  .strict()
  .meta({ id: 'UpdateUserRequest' });

export const UserIdParams = z.object({ id: z.uuid('a user ID in UUID format') });

export const User = z
  .object({
    id: z.uuid(),
    email: z.string(),
    name: z.string().optional(),
    role: OrgRole,
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'User' });
