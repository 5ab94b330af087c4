/**
 * Node flags of the api and worker processes (`npm start`, the benches; the image sets the same in NODE_OPTIONS).
 * V8 grows its young generation up to 16 MB per semi-space (two of them) while modules load and never gives it
 * back: capped at 4 MB, a process at rest holds about 30 MB less (api 189 → 162 MB here, the same flags otherwise),
 * at the price of a scavenge every 4 MB allocated instead of every 16.
 */
export const SERVICE_NODE_FLAGS = ['--max-semi-space-size=4'];
