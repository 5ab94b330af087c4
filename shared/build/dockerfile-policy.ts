import { DockerfileParser, type Instruction } from 'dockerfile-ast';

/** A Dockerfile we will not hand to the engine; the message says what to change. */
export class DockerfileRefusedError extends Error {
  override name = 'DockerfileRefusedError';
}

/** An image the build would make the engine read: it must be one the organisation may use. */
export interface ImageUse {
  ref: string;
  /** 1-based line, for the message. */
  line: number;
  instruction: string;
}

export const REMOTE_ADD_REFUSED =
  'ADD from a URL is not allowed in Slipway builds; download it in a RUN step or add the file to the source';

// What the engine's classic builder fetches itself (urlutil.IsURL / IsGitURL), from the host's own network,
// where the stack's services listen: never let it.
const REMOTE_SOURCE = /^([a-z][a-z0-9+.-]*:\/\/|git@|github\.com\/)/i;

/**
 * Reads a Dockerfile with a real parser and returns every image its build would use (FROM, COPY --from, RUN
 * --mount from=, and the same in ONBUILD triggers), after resolving global ARGs in FROM; stage names and
 * indexes are not images. Refuses what the engine would fetch from the network itself (remote ADD) and what
 * cannot be resolved before the build starts (a FROM or --from whose variables have no value here).
 */
export function inspectDockerfile(text: string): ImageUse[] {
  const dockerfile = DockerfileParser.parse(text);
  const escape = dockerfile.getEscapeCharacter();
  const globals = new Map<string, string>();
  for (const arg of dockerfile.getInitialARGs()) {
    const p = arg.getProperty();
    // No build arguments are passed to Slipway builds: an ARG without a default is empty.
    if (p) globals.set(p.getName(), expand(p.getValue() ?? '', globals, escape) ?? '');
  }
  const stages: string[] = [];
  const images: ImageUse[] = [];
  const use = (ref: string, ins: Instruction, keyword: string) =>
    images.push({ ref, line: ins.getRange().start.line + 1, instruction: keyword });

  const check = (ins: Instruction, trigger: boolean) => {
    const keyword = ins.getKeyword();
    const where = `line ${ins.getRange().start.line + 1} (${keyword}${trigger ? ' in ONBUILD' : ''})`;
    if (keyword === 'FROM' && !trigger) {
      const args = ins.getArguments().map((a) => a.getValue());
      const at = args.findIndex((a) => !a.startsWith('--'));
      const image = args[at];
      if (image === undefined) throw new DockerfileRefusedError(`${where}: FROM names no image`);
      const ref = expand(image, globals, escape);
      if (ref === undefined || ref === '' || ref.includes('$')) {
        throw new DockerfileRefusedError(
          `${where}: the image "${image}" uses a variable with no value here; give the ARG before the first FROM a default value, or write the image out`,
        );
      }
      // A FROM naming an earlier stage is that stage; only the others are images.
      if (ref.toLowerCase() !== 'scratch' && !stages.includes(ref.toLowerCase())) use(ref, ins, 'FROM');
      stages.push(args[at + 1]?.toLowerCase() === 'as' ? (args[at + 2]?.toLowerCase() ?? '') : '');
      return;
    }
    if (keyword === 'ADD') {
      const sources = addSources(ins);
      for (const src of sources) {
        if (REMOTE_SOURCE.test(src)) throw new DockerfileRefusedError(`${where}: ${REMOTE_ADD_REFUSED}`);
        // The engine expands these with the base image's ENV too, which we cannot see here.
        if (src.includes('$')) {
          throw new DockerfileRefusedError(
            `${where}: ADD sources may not use variables in Slipway builds; write the path out (or use COPY)`,
          );
        }
      }
    }
    for (const from of fromFlags(ins)) {
      if (from.includes('$')) {
        throw new DockerfileRefusedError(`${where}: --from may not use variables; name the stage or image`);
      }
      const isStage = /^\d+$/.test(from) || (!trigger && stages.includes(from.toLowerCase()));
      if (!isStage) use(from, ins, keyword);
    }
    if (keyword === 'ONBUILD' && !trigger) {
      const triggered = (ins as unknown as { getTriggerInstruction(): Instruction | null }).getTriggerInstruction();
      if (triggered) check(triggered, true);
    }
  };

  for (const ins of dockerfile.getInstructions()) check(ins, false);
  return images;
}

