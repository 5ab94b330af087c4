import { randomBytes } from 'node:crypto';

/**
 * The rules a bucket's label is held to, and the real bucket name made from it. Labels follow S3's bucket-name rules
 * kept narrow (lower-case letters, digits and "-", no dots, so a label can never look like an IP address or need
 * virtual-host TLS tricks), 3 to 40 characters, so `u-<8 hex>-<label>` stays within S3's 63.
 */
/** Runs of letters and digits joined by single dashes: no leading, trailing or doubled `-`. */
export const BUCKET_NAME_PATTERN = /^[a-z0-9]+(-[a-z0-9]+)*$/;
export const BUCKET_NAME_MIN = 3;
export const BUCKET_NAME_MAX = 40;

/** Every real bucket made for a user starts with this: nothing the service stores for itself does by default. */
export const USER_BUCKET_PREFIX = 'u-';

export function bucketNameError(name: string): string | undefined {
  if (name.length < BUCKET_NAME_MIN || name.length > BUCKET_NAME_MAX)
    return `a bucket name is ${BUCKET_NAME_MIN} to ${BUCKET_NAME_MAX} characters long`;
  if (!BUCKET_NAME_PATTERN.test(name))
    return 'a bucket name has lower-case letters, digits and single "-" only, and starts and ends with a letter or digit';
  return undefined;
}

/**
 * The store's bucket for a label: a random 8-hex tag keeps it unique across organisations (a unique index on the
 * record catches the rare clash), and a name among `reserved` (the service's own buckets) is never produced.
 */
export function realBucketName(label: string, reserved: readonly string[], tag = randomBytes(4).toString('hex')) {
  const err = bucketNameError(label);
  if (err) throw new TypeError(err);
  for (let t = tag; ; t = randomBytes(4).toString('hex')) {
    const name = `${USER_BUCKET_PREFIX}${t}-${label}`;
    if (!reserved.includes(name)) return name;
  }
}
