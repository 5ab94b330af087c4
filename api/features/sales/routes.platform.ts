import type { RequestHandler } from 'express';

import { principalOf } from '../../http/auth';
import { withIdempotencyKey } from '../../http/fields';
import { route, type RouteDef } from '../../http/routes';
import { ok, success } from '../../http/shapes';
import type { SalesContext } from './compose';
import {
  ApiKeyCreated,
  CreateProductRequest,
  DeliveriesQuery,
  Delivery,
  DeliveryList,
  EventIdParams,
  IdParams,
  Product,
  ProductList,
  RecordSaleRequest,
  ResendResult,
  SaleIdParams,
  SaleList,
  SaleRecorded,
  SaleRefunded,
  SalesQuery,
  SetWebhookRequest,
  SubscriptionUpdated,
  TestEventResult,
  UpdateSubscriptionRequest,
  WebhookSaved,
  WebhookSettings,
} from './schemas';
import { attemptView, deliverySummary, deliveryView, productView, saleView } from './views';

const QUEUED =
  'No worker took the attempt within the wait; it stays queued and is sent when a worker runs (see the deliveries log).';

/** Seller routes: webhook endpoint and secret, API key, and the checkout records that emit events. */
export function salesRoutes(deps: Pick<SalesContext, 'sales' | 'can'>): RouteDef[] {
  const { sales } = deps;
  const before = [deps.can('sales.manage')];
  const tags = ['Sales'];
  const org = (req: Parameters<RequestHandler>[0]) => principalOf(req).org._id;
  return [
    route({
      method: 'put',
      path: '/sales/webhook',
      summary: 'Save the webhook endpoint; returns a new signing secret once',
      tags,
      request: { body: SetWebhookRequest },
      before,
      responses: { 200: { description: 'data.url and data.secret (shown once)', schema: success(WebhookSaved) } },
      handler: async ({ body }, req, res) => {
        res.json(ok(await sales.setWebhook(org(req), body)));
      },
    }),
    route({
      method: 'get',
      path: '/sales/webhook',
      summary: 'The webhook endpoint and a masked secret',
      tags,
      request: {},
      before,
      responses: { 200: { description: 'data.url, data.secret (masked)', schema: success(WebhookSettings) } },
      handler: async (_i, req, res) => {
        res.json(ok(await sales.getWebhook(org(req))));
      },
    }),
    route({
      method: 'post',
      path: '/sales/webhook/test',
      summary: 'Send a test event now',
      tags,
      audit: { action: 'webhook.test', resource: 'webhook' },
      request: {},
      before,
      responses: {
        200: { description: 'data.eventId and the outcome of the attempt', schema: success(TestEventResult) },
        202: {
          description: 'No worker took the attempt in time: data.outcome is queued; it is sent when one does',
          schema: success(TestEventResult),
        },
      },
      handler: async (_i, req, res) => {
        const r = await sales.sendTest(org(req));
        if (r.outcome === 'queued') res.status(202);
        res.json(ok({ ...r, ...(r.outcome === 'queued' ? { message: QUEUED } : {}) }));
      },
    }),
    route({
      method: 'post',
      path: '/sales/api-keys',
      summary: 'Create the seller API key (shown once); the previous key stops working at once',
      tags,
      request: {},
      before,
      responses: { 200: { description: 'data.apiKey', schema: success(ApiKeyCreated) } },
      handler: async (_i, req, res) => {
        res.json(ok(await sales.createApiKey(org(req))));
      },
    }),
    route({
      method: 'delete',
      path: '/sales/api-keys',
      summary: 'Revoke the seller API key',
      tags,
      request: {},
      before,
      responses: { 204: { description: 'Revoked' } },
      handler: async (_i, req, res) => {
        await sales.revokeApiKey(org(req));
        res.status(204).end();
      },
    }),
    route({
      method: 'post',
      path: '/products',
      summary: 'Create a product',
      tags,
      request: { body: CreateProductRequest },
      before,
      responses: { 200: { description: 'The product', schema: success(Product) } },
      handler: async ({ body }, req, res) => {
        res.json(ok(productView(await sales.createProduct(org(req), body))));
      },
    }),
    route({
      method: 'get',
      path: '/products',
      summary: 'The products, newest first (at most 200)',
      tags,
      request: {},
      before,
      responses: { 200: { description: 'data.products', schema: success(ProductList) } },
      handler: async (_i, req, res) => {
        res.json(ok({ products: (await sales.listProducts(org(req))).map(productView) }));
      },
    }),
    route({
      method: 'get',
      path: '/sales',
      summary: 'The recorded sales, newest first, each with its product name and refund time',
      tags,
      request: { query: SalesQuery },
      before,
      responses: { 200: { description: 'data.sales, data.total', schema: success(SaleList) } },
      handler: async ({ query }, req, res) => {
        const { items, total } = await sales.listSales(org(req), query);
        res.json(ok({ sales: items.map(saleView), total, limit: query.limit, offset: query.offset }));
      },
    }),
    route({
      method: 'post',
      path: '/sales',
      summary: 'Record a paid sale; emits sale.completed',
      tags,
      request: { body: RecordSaleRequest },
      before,
      responses: {
        200: {
          description: 'data.saleId, data.eventId, data.subscriptionId for subscriptions',
          schema: success(SaleRecorded),
        },
        409: { description: 'requestId already used: the message names the first sale; nothing new was recorded' },
      },
      handler: async ({ body }, req, res) => {
        res.json(ok(await sales.recordSale(org(req), withIdempotencyKey(body))));
      },
    }),
    route({
      method: 'post',
      path: '/sales/:saleId/refund',
      summary: 'Refund a sale; emits sale.refunded',
      tags,
      request: { params: SaleIdParams },
      before,
      responses: { 200: { description: 'data.saleId, data.eventId', schema: success(SaleRefunded) } },
      handler: async ({ params }, req, res) => {
        res.json(ok(await sales.refund(org(req), params.saleId)));
      },
    }),
    route({
      method: 'patch',
      path: '/subscriptions/:id',
      summary: 'Change a subscription’s status or renewal date; emits subscription.updated on a change',
      tags,
      request: { params: IdParams, body: UpdateSubscriptionRequest },
      before,
      responses: {
        200: {
          description: 'data.subscriptionId, data.eventId (null when nothing changed)',
          schema: success(SubscriptionUpdated),
        },
      },
      handler: async ({ params, body }, req, res) => {
        res.json(ok(await sales.updateSubscription(org(req), params.id, body)));
      },
    }),
    route({
      method: 'get',
      path: '/sales/deliveries',
      summary: 'The deliveries log, newest first',
      tags,
      request: { query: DeliveriesQuery },
      before,
      responses: { 200: { description: 'data.deliveries, data.total', schema: success(DeliveryList) } },
      handler: async ({ query }, req, res) => {
        const { items, total } = await sales.listDeliveries(org(req), query);
        res.json(ok({ deliveries: items.map(deliverySummary), total, limit: query.limit, offset: query.offset }));
      },
    }),
    route({
      method: 'get',
      path: '/sales/deliveries/:eventId',
      summary: 'One event with its body and every attempt',
      tags,
      request: { params: EventIdParams },
      before,
      responses: { 200: { description: 'The delivery', schema: success(Delivery) } },
      handler: async ({ params }, req, res) => {
        res.json(ok(deliveryView(await sales.getDelivery(org(req), params.eventId))));
      },
    }),
    route({
      method: 'post',
      path: '/sales/deliveries/:eventId/resend',
      summary: 'One new attempt now, same event ID and body',
      tags,
      request: { params: EventIdParams },
      before,
      responses: {
        200: { description: 'data.outcome and data.attempt', schema: success(ResendResult) },
        202: {
          description: 'No worker took the attempt in time: data.outcome is queued; it is sent when one does',
          schema: success(ResendResult),
        },
      },
      handler: async ({ params }, req, res) => {
        const r = await sales.resend(org(req), params.eventId);
        if (r.outcome === 'queued') res.status(202);
        res.json(
          ok({
            outcome: r.outcome,
            attempt: r.attempt ? attemptView(r.attempt) : null,
            ...(r.outcome === 'queued' ? { message: QUEUED } : {}),
          }),
        );
      },
    }),
  ];
}
