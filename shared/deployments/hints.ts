/**
 * Why a deployment did not come up, in the words an agent or a person acts on: one table of causes, each with the
 * facts it needs. The provider decides the cause from what the engine saw; everything that shows
 * a hint (the deployment's error, lastFailure, MCP's diagnose) reads it from here.
 */
export type FailureCause =
  | { cause: 'out_of_memory'; memoryMb?: number }
  | { cause: 'app_exited'; exitCode?: number }
  | { cause: 'missing_module'; language: 'node' | 'python'; module: string }
  | { cause: 'missing_file'; file: string }
  | { cause: 'wrong_port'; port: number; listening: number[] }
  | { cause: 'loopback_only'; port: number }
  | { cause: 'port_never_opened'; port: number; timeoutS?: number }
  | { cause: 'not_http'; port: number }
  | { cause: 'image_missing'; image?: string }
  | { cause: 'registry_unreachable'; registry: string }
  | { cause: 'build_failed'; step?: string }
  | { cause: 'unknown' };

type Hints = { [C in FailureCause['cause']]: (facts: Extract<FailureCause, { cause: C }>) => string };

const HINTS: Hints = {
  out_of_memory: ({ memoryMb }) =>
    `The app ran out of memory and was killed${memoryMb ? ` at the plan’s limit of ${memoryMb} MB` : ''}: lower its memory use, or move to a plan with more memory.`,
  app_exited: ({ exitCode }) =>
    `The app exited${exitCode !== undefined ? ` with code ${exitCode}` : ''} as it started: read its last log lines (often a missing environment variable or file), fix the cause and redeploy.`,
  missing_module: ({ language, module }) =>
    language === 'node'
      ? `The app needs the package "${module}", which is not installed: add it to "dependencies" in package.json and deploy again.`
      : `The app imports the module "${module}", which is not installed: add the package that provides it to requirements.txt (or pyproject.toml’s dependencies) and deploy again.`,
  missing_file: ({ file }) =>
    `The app tried to load ${file}, which is not in the image: check the start command (the "start" script or "main" in package.json) and that the file is in the source, then deploy again.`,
  wrong_port: ({ port, listening }) =>
    `The app listens on port ${listening.join(', ')}, but the deployment says ${port}: deploy again with port ${listening[0]}, or make the app listen on ${port}.`,
  loopback_only: ({ port }) =>
    `The app listens on 127.0.0.1:${port} only, which nothing outside its container can reach: make it listen on 0.0.0.0:${port}.`,
  port_never_opened: ({ port, timeoutS }) =>
    `Nothing listened on port ${port}${timeoutS ? ` within ${timeoutS} s` : ''}: check that the app starts a server on that port (0.0.0.0, not 127.0.0.1), or set the deployment’s port to the one it uses.`,
  not_http: ({ port }) =>
    `Port ${port} accepts connections but does not answer HTTP: the deployment’s port must serve plain HTTP (not TLS or another protocol).`,
  image_missing: ({ image }) =>
    `The image${image ? ` ${image}` : ''} is not on the engine and cannot be pulled: check its name and tag, or push it to a registry the engine can reach.`,
  registry_unreachable: ({ registry }) =>
    `The registry ${registry} could not be reached from the engine, so the image could not be pulled: check the registry’s address, or deploy from source or an image already on the engine; if the registry should be reachable, this installation’s network is at fault.`,
  build_failed: ({ step }) =>
    `The build failed${step ? ` at step "${step}"` : ''}: read the build log (stream build), fix the source and deploy again.`,
  unknown: () => 'Read the deployment’s logs for the cause, fix it and deploy again.',
};

export function hintFor(cause: FailureCause): string {
  return (HINTS[cause.cause] as (facts: FailureCause) => string)(cause);
}
