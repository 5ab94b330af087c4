/**
 * The page a stopped deployment's host answers, from the router itself: 503 with the deployment's own ID and the call
 * that starts it again, as HTML for browsers and as text for everything else.
 */

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export const NO_STORE = { 'Cache-Control': ['no-store'], 'X-Content-Type-Options': ['nosniff'] };

/** The call that brings the deployment back, with its own ID: the owner copies it as it stands. */
const startCall = (deploymentId: string) => `POST /platform/deployments/${deploymentId}/start`;

function stoppedText(deploymentId: string, host: string): string {
  return (
    `The deployment at ${host} is stopped, so nothing answers here for now.\n` +
    `If it is yours, start it again: ${startCall(deploymentId)} on your Slipway api ` +
    '(or redeploy it); this address stays the same.\n'
  );
}

function stoppedHtml(deploymentId: string, host: string): string {
  const h = escapeHtml(host);
  return (
    '<!doctype html><html><head><meta charset="utf-8"><title>Deployment stopped</title></head>' +
    `<body><h1>This deployment is stopped</h1><p>The deployment at <b>${h}</b> is stopped, so nothing answers ` +
    `here for now.</p><p>If it is yours, start it again (<code>${escapeHtml(startCall(deploymentId))}</code> on ` +
    'your Slipway api, or redeploy it); this address stays the same.</p></body></html>\n'
  );
}

/** The stopped page: as a page for browsers and as text otherwise. */
export function stoppedPages(deploymentId: string, host: string) {
  const page = (type: string, body: string) => ({
    handler: 'static_response',
    status_code: 503,
    headers: { 'Content-Type': [type], 'Retry-After': ['60'], ...NO_STORE },
    body,
  });
  return [
    {
      match: [{ header: { Accept: ['*text/html*'] } }],
      handle: [page('text/html; charset=utf-8', stoppedHtml(deploymentId, host))],
      terminal: true,
    },
    { handle: [page('text/plain; charset=utf-8', stoppedText(deploymentId, host))], terminal: true },
  ];
}
