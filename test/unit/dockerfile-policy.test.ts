import {
  DockerfileRefusedError,
  inspectDockerfile,
  inspectOnbuildTrigger,
  REMOTE_ADD_REFUSED,
} from '@shared/build/dockerfile-policy';

const refs = (text: string) => inspectDockerfile(text).map((u) => `${u.instruction} ${u.ref}`);
const refused = (text: string, why: string | RegExp) => {
  expect(() => inspectDockerfile(text)).toThrow(DockerfileRefusedError);
  expect(() => inspectDockerfile(text)).toThrow(why);
};

describe('inspectDockerfile', () => {
  it('lists the images a build uses, not its own stages', () => {
    expect(
      refs(
        [
          'FROM node-base:20 AS deps',
          'RUN npm ci',
          'FROM --platform=linux/amd64 scratch',
          'FROM Deps AS build',
          'COPY --from=deps /a /a',
          'COPY --from=0 /a /b',
          'COPY --from=tools:1 /bin/x /x',
          'RUN --mount=type=bind,from=cache-img:2,target=/c true',
          'FROM build',
          'ADD app.tar.gz /srv/',
          'ADD --chown=1:1 ["a b.txt", "/x/"]',
        ].join('\n'),
      ),
    ).toEqual(['FROM node-base:20', 'COPY tools:1', 'RUN cache-img:2']);
  });

  it("resolves FROM's global ARGs with their defaults and ${X:-y}, and refuses what has no value", () => {
    expect(refs('ARG BASE=slipway/abc:1\nARG TAG\nFROM ${BASE}\nFROM img:${TAG:-2}\nFROM $BASE-x')).toEqual([
      'FROM slipway/abc:1',
      'FROM img:2',
      'FROM slipway/abc:1-x',
    ]);
    refused('ARG BASE\nFROM ${BASE}', /line 2 \(FROM\).*uses a variable with no value/);
    refused('FROM ${UNDECLARED}', /no value/);
    refused('ARG B=x\nFROM ${B/x/y}', /no value/);
    // A stage's own ARGs do not reach the next FROM.
    refused('FROM a:1\nARG LATER=b:1\nFROM ${LATER}', /no value/);
  });

  it('honours the escape directive when resolving FROM', () => {
    expect(refs('# escape=`\nARG B=x:1\nFROM ${B}')).toEqual(['FROM x:1']);
  });

  it('refuses ADD from a URL in every spelling, with the reason', () => {
    for (const add of [
      'ADD http://127.0.0.1:8233/api/v1/namespaces/default/workflows /h.json',
      'ADD HTTPS://example.com/x /x',
      'add --chown=1 http://x/y /y',
      'ADD ["http://169.254.169.254/latest/meta-data", "/m"]',
      'ADD ok.txt http://x/y /dest/',
      'ADD git@github.com:a/b.git /src',
      'ADD git://example.com/r.git /src',
      'ADD \\\n  http://x/y \\\n  /y',
    ]) {
      refused(`FROM a:1\n${add}`, REMOTE_ADD_REFUSED);
    }
    refused('FROM a:1\nONBUILD ADD http://x/y /y', /ONBUILD.*ADD from a URL is not allowed/);
  });

  it('refuses variables in ADD sources, which the base image could point anywhere', () => {
    refused('FROM a:1\nENV U=http://127.0.0.1/\nADD $U /x', /ADD sources may not use variables/);
    refused('FROM a:1\nADD ${U:-x} /x', /ADD sources may not use variables/);
    expect(refs('FROM a:1\nARG D=/x\nADD f.txt $D')).toEqual(['FROM a:1']);
  });

  it('refuses --from with a variable, and checks --from in ONBUILD triggers as images', () => {
    refused('FROM a:1 AS s\nCOPY --from=$S /a /b', /--from may not use variables/);
    expect(refs('FROM a:1 AS s\nONBUILD COPY --from=s /a /b')).toEqual(['FROM a:1', 'COPY s']);
  });

  it("checks a base image's ONBUILD triggers by the same rules", () => {
    expect(() => inspectOnbuildTrigger('ADD http://127.0.0.1:7243/x /x')).toThrow(REMOTE_ADD_REFUSED);
    expect(inspectOnbuildTrigger('COPY --from=other:1 /a /b').map((u) => u.ref)).toEqual(['other:1']);
    expect(inspectOnbuildTrigger('RUN echo hi')).toEqual([]);
  });
});
