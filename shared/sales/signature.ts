import { createHmac, timingSafeEqual } from 'node:crypto';

/** `sha256=<hex>`: HMAC-SHA256 of the raw body bytes keyed with the signing secret (spec, "Delivery"). */
export function signSalesBody(rawBody: Buffer | string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}`;
}

/**
 * A receiver's check of `x-sales-signature`: recomputes the HMAC over the raw bytes and compares in constant
 * time. Returns false for a missing or malformed header rather than throwing.
 */
export function verifySalesSignature(
  rawBody: Buffer | string,
  header: string | undefined | null,
  secret: string,
): boolean {
  if (!header || !/^sha256=[0-9a-f]{64}$/.test(header)) return false;
  const expected = Buffer.from(signSalesBody(rawBody, secret));
  const given = Buffer.from(header);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The secret of Standard Webhooks: `whsec_` + base64 key bytes. */
function keyOf(secret: string): Buffer {
  return secret.startsWith('whsec_') ? Buffer.from(secret.slice('whsec_'.length), 'base64') : Buffer.from(secret);
}

/**
 * `webhook-signature` of Standard Webhooks: `v1,<base64 HMAC of "id.timestamp.body">`, one per secret
 * (space-separated during a rotation overlap), so receivers get replay protection and key rotation.
 */
export function standardWebhookSignature(
  id: string,
  timestampS: number,
  rawBody: Buffer | string,
  secrets: string[],
): string {
  return secrets
    .map((secret) => {
      const mac = createHmac('sha256', keyOf(secret)).update(`${id}.${timestampS}.`).update(rawBody).digest('base64');
      return `v1,${mac}`;
    })
    .join(' ');
}

/** A receiver's check of the Standard Webhooks headers, with a tolerance on the timestamp against replays. */
export function verifyStandardWebhook(
  headers: { id: string; timestamp: string; signature: string },
  rawBody: Buffer | string,
  secret: string,
  opts: { toleranceS?: number; nowS?: number } = {},
): boolean {
  const ts = Number(headers.timestamp);
  const now = opts.nowS ?? Math.floor(Date.now() / 1000);
  if (!Number.isInteger(ts) || Math.abs(now - ts) > (opts.toleranceS ?? 300)) return false;
  const expected = Buffer.from(standardWebhookSignature(headers.id, ts, rawBody, [secret]));
  return headers.signature.split(' ').some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
