// Notes kept in the PostgreSQL database Slipway gives the app as DATABASE_URL:
//   GET  /notes          every note, oldest first
//   POST /notes  "text"  adds one (the body is the note)
//   GET  /               which release answers (RELEASE, if set) and how many notes there are
const http = require('node:http');
const { Pool } = require('pg');

if (!process.env.DATABASE_URL) {
  console.error(
    'DATABASE_URL is not set: create a database for this deployment (POST /platform/deployments/{id}/databases)',
  );
  process.exit(1);
}
const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 4 });
const ready = pool.query(
  'CREATE TABLE IF NOT EXISTS notes (id serial PRIMARY KEY, body text NOT NULL, at timestamptz NOT NULL DEFAULT now())',
);

const json = (res, status, value) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
};

http
  .createServer(async (req, res) => {
    try {
      await ready;
      if (req.method === 'GET' && req.url === '/notes') {
        const { rows } = await pool.query('SELECT body FROM notes ORDER BY id');
        return json(
          res,
          200,
          rows.map((r) => r.body),
        );
      }
      if (req.method === 'POST' && req.url === '/notes') {
        let body = '';
        for await (const chunk of req) body += chunk;
        await pool.query('INSERT INTO notes (body) VALUES ($1)', [body]);
        return json(res, 201, { added: body });
      }
      if (req.method === 'GET' && req.url === '/') {
        const { rows } = await pool.query('SELECT count(*)::int AS n FROM notes');
        return json(res, 200, { release: process.env.RELEASE ?? null, notes: rows[0].n });
      }
      json(res, 404, { error: 'GET /notes, POST /notes or GET /' });
    } catch (err) {
      json(res, 500, { error: String(err.message) });
    }
  })
  .listen(Number(process.env.PORT ?? 8080), () => console.log('notes app listening'));
