// Files kept in the bucket Slipway links to the app (S3_ENDPOINT, S3_BUCKET, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY,
// S3_REGION, S3_FORCE_PATH_STYLE):
//   PUT /files/<key>            stores the body under <key>
//   GET /files/<key>            reads it back
//   GET /probe?bucket=<name>    tries a put and a get in another bucket: the answer is "ok" or the error's name
//   GET /                       whether a bucket is linked
const http = require('node:http');
const { GetObjectCommand, PutObjectCommand, S3Client } = require('@aws-sdk/client-s3');

const linked = Boolean(process.env.S3_BUCKET);
const s3 =
  linked &&
  new S3Client({
    endpoint: process.env.S3_ENDPOINT,
    region: process.env.S3_REGION || 'us-east-1',
    forcePathStyle: process.env.S3_FORCE_PATH_STYLE === 'true',
    credentials: { accessKeyId: process.env.S3_ACCESS_KEY_ID, secretAccessKey: process.env.S3_SECRET_ACCESS_KEY },
  });

const readBody = (req) =>
  new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });

const send = (res, status, value) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
};

http
  .createServer(async (req, res) => {
    const url = new URL(req.url, 'http://app');
    try {
      if (url.pathname === '/') return send(res, 200, { linked, bucket: process.env.S3_BUCKET || null });
      if (!linked) return send(res, 409, { error: 'no bucket is linked: POST /platform/buckets/{id}/links' });
      const key = url.pathname.startsWith('/files/') ? decodeURIComponent(url.pathname.slice(7)) : '';
      if (key && req.method === 'PUT') {
        await s3.send(new PutObjectCommand({ Bucket: process.env.S3_BUCKET, Key: key, Body: await readBody(req) }));
        return send(res, 200, { stored: key });
      }
      if (key && req.method === 'GET') {
        const got = await s3.send(new GetObjectCommand({ Bucket: process.env.S3_BUCKET, Key: key }));
        return send(res, 200, { key, body: await got.Body.transformToString() });
      }
      if (url.pathname === '/probe') {
        const bucket = url.searchParams.get('bucket');
        const outcome = { put: 'ok', get: 'ok' };
        await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'probe.txt', Body: 'x' })).catch((e) => {
          outcome.put = e.name;
        });
        await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'secret.txt' })).catch((e) => {
          outcome.get = e.name;
        });
        return send(res, 200, outcome);
      }
      return send(res, 404, { error: 'PUT or GET /files/<key>, GET /probe?bucket=<name>' });
    } catch (err) {
      return send(res, 500, { error: err.name, message: err.message });
    }
  })
  .listen(Number(process.env.PORT) || 8080, '0.0.0.0');
