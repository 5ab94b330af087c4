import type { Api } from '../api';
import type { Output } from '../output';
import { readDeployment, type Target } from '../target';
import { type DeploymentView, printable } from '../view';

/** "failed while starting: <message>", then the hint and the last lines when the server gives them. */
export function describeFailure(d: DeploymentView): string {
  if (d.status !== 'failed') return `${d.name} is ${d.status}, not running`;
  const e = d.error;
  if (!e) return `${d.name} failed`;
  const lines = [`${d.name} failed${e.phase ? ` (${e.phase})` : ''}: ${printable(e.message)}`];
  if (e.hint) lines.push(`hint: ${printable(e.hint)}`);
  if (e.lastLines?.length) lines.push('last lines:', ...e.lastLines.map((l) => `  ${printable(l)}`));
  return lines.join('\n');
}

function sourceText(s: DeploymentView['source']): string {
  if (s.type === 'image') return `image ${s.image}`;
  if (s.type === 'git') return `git ${s.repoUrl}${s.branch ? ` (${s.branch})` : ''}`;
  return `upload ${s.uploadId ?? ''}`.trim();
}

const row = (k: string, v: string): [string, string] => [k, v];

export function statusText(d: DeploymentView): string {
  const rows = [
    row('status', d.status),
    row('url', d.url ?? '-'),
    row('source', sourceText(d.source)),
    row('port', String(d.port)),
    row('env', d.envVarNames?.length ? d.envVarNames.join(', ') : '-'),
    ...(d.revision !== undefined ? [row('release', `r${d.revision}`)] : []),
    ...(d.replicas !== undefined ? [row('replicas', String(d.replicas))] : []),
    row('created', d.createdAt),
  ];
  const out = [`${d.name} (${d.id})`, ...rows.map(([k, v]) => `  ${k.padEnd(8)} ${printable(v)}`)];
  if (d.status === 'failed')
    out.push(
      ...describeFailure(d)
        .split('\n')
        .map((l) => `  ${l}`),
    );
  const lf = d.lastFailure;
  if (lf && d.status !== 'failed') {
    out.push(`  last failure${lf.phase ? ` (${lf.phase})` : ''}: ${printable(lf.message)}`);
    if (lf.hint) out.push(`  hint: ${printable(lf.hint)}`);
  }
  const releases = d.releases?.recent ?? [];
  if (releases.length) {
    out.push(`releases (${d.releases?.total ?? releases.length}, newest first):`);
    for (const r of releases) {
      const how = r.trigger === 'rollback' && r.rollbackOf !== undefined ? `rollback to r${r.rollbackOf}` : r.trigger;
      out.push(`  r${r.revision}  ${(r.status ?? '').padEnd(10)} ${(how ?? '').padEnd(16)} ${r.createdAt ?? ''}`);
    }
  }
  if (d.events?.length) {
    out.push('events:');
    for (const e of d.events) out.push(`  ${e.at}  ${e.status.padEnd(9)} ${printable(e.message)}`);
  }
  return out.join('\n');
}

export async function status(api: Api, out: Output, target: Target): Promise<void> {
  const d = await readDeployment(api, target);
  out.result(d, statusText(d));
}
