/**
 * Turns a failed build step and its raw output (npm's, pip's, the engine's) into one sentence a user can act on.
 * The raw text stays in the build log; the message names the step and says what was wrong and what to do, never
 * quoting engine internals. Rules go from the most specific to the generic exit code.
 */

const NPM = String.raw`npm (?:ERR!|error)`;

interface Rule {
  match: RegExp;
  /** Only for steps this accepts (a network error means a missing base image only at FROM). */
  when?: (step: string) => boolean;
  explain: (m: RegExpExecArray, step: string) => string;
}

const BASES = 'slipway/node, slipway/python or slipway/static';

const RULES: Rule[] = [
  {
    // The engine could not pull a base image: no registry is reachable from here.
    match:
      /pull access denied|manifest (?:for \S+ )?(?:not found|unknown)|repository does not exist|no such host|dial tcp|i\/o timeout|No such image/i,
    when: (step) => /^FROM\s/i.test(step),
    explain: (_m, step) => {
      const image = /^FROM\s+(?:--platform=\S+\s+)?(\S+)/i.exec(step)?.[1];
      return image
        ? `the base image ${image} is not on this machine and cannot be pulled (no container registry is reachable); build FROM ${BASES}, or an image already on the engine`
        : `an image the build needs is not on this machine and cannot be pulled; use ${BASES}`;
    },
  },
  // Before the not-found rules: pip reports an index it could not reach as a package with no versions.
  {
    match:
      /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|ECONNRESET|Temporary failure in name resolution|Failed to establish a new connection|Network is unreachable|SELF_SIGNED_CERT|UNABLE_TO_GET_ISSUER_CERT|unable to get local issuer certificate|CERTIFICATE_VERIFY_FAILED/i,
    explain: () =>
      'the step could not reach the package registry (a network or certificate error); deploy again, and if it keeps failing the registry or this installation’s network is at fault',
  },
  {
    match: new RegExp(String.raw`${NPM} 404\s+'(@?[^@'\s]+)@[^']*' is not in this registry`),
    explain: (m) =>
      `the dependency "${m[1]}" was not found in the npm registry; check its name in package.json (and package-lock.json)`,
  },
  {
    match: new RegExp(String.raw`${NPM} 404 Not Found - GET \S+/(@[^/\s]+(?:%2[fF]|/)[^/\s]+|[^/\s@]+)(?:\s|$)`),
    explain: (m) =>
      `the dependency "${decodeURIComponent(m[1]!)}" was not found in the npm registry; check its name in package.json (and package-lock.json)`,
  },
  {
    match: /No matching version found for (@?[^@\s]+)@(\S+?)\.?(?:\s|$)/,
    explain: (m) =>
      `no published version of "${m[1]}" matches "${m[2]}" in the npm registry; change the version in package.json`,
  },
  {
    match: /`npm ci` can only install packages when your package\.json and package-lock\.json/,
    explain: () =>
      'package-lock.json does not match package.json; run npm install locally and commit the updated package-lock.json',
  },
  {
    match: new RegExp(String.raw`${NPM} code EJSONPARSE[\s\S]*?(?:JSON\.parse\s+)?(Unexpected[^\n]*|Expected[^\n]*)`),
    explain: (m) =>
      `package.json is not valid JSON (${m[1]!.replace(/ while parsing.*$/, '').trim()}); fix it and deploy again`,
  },
  {
    match: new RegExp(String.raw`${NPM} Missing script: "([^"]+)"`),
    explain: (m) =>
      `package.json has no "${m[1]}" script; add one to "scripts"${m[1] === 'start' ? ', e.g. "start": "node server.js"' : ''}`,
  },
  {
    match:
      /Could not find a version that satisfies the requirement (\S+) \(from versions: ([^)]*)\)|No matching distribution found for (\S+)/,
    explain: (m) => {
      const req = m[1] ?? m[3]!;
      const name = /^[A-Za-z0-9._-]+/.exec(req)?.[0] ?? req;
      return m[2] && m[2].trim() !== 'none'
        ? `no published version of "${name}" matches "${req}" in the Python package index; change the version in requirements.txt`
        : `the dependency "${name}" was not found in the Python package index; check its name in requirements.txt`;
    },
  },
  {
    match: /ERROR: Invalid requirement: '([^']*)'/,
    explain: (m) => `requirements.txt has a line pip cannot read ("${m[1]}"); fix it and deploy again`,
  },
  {
    match: /Could not open requirements file/,
    explain: () => 'the step needs a requirements.txt that is not in the source',
  },
  {
    match: /(npm run build wrote no [^\n]*index\.html)/,
    explain: (m) => `${m[1]}; make the build script write the site there`,
  },
  {
    match: /COPY failed: (?:file not found in build context or excluded by \.dockerignore: )?stat (\S+?):/,
    explain: (m) => `COPY found no "${m[1]}" in the source (or .dockerignore leaves it out)`,
  },
  {
    match: /unknown instruction: (\S+)/i,
    explain: (m) => `the Dockerfile has an instruction Docker does not know ("${m[1]}")`,
  },
  {
    match: /returned a non-zero code: (\d+)/,
    explain: (m, step) => {
      const code = Number(m[1]);
      if (code === 137) return 'the command was killed (exit code 137), usually for running out of memory';
      const script = /npm run (\S+)/.exec(step)?.[1];
      return script
        ? `the "${script}" script of package.json failed (exit code ${code}); its output is in the build log`
        : `the command failed (exit code ${code}); its output is in the build log`;
    },
  },
];

/** At most this much of a step is quoted: generated steps can be long shell lines. */
const STEP_MAX = 80;

/**
 * The message of a failed build: `the build failed at step "<step>": <why, in plain words>`. `rawText` is what
 * the step printed followed by the engine's error; it is matched, never quoted beyond names it contains.
 */
export function explainBuildFailure(step: string, rawText: string): string {
  const shown = step.length > STEP_MAX ? `${step.slice(0, STEP_MAX - 1)}…` : step;
  let why = 'the step failed; its output is in the build log';
  // The engine colours a step's stderr chunk by chunk, so escapes can fall in the middle of `npm ERR!`.
  // eslint-disable-next-line no-control-regex
  const text = rawText.replace(/\u001b\[[0-9;]*[A-Za-z]/g, '');
  for (const rule of RULES) {
    const m = rule.when && !rule.when(step) ? null : rule.match.exec(text);
    if (m) {
      why = rule.explain(m, step);
      break;
    }
  }
  return step ? `the build failed at step "${shown}": ${why}` : `the build failed: ${why}`;
}
