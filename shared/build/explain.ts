/**
 * Turns a failed build step and its raw output (npm's, pip's, the engine's) into one sentence a user can act on.
 * The raw text stays in the build log; the message names the step and says what was wrong and what to do, never
 * quoting engine internals. Rules go from the most specific to the generic exit code.
 */
import { causeInLines } from '../deployments/evidence';
import { unreachableReason } from '../images/pull-failure';
import { tryParseImageReference } from '../images/reference';
import { closeName } from './close-name';

const NPM = String.raw`npm (?:ERR!|error)`;

/** What the build knows beyond its output, to word a failure better. */
export interface BuildFacts {
  /**
   * Package names the source uses: the ones its code imports and its package.json lists. A dependency the
   * registry lacks (or has no such version of) that is one typo away from one of these is named as likely
   * misspelt.
   */
  knownNames?: readonly string[];
}

interface Rule {
  match: RegExp;
  /** Only for steps this accepts (a network error means a missing base image only at FROM). */
  when?: (step: string) => boolean;
  explain: (m: RegExpExecArray, step: string, facts: BuildFacts, text: string) => string;
}

const BASES = 'slipway/node, slipway/python or slipway/static';

/** ` (did you mean "express"?)` when `name` is a likely typo of a name the source uses, else nothing. */
function didYouMean(name: string, facts: BuildFacts): string {
  const close = closeName(name, facts.knownNames ?? []);
  return close ? ` (did you mean "${close}"? the source uses that name)` : '';
}

const RULES: Rule[] = [
  {
    // The engine could not pull a base image: its registry did not answer, or answered that it has no such image.
    match:
      /pull access denied|manifest (?:for \S+ )?(?:not found|unknown)|repository does not exist|no such host|dial tcp|i\/o timeout|No such image/i,
    when: (step) => /^FROM\s/i.test(step),
    explain: (_m, step, _facts, text) => {
      const image = /^FROM\s+(?:--platform=\S+\s+)?(\S+)/i.exec(step)?.[1];
      if (!image) return `an image the build needs is not on this machine and cannot be pulled; use ${BASES}`;
      const reason = unreachableReason(text);
      const registry = tryParseImageReference(image)?.registryHost;
      return reason
        ? `the base image ${image} is not on this machine and cannot be pulled: the registry ${registry ?? 'it names'} could not be reached (${reason}); build FROM ${BASES}, or an image already on the engine`
        : `the base image ${image} is not on this machine and its registry has no such image (or does not serve it publicly); check its name and tag, or build FROM ${BASES} or an image already on the engine`;
    },
  },
  // Before the not-found rules: pip reports an index it could not reach as a package with no versions.
  {
    match:
      /\b(?:ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|ECONNRESET)\b|Temporary failure in name resolution|Failed to establish a new connection|Network is unreachable|SELF_SIGNED_CERT|UNABLE_TO_GET_ISSUER_CERT|unable to get local issuer certificate|CERTIFICATE_VERIFY_FAILED/i,
    explain: () =>
      'the step could not reach the package registry (a network or certificate error); deploy again, and if it keeps failing the registry or this installation’s network is at fault',
  },
  {
    match: new RegExp(String.raw`${NPM} 404\s+'(@?[^@'\s]+)@[^']*' is not in this registry`),
    explain: (m, _step, facts) =>
      `the dependency "${m[1]}" was not found in the npm registry${didYouMean(m[1]!, facts)}; check its name in package.json (and package-lock.json)`,
  },
  {
    match: new RegExp(String.raw`${NPM} 404 Not Found - GET \S+/(@[^/\s]+(?:%2[fF]|/)[^/\s]+|[^/\s@]+)(?:\s|$)`),
    explain: (m, _step, facts) => {
      const name = decodeURIComponent(m[1]!);
      return `the dependency "${name}" was not found in the npm registry${didYouMean(name, facts)}; check its name in package.json (and package-lock.json)`;
    },
  },
  {
    match: /No matching version found for (@?[^@\s]+)@(\S+?)\.?(?:\s|$)/,
    explain: (m, _step, facts) => {
      // A misspelt name can exist too (someone published it): then no version matches, and the name is at fault.
      const close = closeName(m[1]!, facts.knownNames ?? []);
      return close
        ? `no published version of "${m[1]}" matches "${m[2]}" in the npm registry: "${m[1]}" is possibly a misspelling of "${close}", which the source uses; fix the name (or the version) in package.json`
        : `no published version of "${m[1]}" matches "${m[2]}" in the npm registry; change the version in package.json`;
    },
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
    // A step (a build script, a postinstall) that loads a package the install did not bring.
    match: /Cannot find (?:module|package) '[^']+'|ModuleNotFoundError: No module named '[^']+'/,
    explain: (_m, _step, _facts, text) => {
      const found = causeInLines(text.split('\n'));
      if (found?.cause === 'missing_module')
        return found.language === 'node'
          ? `the step could not load the package "${found.module}", which is not installed; add it to package.json (devDependencies will do for a build script)`
          : `the step could not import the module "${found.module}", which is not installed; add the package that provides it to requirements.txt`;
      if (found?.cause === 'missing_file') return `the step could not load ${found.file}, which is not in the source`;
      return 'the step could not load a module; its output is in the build log';
    },
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
export function explainBuildFailure(step: string, rawText: string, facts: BuildFacts = {}): string {
  const shown = step.length > STEP_MAX ? `${step.slice(0, STEP_MAX - 1)}…` : step;
  let why = 'the step failed; its output is in the build log';
  // The engine colours a step's stderr chunk by chunk, so escapes can fall in the middle of `npm ERR!`.
  // eslint-disable-next-line no-control-regex
  const text = rawText.replace(/\u001b\[[0-9;]*[A-Za-z]/g, '');
  for (const rule of RULES) {
    const m = rule.when && !rule.when(step) ? null : rule.match.exec(text);
    if (m) {
      why = rule.explain(m, step, facts, text);
      break;
    }
  }
  return step ? `the build failed at step "${shown}": ${why}` : `the build failed: ${why}`;
}
