import { explainBuildFailure } from '@shared/build/explain';

// Raw output as npm 9 (Debian trixie), pip 25 and the Docker 20.10 classic builder print it.
const exit = (code: number, cmd: string) => `The command '/bin/sh -c ${cmd}' returned a non-zero code: ${code}`;

describe('explainBuildFailure', () => {
  it.each([
    [
      'RUN npm ci --no-audit --no-fund',
      `npm ERR! code E404\nnpm ERR! 404 Not Found - GET https://registry.npmjs.org/slipway-no-such-pkg-zz\nnpm ERR! 404 \nnpm ERR! 404  'slipway-no-such-pkg-zz@1.0.0' is not in this registry.\nnpm ERR! A complete log of this run can be found in:\nnpm ERR!     /root/.npm/_logs/2026-11-23T11_37_13_067Z-debug-0.log\n${exit(1, 'npm ci --no-audit --no-fund')}`,
      'the build failed at step "RUN npm ci --no-audit --no-fund": the dependency "slipway-no-such-pkg-zz" was not found in the npm registry; check its name in package.json (and package-lock.json)',
    ],
    [
      'RUN npm install',
      "npm ERR! code E404\nnpm ERR! 404 Not Found - GET https://registry.npmjs.org/@types%2fslipway-nope-zz\nnpm ERR! 404  '@types/slipway-nope-zz@1.0.0' is not in this registry.",
      'the build failed at step "RUN npm install": the dependency "@types/slipway-nope-zz" was not found in the npm registry; check its name in package.json (and package-lock.json)',
    ],
    [
      'RUN npm install',
      'npm ERR! code ETARGET\nnpm ERR! notarget No matching version found for express@99.0.0.\nnpm ERR! notarget In most cases you or one of your dependencies are requesting',
      'the build failed at step "RUN npm install": no published version of "express" matches "99.0.0" in the npm registry; change the version in package.json',
    ],
    [
      'RUN npm ci',
      'npm ERR! code EUSAGE\nnpm ERR! \nnpm ERR! `npm ci` can only install packages when your package.json and package-lock.json or npm-shrinkwrap.json are in sync.',
      'the build failed at step "RUN npm ci": package-lock.json does not match package.json; run npm install locally and commit the updated package-lock.json',
    ],
    [
      'RUN npm install',
      'npm ERR! code EJSONPARSE\nnpm ERR! path /app/package.json\nnpm ERR! JSON.parse Unexpected end of JSON input while parsing "{ \\"x\\": \\n"\nnpm ERR! JSON.parse Failed to parse JSON data.',
      'the build failed at step "RUN npm install": package.json is not valid JSON (Unexpected end of JSON input); fix it and deploy again',
    ],
    [
      'RUN npm start',
      'npm ERR! Missing script: "start"\nnpm ERR! \nnpm ERR! Did you mean one of these?',
      'the build failed at step "RUN npm start": package.json has no "start" script; add one to "scripts", e.g. "start": "node server.js"',
    ],
    [
      'RUN pip install --no-cache-dir -r requirements.txt',
      `ERROR: Could not find a version that satisfies the requirement slipway-no-such-dist-zz (from versions: none)\nERROR: No matching distribution found for slipway-no-such-dist-zz\n${exit(1, 'pip install')}`,
      'the build failed at step "RUN pip install --no-cache-dir -r requirements.txt": the dependency "slipway-no-such-dist-zz" was not found in the Python package index; check its name in requirements.txt',
    ],
    [
      'RUN pip install -r requirements.txt',
      'ERROR: Could not find a version that satisfies the requirement flask==99.0 (from versions: 0.1, 3.1.3)\nERROR: No matching distribution found for flask==99.0',
      'the build failed at step "RUN pip install -r requirements.txt": no published version of "flask" matches "flask==99.0" in the Python package index; change the version in requirements.txt',
    ],
    [
      'RUN pip install -r requirements.txt',
      "ERROR: Invalid requirement: 'fl ask': Expected end or semicolon (after name and no valid version specifier)",
      'the build failed at step "RUN pip install -r requirements.txt": requirements.txt has a line pip cannot read ("fl ask"); fix it and deploy again',
    ],
    [
      'RUN pip install -r requirements.txt',
      "WARNING: Retrying (Retry(total=0)) after connection broken by 'NewConnectionError(': Failed to establish a new connection: [Errno -3] Temporary failure in name resolution')'\nERROR: Could not find a version that satisfies the requirement flask (from versions: none)",
      'the build failed at step "RUN pip install -r requirements.txt": the step could not reach the package registry (a network or certificate error); deploy again, and if it keeps failing the registry or this installation’s network is at fault',
    ],
    [
      'FROM node:20-slim',
      'Get "https://registry-1.docker.io/v2/": dial tcp: lookup registry-1.docker.io on 10.255.255.53:53: no such host',
      'the build failed at step "FROM node:20-slim": the base image node:20-slim is not on this machine and cannot be pulled: the registry docker.io could not be reached (its host name does not resolve); build FROM slipway/node, slipway/python or slipway/static, or an image already on the engine',
    ],
    [
      'FROM registry.example.com/team/base:2',
      'manifest for registry.example.com/team/base:2 not found: manifest unknown: manifest unknown',
      'the build failed at step "FROM registry.example.com/team/base:2": the base image registry.example.com/team/base:2 is not on this machine and its registry has no such image (or does not serve it publicly); check its name and tag, or build FROM slipway/node, slipway/python or slipway/static or an image already on the engine',
    ],
    [
      'RUN npm run build',
      `> site@1.0.0 build\n> vite build\n\nError: Cannot find module 'vite'\nRequire stack:\n- /app/build.js\n${exit(1, 'npm run build')}`,
      'the build failed at step "RUN npm run build": the step could not load the package "vite", which is not installed; add it to package.json (devDependencies will do for a build script)',
    ],
    [
      'RUN python manage.py collectstatic --noinput',
      `Traceback (most recent call last):\nModuleNotFoundError: No module named 'django'\n${exit(1, 'python manage.py collectstatic --noinput')}`,
      'the build failed at step "RUN python manage.py collectstatic --noinput": the step could not import the module "django", which is not installed; add the package that provides it to requirements.txt',
    ],
    [
      'RUN npm run build',
      `compile error: missing semicolon\nnpm ERR! Lifecycle script \`build\` failed with error:\n${exit(1, 'npm run build')}`,
      'the build failed at step "RUN npm run build": the "build" script of package.json failed (exit code 1); its output is in the build log',
    ],
    [
      'RUN make',
      exit(2, 'make'),
      'the build failed at step "RUN make": the command failed (exit code 2); its output is in the build log',
    ],
    [
      'COPY www /srv/www',
      'COPY failed: file not found in build context or excluded by .dockerignore: stat www: file does not exist',
      'the build failed at step "COPY www /srv/www": COPY found no "www" in the source (or .dockerignore leaves it out)',
    ],
  ])('%s: %#', (step, raw, message) => {
    expect(explainBuildFailure(step, raw)).toBe(message);
  });

  it('names the generated static step by what it found missing, and shortens a long step', () => {
    const step = `RUN for d in dist build out; do if [ -f "$d/index.html" ]; then mv "$d" /site && exit 0; fi; done; echo x`;
    const message = explainBuildFailure(
      step,
      `npm run build wrote no dist/, build/ or out/ folder with an index.html\n${exit(1, 'for d')}`,
    );
    expect(message).toBe(
      `the build failed at step "${step.slice(0, 79)}…": npm run build wrote no dist/, build/ or out/ folder with an index.html; make the build script write the site there`,
    );
  });

  it("reads through the colour escapes the engine wraps around a step's stderr chunks", () => {
    const red = (t: string) => `\u001b[91m${t}\u001b[0m`;
    const raw = [
      red('npm'),
      red(' '),
      red('ERR!'),
      red(' code E404\n'),
      red('npm'),
      red(" ERR! 404  'left-padd@1.0.0' is not in this registry.\n"),
      exit(1, 'npm ci'),
    ].join('');
    expect(explainBuildFailure('RUN npm ci', raw)).toMatch(
      /: the dependency "left-padd" was not found in the npm registry;/,
    );
  });

  describe('a dependency one typo away from a name the source uses is named as likely misspelt', () => {
    const etarget = (name: string, range: string) =>
      `npm ERR! code ETARGET\nnpm ERR! notarget No matching version found for ${name}@${range}.\nnpm ERR! notarget In most cases you or one of your dependencies are requesting\n${exit(1, 'npm install')}`;
    const e404 = (name: string) =>
      `npm ERR! code E404\nnpm ERR! 404 Not Found - GET https://registry.npmjs.org/${name} - Not found\nnpm ERR! 404  '${name}@^4.18.2' is not in this registry.\n${exit(1, 'npm install')}`;

    it('a name that exists with no such version: the name is the likely fault', () => {
      expect(explainBuildFailure('RUN npm install', etarget('expres', '^4.18.2'), { knownNames: ['express'] })).toBe(
        'the build failed at step "RUN npm install": no published version of "expres" matches "^4.18.2" in the npm registry: "expres" is possibly a misspelling of "express", which the source uses; fix the name (or the version) in package.json',
      );
    });

    it('a name the registry does not have', () => {
      expect(explainBuildFailure('RUN npm install', e404('expresss'), { knownNames: ['cors', 'express'] })).toMatch(
        /the dependency "expresss" was not found in the npm registry \(did you mean "express"\? the source uses that name\); check its name/,
      );
    });

    it('nothing close among the names: the version, or the name, as before', () => {
      expect(
        explainBuildFailure('RUN npm install', etarget('express', '99.0.0'), { knownNames: ['express', 'cors'] }),
      ).toBe(
        'the build failed at step "RUN npm install": no published version of "express" matches "99.0.0" in the npm registry; change the version in package.json',
      );
      expect(explainBuildFailure('RUN npm install', e404('left-padd'), { knownNames: ['react'] })).not.toMatch(
        /did you mean/,
      );
    });
  });

  it('never quotes what it does not recognise: the raw text stays in the build log', () => {
    const message = explainBuildFailure(
      'RUN ./configure',
      'error at /var/lib/docker/overlay2/abc/merged: SECRET=hunter2',
    );
    expect(message).toBe('the build failed at step "RUN ./configure": the step failed; its output is in the build log');
  });
});
