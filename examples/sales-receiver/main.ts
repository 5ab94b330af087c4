// Run: SALES_SIGNING_SECRET=whsec_… PORT=4000 node --import tsx examples/sales-receiver/main.ts
import { createSalesReceiver } from './receiver';

const secret = process.env.SALES_SIGNING_SECRET;
if (!secret) {
  console.error('set SALES_SIGNING_SECRET to the secret PUT /platform/sales/webhook returned');
  process.exit(1);
}
const access = new Map<string, Set<string>>();
const app = createSalesReceiver({
  secret,
  access: {
    grant: (email, productId) => void access.set(email, (access.get(email) ?? new Set()).add(productId)),
    revoke: (email, productId) => void access.get(email)?.delete(productId),
  },
});
const port = Number(process.env.PORT ?? 4000);
app.listen(port, '127.0.0.1', () => console.log(`sales receiver on http://127.0.0.1:${port}/webhooks/sales`));
