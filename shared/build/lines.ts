/**
 * Reassembles lines from output that arrives in arbitrary pieces. The engine forwards a build step's output
 * as the process wrote it: npm writes "npm", " ERR!", " 404" as separate writes, and the log (read by people
 * and agents, and searched) should hold "npm ERR! 404 …" as one line.
 */
export function lineAssembler(emit: (line: string) => void, maxLine = 4000) {
  let partial = '';
  const out = (line: string) => {
    // A lone carriage return redraws the line on a terminal (progress bars): keep what it ended showing.
    const shown = line.slice(line.lastIndexOf('\r') + 1);
    if (shown.trim()) emit(shown.replace(/\s+$/, ''));
  };
  return {
    push(text: string) {
      const pieces = `${partial}${text}`.replace(/\r\n/g, '\n').split('\n');
      partial = pieces.pop() ?? '';
      for (const p of pieces) out(p);
      // A writer that never ends its line still gets its text into the log, in bounded pieces.
      while (partial.length > maxLine) {
        out(partial.slice(0, maxLine));
        partial = partial.slice(maxLine);
      }
    },
    /** Emits what is left: the end of the stream ends the last line. */
    end() {
      const rest = partial;
      partial = '';
      out(rest);
    },
  };
}
