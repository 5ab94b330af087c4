import express, { type Express } from 'express';

import { verifySalesSignature } from '@shared/sales/signature';

export interface SalesEvent {
  id: string;
  type: 'sale.completed' | 'sale.refunded' | 'subscription.updated' | 'test';
  createdAt: string;
  data: {
    saleId: string;
    product: { id: string; name: string; billingType: string };
    buyer: { email: string; name: string };
    subscription: { id: string; status: string; currentPeriodEnd: string } | null;
  };
}

/** What a seller's app does with access; a real one writes to its own user store. */
export interface AccessStore {
  grant(email: string, productId: string): void | Promise<void>;
  revoke(email: string, productId: string): void | Promise<void>;
}

/**
 * A minimal receiver: verify the signature over the raw bytes (400 on a mismatch), skip event IDs already
 * handled (deliveries may repeat and arrive out of order), act per event type, answer 2xx fast.
 */
export function createSalesReceiver(opts: { secret: string; access: AccessStore; seen?: Set<string> }): Express {
  const seen = opts.seen ?? new Set<string>();
  const app = express();
  app.post('/webhooks/sales', express.raw({ type: '*/*', limit: '1mb' }), async (req, res) => {
    const raw = req.body as Buffer;
    if (!verifySalesSignature(raw, req.get('x-sales-signature'), opts.secret)) {
      res.status(400).json({ error: 'bad signature' });
      return;
    }
    const event = JSON.parse(raw.toString('utf8')) as SalesEvent;
    if (seen.has(event.id)) {
      res.status(200).json({ duplicate: true });
      return;
    }
    const { buyer, product, subscription } = event.data;
    if (event.type === 'sale.completed') await opts.access.grant(buyer.email, product.id);
    if (event.type === 'sale.refunded') await opts.access.revoke(buyer.email, product.id);
    if (event.type === 'subscription.updated' && subscription?.status !== 'active')
      await opts.access.revoke(buyer.email, product.id);
    seen.add(event.id);
    res.status(200).json({ received: true });
  });
  return app;
}
