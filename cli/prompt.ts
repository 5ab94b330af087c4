import readline from 'node:readline';

/** One line from the person at the terminal (or the first line of a pipe). Null at end of input. */
export function ask(question: string): Promise<string | null> {
  const rl = readline.createInterface({
    input: process.stdin,
    output: process.stderr,
    terminal: !!process.stdin.isTTY,
  });
  return new Promise((resolve) => {
    let answered = false;
    rl.question(question, (answer) => {
      answered = true;
      rl.close();
      resolve(answer.trim());
    });
    rl.once('close', () => {
      if (!answered) resolve(null);
    });
  });
}

/** Like ask, with nothing echoed: a token typed at the terminal never lands in its scrollback. */
export function askSecret(question: string): Promise<string | null> {
  const stdin = process.stdin;
  if (!stdin.isTTY) return ask('');
  process.stderr.write(question);
  stdin.setRawMode(true);
  stdin.resume();
  stdin.setEncoding('utf8');
  return new Promise((resolve) => {
    let value = '';
    const done = (result: string | null) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.removeListener('data', onData);
      process.stderr.write('\n');
      resolve(result);
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') return done(value.trim());
        if (ch === '\u0003' || ch === '\u0004') return done(null); // Ctrl-C, Ctrl-D
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else if (ch >= ' ') value += ch;
      }
    };
    stdin.on('data', onData);
  });
}
