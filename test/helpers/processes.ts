import type Docker from 'dockerode';

/** The user ID of every process running in a container, as the engine lists them (`docker top`). */
export async function processUids(docker: Docker, containerId: string): Promise<number[]> {
  const top = (await docker.getContainer(containerId).top({ ps_args: '-o pid,uid' })) as {
    Titles: string[];
    Processes: string[][];
  };
  const column = top.Titles.indexOf('UID');
  if (column < 0) throw new Error(`docker top listed no UID column: ${top.Titles.join(', ')}`);
  return top.Processes.map((p) => Number(p[column]));
}
