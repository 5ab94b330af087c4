import { createHmac } from 'node:crypto';

import {
  signSalesBody,
  standardWebhookSignature,
  verifySalesSignature,
  verifyStandardWebhook,
} from '@shared/sales/signature';

describe('sales webhook signatures', () => {
  const body = Buffer.from('{"id":"evt_1","type":"test"}');
  const secret = 'whsec_c2VjcmV0LWtleS1ieXRlcw==';

  it('signs the raw bytes as sha256=<hex HMAC>', () => {
    const hex = createHmac('sha256', secret).update(body).digest('hex');
    expect(signSalesBody(body, secret)).toBe(`sha256=${hex}`);
  });

  it('verifies a good signature and refuses tampering, other secrets and malformed headers', () => {
    const header = signSalesBody(body, secret);
    expect(verifySalesSignature(body, header, secret)).toBe(true);
    expect(verifySalesSignature(Buffer.from('{"id":"evt_1","type":"tesT"}'), header, secret)).toBe(false);
    expect(verifySalesSignature(body, header, 'whsec_other')).toBe(false);
    for (const bad of [undefined, '', 'sha256=', 'sha1=abc', header.toUpperCase(), `${header}0`]) {
      expect(verifySalesSignature(body, bad, secret)).toBe(false);
    }
  });

  it('signs Standard Webhooks "id.timestamp.body" with each secret during a rotation overlap', () => {
    const sig = standardWebhookSignature('evt_1', 1700000000, body, [secret, 'whsec_b2xkLWtleQ==']);
    const parts = sig.split(' ');
    expect(parts).toHaveLength(2);
    const key = Buffer.from('c2VjcmV0LWtleS1ieXRlcw==', 'base64');
    expect(parts[0]).toBe(
      `v1,${createHmac('sha256', key).update(`evt_1.1700000000.${body.toString()}`).digest('base64')}`,
    );
    const headers = { id: 'evt_1', timestamp: '1700000000', signature: sig };
    expect(verifyStandardWebhook(headers, body, 'whsec_b2xkLWtleQ==', { nowS: 1700000010 })).toBe(true);
    expect(verifyStandardWebhook(headers, body, secret, { nowS: 1700000010 })).toBe(true);
    expect(verifyStandardWebhook(headers, body, secret, { nowS: 1700001000 })).toBe(false);
  });
});
