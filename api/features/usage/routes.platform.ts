import { principalOf } from '../../http/auth';
import { route, type RouteDef } from '../../http/routes';
import { ok, success } from '../../http/shapes';
import type { UsageContext } from './compose';
import { Usage, UsageQuery } from './schemas';

export const USAGE_DESCRIPTION =
  'Usage of the caller’s organisation over [from, to), in whole UTC hours, in total and per day, project or deployment. ' +
  'CPU and memory come from the instances’ samples (each stands for the sampling interval), build minutes from the ' +
  'time in status building, requests and bytes from the edge router’s per-host counters, AI tokens from the builder ' +
  'turns’ model answers, storage from the storage ledger (allocated sizes, backups as uploaded) and buckets’ samples. ' +
  'Closed hours are answered from immutable hourly records, so a past period answers the same later. Anyone in the ' +
  'organisation may read it (usage.read, viewers included).';

export function usageRoutes(ctx: Pick<UsageContext, 'usage' | 'can'>): RouteDef[] {
  return [
    route({
      method: 'get',
      path: '/usage',
      summary: 'Usage of the organisation over a period: CPU, memory, builds, requests, storage, AI tokens',
      description: USAGE_DESCRIPTION,
      tags: ['Usage'],
      request: { query: UsageQuery },
      before: [ctx.can('usage.read')],
      responses: {
        200: { description: 'The period’s usage, in total and per group', schema: success(Usage) },
        400: {
          description:
            'INVALID_REQUEST: from or to is not a UTC date or instant, from is not before to, or the period is longer than 366 days',
        },
      },
      handler: async ({ query }, req, res) => {
        res.json(ok(await ctx.usage.usage(principalOf(req), query)));
      },
    }),
  ];
}