/** Checks one ONBUILD trigger of a base image (as `docker inspect` lists them) by the same rules. */
export function inspectOnbuildTrigger(trigger: string): ImageUse[] {
  return inspectDockerfile(`FROM scratch\nONBUILD ${trigger.replace(/\n/g, ' ')}\n`);
}

/** ADD's sources: every argument but the flags and the destination, JSON form included. */
function addSources(ins: Instruction): string[] {
  const content = (ins.getArgumentsContent() ?? '').trim();
  let args: string[];
  if (content.startsWith('[')) {
    try {
      const parsed = JSON.parse(content) as unknown;
      args = Array.isArray(parsed) ? parsed.map(String) : [content];
    } catch {
      // Not valid JSON: Docker reads it as the shell form, and so does this.
      args = ins.getArguments().map((a) => a.getValue());
    }
  } else {
    args = ins.getArguments().map((a) => a.getValue());
  }
  // Flags (--chown, --chmod …) come first in the shell form; in either form, the destination is last.
  const withoutFlags = args.filter(
    (a, i) => !(a.startsWith('--') && args.slice(0, i).every((b) => b.startsWith('--'))),
  );
  return withoutFlags.slice(0, -1);
}

/** Values of `--from=` on COPY and of `from=` in RUN --mount options. */
function fromFlags(ins: Instruction): string[] {
  const keyword = ins.getKeyword();
  const flags = (ins as unknown as { getFlags?: () => FlagLike[] }).getFlags?.() ?? [];
  const out: string[] = [];
  for (const f of flags) {
    const name = f.getName().toLowerCase();
    if (name === 'from' && keyword === 'COPY') out.push(f.getValue() ?? '');
    if (name === 'mount') {
      for (const o of f.getOptions()) if (o.getName().toLowerCase() === 'from') out.push(o.getValue() ?? '');
    }
  }
  // A flag without a value (`--from`, `from=`) is refused by the engine; an empty ref is no image to check.
  return out.filter((v) => v !== '');
}

interface FlagLike {
  getName(): string;
  getValue(): string | null;
  getOptions(): { getName(): string; getValue(): string | null }[];
}

/**
 * Expands `$NAME`, `${NAME}`, `${NAME:-word}` and `${NAME:+word}` as the engine does for FROM, with `vars`
 * only. Any other form returns undefined (refused): we must know the image before the engine does.
 */
export function expand(text: string, vars: Map<string, string>, escape = '\\'): string | undefined {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === escape && i + 1 < text.length) {
      out += text[++i];
      continue;
    }
    if (c !== '$') {
      out += c;
      continue;
    }
    const simple = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i + 1));
    if (simple) {
      out += vars.get(simple[0]) ?? '';
      i += simple[0].length;
      continue;
    }
    const braced = /^\{([A-Za-z_][A-Za-z0-9_]*)(?:(:[-+])([^}]*))?\}/.exec(text.slice(i + 1));
    if (!braced) return undefined;
    const [whole, name, op, word] = braced;
    const value = vars.get(name!) ?? '';
    if (op === ':-') {
      const w = value === '' ? expand(word!, vars, escape) : value;
      if (w === undefined) return undefined;
      out += w;
    } else if (op === ':+') {
      const w = value === '' ? '' : expand(word!, vars, escape);
      if (w === undefined) return undefined;
      out += w;
    } else out += value;
    i += whole.length;
  }
  return out;
}
